"""Manage a running study (researchers only): remove a member, withdraw or reassign a
person's unsubmitted items, delete items or the project (a confirmation page counting
what goes), restore a deletion. The work is annotation.manage's."""

from __future__ import annotations

import datetime as dt
import re

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import manage
from ..models import Deletion, Item, Membership, Project
from .common import HtmxRequest, project_for_researcher

MAX_IDS = 100_000  # item ids in one request


def parse_ids(text: str) -> list[int]:
    """Item ids typed as "3, 4 7" (commas or spaces)."""
    parts = [p for p in re.split(r"[\s,]+", text.strip()) if p]
    if len(parts) > MAX_IDS or not all(p.isascii() and p.isdigit() and len(p) < 12 for p in parts):
        raise forms.ValidationError("Give item ids (whole numbers) separated by commas.")
    return [int(p) for p in parts]


class WithdrawForm(forms.Form):
    member = forms.TypedChoiceField(coerce=int, label="From")
    items = forms.CharField(
        required=False,
        label="Item ids",
        help_text="separated by commas; empty: all their unsubmitted items",
    )
    to = forms.TypedChoiceField(
        coerce=int,
        required=False,
        empty_value=None,
        label="Give them to",
        help_text="empty: back to the pool (the next person who needs items gets them)",
    )

    def __init__(self, project: Project, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        annotators = [
            (m.pk, m.pseudonym)
            for m in project.memberships.filter(role=Membership.ANNOTATOR).order_by("number")
        ]
        self.fields["member"].choices = annotators  # type: ignore[attr-defined]
        self.fields["to"].choices = [("", "the pool"), *annotators]  # type: ignore[attr-defined]

    def clean_items(self) -> list[int] | None:
        text = self.cleaned_data.get("items") or ""
        return parse_ids(text) if text.strip() else None


def _with_purge_dates(deletions: QuerySet[Deletion]) -> list[tuple[Deletion, dt.datetime]]:
    """Each deletion with the time it is purged after."""
    return [(d, manage.purge_after(d)) for d in deletions]


@login_required
def manage_page(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    form = WithdrawForm(project)
    if request.method == "POST":
        form = WithdrawForm(project, request.POST)
        if form.is_valid():
            data = form.cleaned_data
            member = project.memberships.get(pk=data["member"])
            to = project.memberships.get(pk=data["to"]) if data["to"] else None
            try:
                n = manage.withdraw(project, member, data["items"], to)
            except manage.ManageError as e:
                messages.error(request, str(e))
            else:
                where = f"given to {to.pseudonym}: {n['reassigned']}" if to else "back to the pool"
                messages.success(
                    request,
                    f"{member.pseudonym}: {n['withdrawn']} unsubmitted item(s) withdrawn"
                    f" ({where}); {n['kept']} submitted or skipped item(s) kept.",
                )
            return redirect("manage", project_id=project.pk)
    return render(
        request,
        "annotation/manage.html",
        {
            "project": project,
            "members": manage.members(project),
            "form": form,
            "deletions": _with_purge_dates(project.deletions.filter(whole_project=False)),
            "keep_days": settings.DELETED_KEEP_DAYS,
        },
    )


@login_required
@require_POST
def manage_archive(request: HtmxRequest, project_id: int) -> HttpResponse:
    """Archive (archived=1) or reopen (archived=0) the project; the same twice: said."""
    project = project_for_researcher(request, project_id)
    archived = request.POST.get("archived") == "1"
    if not manage.archive_project(project, archived):
        messages.info(request, "Nothing changed: the project was so already.")
    elif archived:
        messages.success(request, "Archived: closed to annotators and joins; yours as before.")
    else:
        messages.success(request, "Reopened: annotators and invite links work again.")
    return redirect("manage", project_id=project.pk)


@login_required
@require_POST
def manage_remove(request: HtmxRequest, project_id: int, membership_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    member = get_object_or_404(Membership, project=project, pk=membership_id)
    try:
        freed = manage.remove_member(member, request.user)
    except manage.ManageError as e:
        messages.error(request, str(e))
    else:
        messages.success(
            request,
            f"{member.pseudonym} removed: {freed} unsubmitted item(s) back to the pool; their"
            " submitted answers stay, marked as a removed member's.",
        )
    return redirect("manage", project_id=project.pk)


@login_required
def manage_delete(request: HtmxRequest, project_id: int) -> HttpResponse:
    """The confirmation page (GET: what goes, counted), then the deletion (POST with
    confirm=yes). `items`: ids; `whole=1`: the project."""
    project = project_for_researcher(request, project_id)
    params = request.POST if request.method == "POST" else request.GET
    whole = params.get("whole") == "1"
    try:
        ids = [] if whole else parse_ids(params.get("items", ""))
    except forms.ValidationError as e:
        messages.error(request, " ".join(e.messages))
        return redirect("manage", project_id=project.pk)
    if not whole and not ids:
        messages.error(request, "Give the ids of the items to delete.")
        return redirect("manage", project_id=project.pk)
    items = Item.objects.filter(project=project, pk__in=ids)
    if request.method == "POST" and params.get("confirm") == "yes":
        return _delete(request, project, ids, whole)
    counts = manage.project_summary(project) if whole else manage.summary(items)
    return render(
        request,
        "annotation/manage_delete.html",
        {
            "project": project,
            "whole": whole,
            "ids": ", ".join(str(i) for i in items.values_list("pk", flat=True)),
            "missing": sorted(set(ids) - set(items.values_list("pk", flat=True))),
            "counts": counts,
            "keep_days": settings.DELETED_KEEP_DAYS,
        },
    )


def _delete(request: HtmxRequest, project: Project, ids: list[int], whole: bool) -> HttpResponse:
    if whole:
        manage.delete_project(project, request.user)
        messages.success(
            request,
            f"Project {project.name} deleted: restorable for {settings.DELETED_KEEP_DAYS}"
            " days from Deleted projects.",
        )
        return redirect("trash")
    deletion = manage.delete_items(project, ids, request.user)
    if deletion is None:
        messages.info(request, "Nothing to delete: those items are deleted already.")
    else:
        messages.success(
            request,
            f"{deletion.summary['items']} item(s) deleted: restorable for"
            f" {settings.DELETED_KEEP_DAYS} days below.",
        )
    return redirect("manage", project_id=project.pk)


@login_required
@require_POST
def manage_restore(request: HtmxRequest, project_id: int, deletion_id: int) -> HttpResponse:
    """Restore a deletion of a project the user researches (the project itself may be
    the deleted thing). Restored already: said, nothing changes."""
    project = get_object_or_404(
        Project.objects.for_researcher(request.user, deleted=True)
        | Project.objects.for_researcher(request.user),
        pk=project_id,
    )
    done = manage.restore(deletion_id, project)
    if done is None:
        messages.info(request, "Restored already: nothing changed.")
    elif done.whole_project:
        messages.success(request, f"Project {project.name} restored.")
    else:
        messages.success(request, f"{done.summary.get('items', 0)} item(s) restored.")
    if Project.objects.filter(pk=project.pk, deleted_at__isnull=False).exists():
        return redirect("trash")
    return redirect("manage", project_id=project.pk)


@login_required
def trash(request: HtmxRequest) -> HttpResponse:
    """The deleted projects the user researches, with their restore buttons."""
    deleted = Deletion.objects.filter(
        whole_project=True,
        project__in=Project.objects.for_researcher(request.user, deleted=True),
    ).select_related("project")
    return render(request, "annotation/trash.html", {"rows": _with_purge_dates(deleted)})
