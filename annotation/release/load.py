"""A release imported into a new project (the `release` import format): the same items,
the answers under the release's pseudonyms as placeholder annotators (inactive accounts
that cannot log in), the training, check and example items with their references, and
the adjudicated gold values as adjudications, and what study.json states: the
instructions (verbatim, their version), the training and check design and the pay
(the project's hiring policy), the gold method, the hires by outcome and the card's
options (kept as `ImportedStudy`). A release of the imported project holds the same
files as the release it came from, but for croissant.json's datePublished.

The gold method: a project still at the default (majority vote, as a new project is)
takes the release's; a project whose researcher chose another method keeps it, and the
summary warns, naming both."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
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
    ImportedStudy,
    Item,
    Membership,
    Project,
    bump_data_version,
)
from .forms import ReleaseForm
from .tables import REGULAR

PLACEHOLDER = "release-{project}-{pseudonym}"  # the username of a release's annotator


@dataclass
class LoadSummary:
    documents: int = 0
    items: int = 0
    annotators: int = 0
    answers: int = 0
    adjudications: int = 0
    gold_method: str = ""  # the project's, after the import
    warnings: list[LineError] = field(default_factory=list)

    def __str__(self) -> str:
        text = (
            f"release: {self.documents} documents, {self.items} items, {self.annotators} "
            f"annotators (placeholders), {self.answers} answers, {self.adjudications} "
            "adjudications" + (f", gold method {self.gold_method}" if self.gold_method else "")
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


CARELESS_ACTIONS = ("", "pause", "screen_out")
MAX_PAY = Decimal("999999.99")  # the hiring policy's decimal places and digits


def _share(value: Any, *, optional: bool = False) -> bool:
    if value is None:
        return optional
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _amount(value: Any) -> Decimal | None:
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and 0 <= amount <= MAX_PAY else None


def _object(study: dict[str, Any], name: str) -> dict[str, Any]:
    value = study.get(name)
    return value if isinstance(value, dict) else {}


def _study_errors(study: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, what is wrong) of a study.json's values, [] when it can be applied."""
    errors = []
    text = study.get("instructions")
    if not (isinstance(text, dict) and isinstance(text.get("text"), str)):
        errors.append(("instructions.text", "not a text"))
    elif not (isinstance(text.get("version"), int) and text["version"] >= 1):
        errors.append(("instructions.version", "not a version (1, 2, ...)"))
    if study.get("gold_method") not in gold.METHODS:
        errors.append(("gold_method", f"not one of {', '.join(gold.METHODS)}"))
    design = _object(study, "design")
    for name in ("pass_mark", "check_rate", "pause_below"):
        if not _share(design.get(name), optional=name != "check_rate"):
            errors.append((f"design.{name}", "not a share between 0 and 1"))
    if design.get("careless_action") not in CARELESS_ACTIONS:
        errors.append(("design.careless_action", f"not one of {CARELESS_ACTIONS}"))
    pay = _object(study, "pay")
    for name in ("per_item", "per_correct_check"):
        if _amount(pay.get(name)) is None:
            errors.append((f"pay.{name}", f"not an amount between 0 and {MAX_PAY}"))
    hired = study.get("hired")
    if not isinstance(hired, dict) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in hired.values()
    ):
        errors.append(("hired", "not counts of people by outcome"))
    return errors + _card_errors(study.get("card"))


def _card_errors(card: Any) -> list[tuple[str, str]]:
    """The card's options checked as the release form checks them."""
    if not isinstance(card, dict):
        return [("card", "not an object of the card's options")]
    data = {k: ",".join(v) if k == "languages" and isinstance(v, list) else v
            for k, v in card.items()}  # fmt: skip
    form = ReleaseForm(data, project=Project())
    return [(f"card.{name}", " ".join(str(m) for m in e)) for name, e in form.errors.items()]


def _check_study(data: release_format.ReleaseData) -> dict[str, Any] | None:
    if data.study is None:
        data.warnings.append(
            LineError(data.study_file, 0, "", "the release has no study.json (built before it "
                      "was written): its instructions, design, pay and card are not carried")
        )  # fmt: skip
        return None
    errors = _study_errors(data.study)
    if errors:
        raise ImportFailed([LineError(data.study_file, 0, f, m) for f, m in errors])
    return data.study


def _apply_study(project: Project, study: dict[str, Any], summary: LoadSummary, file: str) -> None:
    """The study's instructions, design, pay and gold method made the project's; the
    rest kept as stated (`ImportedStudy`)."""
    project.instructions = study["instructions"]["text"]
    project.instructions_version = study["instructions"]["version"]
    default = Project._meta.get_field("gold_method").get_default()
    if project.gold_method == default:
        project.gold_method = study["gold_method"]
    elif project.gold_method != study["gold_method"]:
        summary.warnings.append(
            LineError(file, 0, "gold_method", f"the release's gold method is "
                      f"{study['gold_method']}; this project keeps its own, {project.gold_method}")
        )  # fmt: skip
    project.save(update_fields=["instructions", "instructions_version", "gold_method"])
    design, pay = study["design"], study["pay"]
    policy = hiring.HiringPolicy.of(project)
    if design["pass_mark"] is not None:
        policy.pass_mark = design["pass_mark"]
    policy.check_rate, policy.pause_below = design["check_rate"], design["pause_below"]
    policy.careless_action = design["careless_action"]
    policy.pay_per_item = _amount(pay["per_item"]) or Decimal(0)
    policy.pay_per_correct_check = _amount(pay["per_correct_check"]) or Decimal(0)
    policy.save()
    ImportedStudy.objects.update_or_create(project=project, defaults={"facts": study})


def import_release(project: Project, source: Path, *, user: User | None = None) -> LoadSummary:
    """Import a release (folder or zip) into `project`, which must hold no document yet.
    All or nothing; ImportFailed names the file and line of what is wrong."""
    data = release_format.read(source)
    if project.documents.exists() or project.items.exists():
        raise _refuse("a release imports into a new project (this one has documents)")
    study = _check_study(data)
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
        if study is not None:
            _apply_study(project, study, summary, data.study_file)
        summary.gold_method = project.gold_method
        bump_data_version(project.pk)
    return summary
