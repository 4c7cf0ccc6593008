"""A release imported into a new project (the `release` import format): the same items,
the answers under the release's pseudonyms as placeholder annotators (inactive accounts
that cannot log in), the training, check and example items with their references, and
the adjudicated gold values as adjudications. A release of the imported project holds
the same tables as the release it came from."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from pipeline.dataformats import release as release_format
from pipeline.dataformats.common import ImportFailed, LineError

from .. import gold, hiring
from ..ingest import save_records
from ..models import (
    Adjudication,
    Answer,
    Assignment,
    Claim,
    ClaimList,
    Item,
    Membership,
    Project,
    bump_data_version,
)
from .tables import REGULAR

PLACEHOLDER = "release-{project}-{pseudonym}"  # the username of a release's annotator


@dataclass
class LoadSummary:
    documents: int = 0
    items: int = 0
    annotators: int = 0
    answers: int = 0
    adjudications: int = 0
    warnings: list[LineError] = field(default_factory=list)

    def __str__(self) -> str:
        text = (
            f"release: {self.documents} documents, {self.items} items, {self.annotators} "
            f"annotators (placeholders), {self.answers} answers, {self.adjudications} "
            "adjudications"
        )
        return text + "".join(f"\n  warning: {w}" for w in self.warnings)


def _refuse(message: str) -> ImportFailed:
    return ImportFailed([LineError(release_format.NAME, 0, "", message)])


def _items(project: Project, rows: list[dict[str, Any]]) -> dict[int, Item]:
    """The release's items, made in its order (so a release of them numbers them alike)."""
    docs = {d.external_id: d.pk for d in project.documents.all()}
    lists = {
        (doc, system): pk
        for pk, doc, system in ClaimList.objects.filter(document__project=project).values_list(
            "pk", "document__external_id", "system__name"
        )
    }
    claims = {
        (doc, system, position): pk
        for pk, doc, system, position in Claim.objects.filter(
            claim_list__document__project=project
        ).values_list(
            "pk", "claim_list__document__external_id", "claim_list__system__name", "position"
        )
    }
    made = {}
    for r in sorted(rows, key=lambda r: r["item"]):
        doc = r["document"]
        made[r["item"]] = Item.objects.create(
            project=project,
            kind=r["kind"],
            document_id=docs[doc],
            claim_id=claims[(doc, r["claim_system"], r["claim_position"])]
            if r["claim_system"] is not None
            else None,
            list_a_id=lists[(doc, r["list_a_system"])] if r.get("list_a_system") else None,
            list_b_id=lists[(doc, r["list_b_system"])] if r.get("list_b_system") else None,
        )
        if r["role"] != REGULAR:
            hiring.QualityItem.objects.create(
                item=made[r["item"]],
                role=r["role"],
                reference=json.loads(r.get("reference") or "{}"),
                explanation=r.get("explanation") or "",
            )
    return made


def _annotators(project: Project, rows: list[dict[str, Any]]) -> dict[str, User]:
    """A placeholder account per pseudonym, a member under that very pseudonym."""
    users = {}
    for pseudonym in sorted({r["annotator"] for r in rows}, key=lambda p: (len(p), p)):
        user = User(username=PLACEHOLDER.format(project=project.pk, pseudonym=pseudonym))
        user.is_active = False
        user.set_unusable_password()
        user.save()
        membership = project.add_member(user, Membership.ANNOTATOR)
        Membership.objects.filter(pk=membership.pk).update(pseudonym=pseudonym)
        users[pseudonym] = user
    return users


def _answers(items: dict[int, Item], users: dict[str, User], rows: list[dict[str, Any]]) -> int:
    now = timezone.now()
    assignments: dict[tuple[int, str], Assignment] = {}
    for r in rows:
        key = (r["item"], r["annotator"])
        if key not in assignments:
            assignments[key] = Assignment(
                item=items[r["item"]],
                annotator=users[r["annotator"]],
                position=len(assignments),
                status=Assignment.SUBMITTED,
                swapped=bool(r["presented_swapped"]),
                guideline_version=r.get("guideline_version"),
                active_seconds=r.get("active_seconds") or 0.0,
                started_at=now,
                submitted_at=now,
            )
    Assignment.objects.bulk_create(assignments.values())
    answers = [
        Answer(
            assignment=assignments[(r["item"], r["annotator"])],
            unit=r["unit"],
            field=r["field"],
            value=r["value_as_stored"],
        )
        for r in rows
    ]
    Answer.objects.bulk_create(answers)
    return len(answers)


def import_release(project: Project, source: Path, *, user: User | None = None) -> LoadSummary:
    """Import a release (folder or zip) into `project`, which must hold no document yet.
    All or nothing; ImportFailed names the file and line of what is wrong."""
    data = release_format.read(source)
    if project.documents.exists() or project.items.exists():
        raise _refuse("a release imports into a new project (this one has documents)")
    with transaction.atomic():
        imported = save_records(
            project=project,
            records=data.documents,
            fmt=release_format.NAME,
            file=str(source),
            systems=data.systems,
        )
        items = _items(project, data.items)
        users = _annotators(project, data.annotations)
        summary = LoadSummary(
            documents=imported.documents_created,
            items=len(items),
            annotators=len(users),
            answers=_answers(items, users, data.annotations),
            warnings=data.warnings,
        )
        adjudicated = [
            Adjudication(
                item=items[r["item"]],
                unit=r["unit"],
                field=r["field"],
                value=r["value_code"],
                note=r["note"] or "",
                by=user,
            )
            for r in data.gold
            if r["decided_by"] == gold.ADJUDICATED
        ]
        Adjudication.objects.bulk_create(adjudicated)
        summary.adjudications = len(adjudicated)
        bump_data_version(project.pk)
    return summary
