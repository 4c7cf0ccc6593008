"""Annotator pages: queue, instructions, the page of each kind of item (kinds/).

Blinding is decided here, not in templates: the context holds only the texts an
annotator may see (never system names, other people's answers or verdicts).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from .. import hiring, kinds
from ..forms import AnswerForm, SkipForm
from ..kinds import answer_form
from ..models import Assignment, Item, Membership, Project, visible_projects
from ..operations import (
    WITHDRAWN,
    WITHDRAWN_MESSAGE,
    Action,
    Outcome,
    Result,
    answer,
    retry_waiting,
)
from . import hiring as hiring_views
from .common import HtmxRequest, assignment_for_annotator, membership_for

NEWER_DRAFT = (
    "Draft NOT saved: a newer draft of this item was saved in another tab or window. "
    "Reload this page to continue from it."
)


@login_required
def home(request: HtmxRequest) -> HttpResponse:
    memberships = (
        Membership.objects.filter(user=request.user, project__deleted_at=None)
        .exclude(role=Membership.REMOVED)
        .exclude(role=Membership.ANNOTATOR, project__archived_at__isnull=False)
        .select_related("project")
        .order_by("project")
    )
    rows = []
    for m in memberships:
        mine = Assignment.objects.in_project(m.project).for_annotator(request.user)
        rows.append({"membership": m, "assigned": mine.count(), "done": mine.done().count()})
    return render(
        request,
        "annotation/home.html",
        {
            "rows": rows,
            "all_projects": visible_projects(request.user) if request.user.is_superuser else None,
        },
    )


def _progress(membership: Membership, statuses: list[str] | None = None) -> dict[str, int]:
    """Assigned and done in the annotator's queue; `statuses` when already read."""
    if statuses is None:
        statuses = list(_mine(membership).values_list("status", flat=True))
    assigned = len(statuses)
    done = sum(s in (Assignment.SUBMITTED, Assignment.SKIPPED) for s in statuses)
    return {
        "assigned": assigned,
        "done": done,
        "percent": round(100 * done / assigned) if assigned else 0,
    }


def _mine(membership: Membership) -> QuerySet[Assignment]:
    return Assignment.objects.filter(
        item__project_id=membership.project_id, annotator_id=membership.user_id
    )


@login_required
def queue(request: HtmxRequest, project_id: int) -> HttpResponse:
    membership = membership_for(request, project_id, Membership.ANNOTATOR)
    assignments = (
        Assignment.objects.in_project(membership.project)
        .for_annotator(request.user)
        .select_related("item__document", "item__claim")
    )
    rows = [(a, kinds.get(a.item.kind).queue_text(a.item)) for a in assignments]
    held = sorted({a.item.kind for a, _ in rows})  # the kinds this person holds
    kind = request.GET.get("kind", "")
    wanted = {kind} if kind in held else set(held)  # a kind chosen, or every kind
    shown = [r for r in rows if r[0].item.kind in wanted]
    return render(
        request,
        "annotation/queue.html",
        {
            "membership": membership,
            "project": membership.project,
            "rows": shown,
            "first": rows[0][0] if rows else None,
            "kinds": held if len(held) > 1 else [],
            "kind": kind if kind in held else "",
            "progress": _progress(membership, [a.status for a, _ in rows]),
            # a hire who may get no more items (screened out, returned, paused) is not
            # offered "Next item": the link says why instead
            "held": hiring.blocked(membership) if hiring.hire_of(membership) else None,
        },
    )


@login_required
def instructions(request: HtmxRequest, project_id: int) -> HttpResponse:
    membership = membership_for(request, project_id, Membership.ANNOTATOR)
    if request.method == "POST":
        membership.acknowledge()
        return redirect("next_item", project_id=project_id)
    # the keys of the kinds this project has (a worker reads them before any item is theirs)
    present = set(
        Item.objects.filter(project=membership.project)
        .order_by()
        .values_list("kind", flat=True)
        .distinct()
    )
    return render(
        request,
        "annotation/instructions.html",
        {
            "membership": membership,
            "project": membership.project,
            "kind_specs": [spec for spec in kinds.all_specs() if spec.name in present],
            "examples": _examples(membership.project),
        },
    )


def _examples(project: Project) -> list[dict[str, str]]:
    """The project's worked examples as an annotator sees them: each item through its
    kind's view and page template, read-only, the reference answer filled in
    (hiring.examples), with the explanation."""
    rows = []
    for n, ex in enumerate(hiring.examples(project), start=1):
        spec = kinds.get(ex.item.kind)
        form = spec.form(ex.item, None, AnswerForm.initial_from(ex.answers))
        idp = f"example-{n}-"  # ids stay unique with several items on the page
        form.auto_id = idp + "id_%s"
        context = {
            "project": project,
            "document": ex.item.document,
            "form": form,
            "example": f"Example {n}: the reference answer",
            "idp": idp,
            **spec.page_context(kinds.view(ex.shown), form),
        }
        html = render_to_string(spec.template + "#item", context)
        rows.append({"title": spec.title, "html": html, "explanation": ex.explanation})
    return rows


@login_required
def next_item(request: HtmxRequest, project_id: int) -> HttpResponse:
    membership = membership_for(request, project_id, Membership.ANNOTATOR)
    if not membership.has_acknowledged:
        return redirect("instructions", project_id=project_id)
    if (held := hiring_views.gate(request, membership)) is not None:
        return held
    mine = Assignment.objects.in_project(membership.project).for_annotator(request.user)
    upcoming = mine.open().first()
    if upcoming is None and retry_waiting(project_id):  # items adaptive overlap held back
        upcoming = mine.open().first()
    if upcoming is None:
        if (done := hiring_views.finished(request, membership)) is not None:
            return done
        messages.success(request, "Your queue is finished. Thank you!")
        return redirect("queue", project_id=project_id)
    return redirect("assignment", assignment_id=upcoming.pk)


def _context(assignment: Assignment, membership: Membership, form: AnswerForm) -> dict[str, object]:
    item = assignment.item
    # One query for the queue: the previous and next items and the progress.
    queue = list(_mine(membership).values_list("id", "status"))
    ids = [pk for pk, _ in queue]
    i = ids.index(assignment.pk)
    context: dict[str, object] = {
        "assignment": assignment,
        "project": item.project,
        "document": item.document,
        "form": form,
        "skip_form": SkipForm(initial={"reason": assignment.skip_reason}),
        "progress": _progress(membership, [status for _, status in queue]),
        "prev_id": ids[i - 1] if i > 0 else None,
        "next_id": ids[i + 1] if i + 1 < len(ids) else None,
        "idle_seconds": settings.IDLE_SECONDS,
    }
    # Only what the kind's view lets annotators see: texts, never ClaimList or System
    # objects, never verdicts.
    spec = kinds.get(item.kind)
    context.update(spec.page_context(kinds.view(assignment), form), kind_keys=spec.keys)
    return context


def _gone_said(view: Callable[[HtmxRequest, int], HttpResponse]) -> Callable[..., HttpResponse]:
    """An answer posted to an item not in the queue (withdrawn meanwhile, or never theirs:
    one answer for both, 404) is told that nothing was saved, never dropped silently."""

    @wraps(view)
    def wrapped(request: HtmxRequest, assignment_id: int) -> HttpResponse:
        try:
            return view(request, assignment_id)
        except Http404:
            if request.method != "POST" or request.htmx:
                raise
            return render(
                request, "annotation/not_in_queue.html", {"message": WITHDRAWN_MESSAGE}, status=404
            )

    return wrapped


@login_required
@_gone_said
def assignment_page(request: HtmxRequest, assignment_id: int) -> HttpResponse:
    assignment = assignment_for_annotator(request, assignment_id)
    project = assignment.item.project
    membership = membership_for(request, project.pk, Membership.ANNOTATOR)
    if not membership.has_acknowledged:
        return redirect("instructions", project_id=project.pk)
    if hiring.blocked(membership, assignment):
        return redirect("next_item", project_id=project.pk)
    template = kinds.get(assignment.item.kind).template

    if request.method != "POST":
        context = _context(assignment, membership, answer_form(assignment))
        context["page_token"] = assignment.open_page().token
        return render(request, template, context)

    # Active time is what the page measured (keys.js); opening or posting adds none.
    page_token = request.POST.get("page", "")
    assignment.record_page_time(page_token, request.POST.get("seconds"))
    action = request.POST.get("action", "submit")
    if action not in (Action.DRAFT, Action.SKIP):
        action = Action.RESUBMIT if request.POST.get("editing") == "1" else Action.SUBMIT
    outcome = answer(assignment, membership, request.POST, Action(action), touch=False)
    if outcome.result == Result.REFUSED:
        if outcome.reason == WITHDRAWN:
            messages.error(request, WITHDRAWN_MESSAGE)
        return redirect("next_item", project_id=project.pk)
    if outcome.stored and action != Action.DRAFT:  # an unchanged one is a double click
        return _go_next(request, project.pk, hiring_views.after_answer(assignment))

    if action == Action.DRAFT:
        return _draft_response(request, assignment, outcome)

    if action == Action.SKIP:
        skip_form = outcome.form
        assert skip_form is not None
        if outcome.result == Result.CONFLICT:
            skip_form.add_error(
                None,
                "This item was already submitted (in another tab or window): it cannot be skipped.",
            )
        if request.htmx:
            return render(
                request,
                "annotation/_skip.html",
                {"assignment": assignment, "skip_form": skip_form, "refused": True},
            )
        messages.error(request, "Say why you skip this item.")
        return redirect("assignment", assignment_id=assignment.pk)

    form = outcome.form
    assert isinstance(form, AnswerForm)
    status = 200
    if outcome.result == Result.CONFLICT:
        # Submitted meanwhile by another tab or a double click: keep these answers on
        # screen, say so, store nothing (the API answers 409 in the same case).
        status = 409
        form.add_error(
            None,
            "This item was already submitted (in another tab, window or by a double "
            "click); the answers on this page were NOT stored. Reload the page to see "
            "the stored answers and change them with “Save changes”.",
        )
    context = _context(assignment, membership, form)
    context.update(refused=True, page_token=page_token)
    if request.htmx:
        return render(request, template + "#answer-form", context, status=status)
    context["page_token"] = page_token or assignment.open_page().token
    return render(request, template, context, status=status)


def _draft_response(request: HtmxRequest, assignment: Assignment, outcome: Outcome) -> HttpResponse:
    """What the page gets back for a draft: the draft status (htmx; 409 when another tab
    holds a newer draft), a 400 for a numbering that is not the page's own, else the page."""
    if outcome.result == Result.INVALID:  # not the page's own numbering
        assert outcome.form is not None
        return HttpResponse(
            " ".join(map(str, outcome.form.non_field_errors())),
            status=400,
            content_type="text/plain",
        )
    newer = NEWER_DRAFT if outcome.reason == "newer_draft" else ""
    if request.htmx:
        return render(
            request,
            "annotation/_draft_status.html",
            {
                "assignment": assignment,
                "saved": outcome.stored,
                "newer": newer,
                "restored": request.POST.get("restored") == "1",
            },
            status=409 if newer else 200,
        )
    if newer:
        messages.error(request, newer)
    return redirect("assignment", assignment_id=assignment.pk)


def _go_next(request: HtmxRequest, project_id: int, url: str | None = None) -> HttpResponse:
    url = url or reverse("next_item", kwargs={"project_id": project_id})
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


@login_required
@require_POST
def heartbeat(request: HtmxRequest, assignment_id: int) -> HttpResponse:
    """Sent by the page while the annotator is active, and when it is hidden or left:
    the page instance's token and the active seconds it measured so far."""
    assignment = assignment_for_annotator(request, assignment_id)
    if not assignment.record_page_time(request.POST.get("page", ""), request.POST.get("seconds")):
        return HttpResponse(
            "Unknown page instance or bad seconds.", status=400, content_type="text/plain"
        )
    return HttpResponse(status=204)
