"""The hiring page's Prolific section (issue 41): the project's workspace, and per invite
its study through Prolific's API. Every action is also possible by hand on Prolific's
web page (the manual path): the page shows the study URL to paste."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..hiring import Invite
from ..prolific import services, workspaces
from ..prolific.client import ProlificError
from ..prolific.forms import ActionForm
from ..prolific.models import ProlificSubmission
from ..prolific.urls import study_url
from .common import HtmxRequest, project_for_researcher

CONFIRMED = ("reject", "return", "release")  # a confirmation step first


@login_required
@require_POST
def prolific_workspace(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    try:
        services.set_workspace(project, request.POST.get("workspace", ""))
    except ValueError as e:
        messages.error(request, str(e))
    else:
        messages.success(request, "Prolific workspace saved.")
    return redirect(reverse("hiring", args=[project.pk]) + "#prolific")


def _done(action: str, result: Any) -> str:
    if action == "create":
        return f"Draft study {result.study_id} created on Prolific."
    if action in services.TRANSITIONS:
        return f"The study is now {result.status}."
    if action == "pull":
        return f"{result} submission(s) pulled from Prolific."
    if action == "approve":
        left = f" Left: {'; '.join(result['left'])}." if result["left"] else ""
        return f"{len(result['approved'])} submission(s) approved.{left}"
    if action == "bonus":
        left = f" Left: {'; '.join(result['left'])}." if result["left"] else ""
        paid = ", ".join(result["paid"]) or "none due"
        return f"{len(result['paid'])} bonus(es) paid: {paid}.{left}"
    if action == "reconcile":
        return (
            f"Reconciled: {result['paid']} confirmed paid, {result['void']} never sent, "
            f"{result['unconfirmed']} still unconfirmed."
        )
    if action == "release":
        return f"{result} unconfirmed bonus(es) released."
    return f"{len(result)} submission(s): {action} sent to Prolific."


@login_required
def prolific_study(request: HtmxRequest, project_id: int, invite_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    invite = get_object_or_404(Invite, project=project, pk=invite_id)
    ids = list(
        ProlificSubmission.objects.filter(study__invite=invite).values_list(
            "submission_id", flat=True
        )
    )
    form = ActionForm(request.POST or None, submission_ids=ids)
    confirm = None
    if request.method == "POST":
        if not form.is_valid():
            messages.error(request, "Not sent: " + form.errors.as_text())
            return redirect("hiring_prolific", project_id=project.pk, invite_id=invite.pk)
        params = form.params()
        try:
            result = services.act(
                invite, params["action"], params, by=request.user, url=study_url(invite, request)
            )
        except ValueError as e:
            messages.error(request, str(e))
        except ProlificError as e:
            messages.error(request, f"Prolific: {e}")
        else:
            if params["action"] in CONFIRMED and not params["confirm"]:
                confirm = {"action": params["action"], "rows": result, "params": params}
            else:
                messages.success(request, _done(params["action"], result))
        if confirm is None:
            return redirect("hiring_prolific", project_id=project.pk, invite_id=invite.pk)
    try:
        workspace = services.workspace_of(project).name
    except ValueError:
        workspace = ""
    return render(
        request,
        "annotation/hiring_prolific.html",
        {
            "project": project,
            "invite": invite,
            "state": services.state(invite),
            "confirm": confirm,
            "form": ActionForm(submission_ids=ids),
            "study_url": study_url(invite, request),
            "workspace": workspace,
            "workspaces": workspaces.choices(),
        },
    )
