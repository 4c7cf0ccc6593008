"""Managing a running study, for the page and the API alike: remove a member, withdraw
or reassign a person's unsubmitted items, delete items or a whole project (soft: hidden
everywhere, restorable for settings.DELETED_KEEP_DAYS, then purged for good).

- A removed member keeps their pseudonym and their submitted answers (marked as a
  removed member's on the manage page and the annotator page); their unsubmitted items go
  back to the pool through hiring.give_back_open, as a screened-out worker's do.
- A withdrawal takes only unsubmitted items (pending or a draft): a submission stored
  first is kept; a submission arriving after is refused (operations.answer: "withdrawn"),
  never lost silently. A reassigned item is a new, empty assignment for the other person
  (the first person's draft is never shown to another annotator).
- A deletion (`Deletion`) hides its items (Item.objects, the annotators' queues,
  hiring.regular: reports, exports, counts) or its project (every page and API) at once,
  bumps the report's data version, and is undone by `restore` until `purge`.
- A worker's personal-data deletion (hiring.erase) stays a real deletion: not this.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from . import hiring
from .models import (
    Adjudication,
    Answer,
    Assignment,
    Deletion,
    Item,
    Membership,
    Project,
    bump_data_version,
)


class ManageError(Exception):
    """What a researcher asked cannot be done; the message says why."""


def remove_member(membership: Membership, by: User) -> int:
    """Remove a member from the project: no access and no new work from now on; their
    unsubmitted items go back to the pool (hiring.give_back_open); what they submitted
    stays under their pseudonym. Returns how many items were freed. Removing someone
    removed already frees nothing and changes nothing."""
    if membership.user_id == by.pk:
        raise ManageError("You cannot remove yourself: ask another researcher.")
    with transaction.atomic():
        locked = Membership.objects.select_for_update().get(pk=membership.pk)
        if locked.role == Membership.REMOVED:
            return 0
        freed = hiring.give_back_open(locked)
        locked.role, locked.removed_at = Membership.REMOVED, timezone.now()
        locked.save(update_fields=["role", "removed_at"])
    membership.role, membership.removed_at = locked.role, locked.removed_at
    return freed


def withdraw(
    project: Project,
    membership: Membership,
    item_ids: list[int] | None = None,
    to: Membership | None = None,
) -> dict[str, int]:
    """Take `membership`'s unsubmitted items (those of `item_ids`, or all) back: to the
    pool, or given to `to` as new, empty assignments (where `to` has none for the item).
    Returns the counts: withdrawn, reassigned, kept (submitted or skipped: never taken)."""
    if to is not None and (to.pk == membership.pk or to.role != Membership.ANNOTATOR):
        raise ManageError("Reassign to another annotator of the project.")
    mine = Assignment.objects.in_project(project).filter(annotator_id=membership.user_id)
    if item_ids is not None:
        mine = mine.filter(item_id__in=item_ids)
    with transaction.atomic():
        # the rows locked: a submission in flight waits, then finds its row gone
        taken = list(mine.open().select_for_update(of=("self",)).values_list("pk", "item_id"))
        Assignment.objects.filter(pk__in=[pk for pk, _ in taken]).open().delete()
        given = _give(project, to, [item for _, item in taken]) if to is not None else 0
        if taken:
            bump_data_version(project.pk)
    kept = mine.done().count()
    return {"withdrawn": len(taken), "reassigned": given, "kept": kept}


def _give(project: Project, to: Membership, item_ids: list[int]) -> int:
    has = set(
        Assignment.objects.filter(annotator_id=to.user_id, item_id__in=item_ids).values_list(
            "item_id", flat=True
        )
    )
    start = Assignment.objects.in_project(project).filter(annotator_id=to.user_id).count()
    rng = random.Random()
    rows = [
        Assignment(
            item_id=i, annotator_id=to.user_id, position=start + n, swapped=rng.random() < 0.5
        )
        for n, i in enumerate(i for i in item_ids if i not in has)
    ]
    Assignment.objects.bulk_create(rows)
    return len(rows)


def summary(items: QuerySet[Item]) -> dict[str, int]:
    """What deleting `items` takes away (the confirmation page's counts)."""
    assignments = Assignment.objects.filter(item__in=items)
    counts = assignments.aggregate(
        open=Count("pk", filter=Q(status__in=[Assignment.PENDING, Assignment.DRAFT])),
        submitted=Count("pk", filter=Q(status=Assignment.SUBMITTED)),
        skipped=Count("pk", filter=Q(status=Assignment.SKIPPED)),
        annotators=Count("annotator", distinct=True),
    )
    return {
        "items": items.count(),
        **counts,
        "answers": Answer.objects.filter(assignment__in=assignments).count(),
        "adjudications": Adjudication.objects.filter(item__in=items).count(),
        "marked": hiring.QualityItem.objects.filter(item__in=items).count(),
    }


def delete_items(project: Project, item_ids: list[int], by: User) -> Deletion | None:
    """Delete the project's live items among `item_ids` (soft: restorable until the
    purge). None when none is left to delete (a repeated request deletes nothing)."""
    with transaction.atomic():
        items = Item.objects.select_for_update().filter(project=project, pk__in=item_ids)
        ids = list(items.values_list("pk", flat=True))
        if not ids:
            return None
        chosen = Item.objects.filter(pk__in=ids)
        deletion = Deletion.objects.create(project=project, by=by, summary=summary(chosen))
        Item.all_objects.filter(pk__in=ids).update(deletion=deletion)
        bump_data_version(project.pk)
    return deletion


def project_summary(project: Project) -> dict[str, int]:
    return {**summary(Item.objects.filter(project=project)), "members": project.memberships.count()}


def delete_project(project: Project, by: User) -> Deletion:
    """Delete the whole project (soft): gone from every page, API, queue and join link
    until restored. A project deleted already returns its deletion."""
    with transaction.atomic():
        locked = Project.objects.select_for_update().get(pk=project.pk)
        if locked.deleted_at is not None:
            return Deletion.objects.filter(project=locked, whole_project=True).first() or (
                Deletion.objects.create(project=locked, whole_project=True, by=by)
            )
        deletion = Deletion.objects.create(
            project=locked, whole_project=True, by=by, summary=project_summary(locked)
        )
        Project.objects.filter(pk=locked.pk).update(deleted_at=deletion.at)
        bump_data_version(locked.pk)
    return deletion


def archive_project(project: Project, archived: bool) -> bool:
    """Close the project to its annotators and joins (`archived`), or open it again;
    its researchers keep every page, report and export. Returns whether it changed."""
    field = "archived_at__isnull"
    changed = Project.objects.filter(pk=project.pk, **{field: archived}).update(
        archived_at=timezone.now() if archived else None
    )
    project.refresh_from_db(fields=["archived_at"])
    return bool(changed)


def restore(deletion_id: int, project: Project) -> Deletion | None:
    """Undo a deletion of `project` (its items, or the project itself). None when it is
    not there any more (restored or purged already: a repeated request changes nothing)."""
    with transaction.atomic():
        deletion = (
            Deletion.objects.select_for_update().filter(pk=deletion_id, project=project).first()
        )
        if deletion is None:
            return None
        Item.all_objects.filter(deletion=deletion).update(deletion=None)
        if deletion.whole_project:
            Project.objects.filter(pk=project.pk).update(deleted_at=None)
        deletion.delete()
        bump_data_version(project.pk)
    return deletion


def purge_before(now: dt.datetime | None = None) -> dt.datetime:
    """Deletions made before this are purged."""
    return (now or timezone.now()) - dt.timedelta(days=settings.DELETED_KEEP_DAYS)


def purge_after(deletion: Deletion) -> dt.datetime:
    """When `deletion` stops being restorable (the purge's next run deletes it)."""
    return deletion.at + dt.timedelta(days=settings.DELETED_KEEP_DAYS)


def purge(now: dt.datetime | None = None) -> dict[str, int]:
    """Delete for good what was deleted more than DELETED_KEEP_DAYS ago: a deleted
    project with everything in it; deleted items with their assignments and answers."""
    done = {"projects": 0, "items": 0}
    for deletion in Deletion.objects.filter(at__lt=purge_before(now)).order_by("pk"):
        with transaction.atomic():
            if deletion.whole_project:
                Project.objects.filter(pk=deletion.project_id, deleted_at__isnull=False).delete()
                done["projects"] += 1
            else:
                done["items"] += Item.all_objects.filter(deletion=deletion).count()
                deletion.delete()  # its items with it (Item.deletion cascades)
                bump_data_version(deletion.project_id)
    return done


def members(project: Project) -> list[dict[str, Any]]:
    """The manage page's members: each with their open and submitted items."""
    counts: dict[int, tuple[int, int]] = {
        annotator: (n_open, n_submitted)
        for annotator, n_open, n_submitted in Assignment.objects.in_project(project)
        .values("annotator")
        .annotate(
            open=Count("pk", filter=Q(status__in=[Assignment.PENDING, Assignment.DRAFT])),
            submitted=Count("pk", filter=Q(status=Assignment.SUBMITTED)),
        )
        .values_list("annotator", "open", "submitted")
    }
    return [
        {
            "membership": m,
            "open": counts.get(m.user_id, (0, 0))[0],
            "submitted": counts.get(m.user_id, (0, 0))[1],
        }
        for m in project.memberships.select_related("user").order_by("number")
    ]
