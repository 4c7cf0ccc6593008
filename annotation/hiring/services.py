"""Hiring annotators (issue 18): the invite flow (join, a new annotator's queue), training
and known-answer scores, the pause rule, marking training and check items."""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, models, transaction
from django.db.models import QuerySet
from statsmodels.stats.proportion import proportion_confint

from .. import kinds
from ..models import (
    Answer,
    Assignment,
    Document,
    Item,
    Membership,
    Project,
    System,
    Verdict,
    bump_data_version,
)
from .models import CHECK, TRAINING, Hire, HiringPolicy, Invite, QualityItem

# --- joining ---------------------------------------------------------------------------


class JoinRefused(Exception):
    pass


def join(invite: Invite, params: dict[str, str]) -> tuple[Hire, bool]:
    """The Hire of the worker id in `params` (the same id -> the same account), or a new
    pseudonymous account. Returns (hire, created). JoinRefused says why not."""
    if invite.revoked:  # a revoked link lets nobody in; cap and expiry stop newcomers only
        raise JoinRefused(invite.problem())
    found = known(invite, params)
    if found is not None:
        return found, False
    worker = (params.get(invite.worker_param) or "").strip()[:200]
    with transaction.atomic():
        # Lock the invite row so two people cannot both take the last place under the cap.
        locked = Invite.objects.select_for_update().get(pk=invite.pk)
        # a concurrent request for the same worker may have won meanwhile
        found = known(locked, params)
        if found is not None:
            return found, False
        problem = locked.problem()
        if problem:
            raise JoinRefused(problem)
        user = User(username=f"w-{secrets.token_hex(8)}")
        user.set_unusable_password()
        user.save()
        membership = invite.project.add_member(user, Membership.ANNOTATOR)
        extra = {p: params[p][:200] for p in locked.extra_params if params.get(p)}
        try:
            with transaction.atomic():
                hire = Hire.objects.create(
                    membership=membership, invite=locked, worker_id=worker, worker_params=extra
                )
        except IntegrityError:
            raise JoinRefused("Please reload the page.") from None
        fill_queue(hire)
    return hire, True


def known(invite: Invite, params: dict[str, str]) -> Hire | None:
    """The Hire of the worker id in `params` in the invite's project, if any."""
    worker = (params.get(invite.worker_param) or "").strip()[:200]
    if not worker:
        return None
    return Hire.objects.filter(invite__project=invite.project, worker_id=worker).first()


def fill_queue(hire: Hire) -> int:
    """Give a new annotator the training items (first), `items_per_person` real items
    (the least covered ones) and known-answer checks at the policy's rate, the real
    items and checks shuffled together. Returns how many assignments were made."""
    membership = hire.membership
    project, user = membership.project, membership.user
    policy = HiringPolicy.of(project)
    items = Item.objects.filter(project=project).exclude(assignments__annotator=user)
    training = list(
        items.filter(quality__role=TRAINING).order_by("id").values_list("id", flat=True)
    )
    n_real = hire.invite.items_per_person if hire.invite else 0
    real = list(
        items.filter(quality__isnull=True)
        .annotate(n=models.Count("assignments"))
        .order_by("n", "id")
        .values_list("id", flat=True)[:n_real]
    )
    checks = list(items.filter(quality__role=CHECK).values_list("id", flat=True))
    rng = random.Random()
    n_checks = min(
        len(checks),
        round(policy.check_rate * len(real) / (1 - policy.check_rate))
        if policy.check_rate < 1
        else len(checks),
    )
    mixed = real + rng.sample(checks, n_checks)
    rng.shuffle(mixed)
    start = Assignment.objects.in_project(project).for_annotator(user).count()
    rows = [
        Assignment(item_id=i, annotator=user, position=start + pos, swapped=rng.random() < 0.5)
        for pos, i in enumerate(training + mixed)
    ]
    Assignment.objects.bulk_create(rows)
    bump_data_version(project.pk)
    if not training and not hire.passed_training:  # nothing to train on: straight through
        hire.passed_training = True
        hire.save(update_fields=["passed_training"])
    return len(rows)


# --- training and checks: scores ---------------------------------------------------------


@dataclass(frozen=True)
class Score:
    units: int  # reference (unit, field) pairs answered
    matching: int

    @property
    def share(self) -> float | None:
        return self.matching / self.units if self.units else None

    def wilson(self, alpha: float = 0.05) -> tuple[float, float] | None:
        if not self.units:
            return None
        low, high = proportion_confint(self.matching, self.units, alpha=alpha, method="wilson")
        return float(low), float(high)


def score(user: User | int, project: Project, role: str) -> Score:
    """How many of the reference units of this role's submitted items the annotator
    answered like the reference (compared as the kind compares answers)."""
    references = {
        q.item_id: q.reference_pairs()
        for q in QualityItem.objects.filter(item__project=project, role=role)
    }
    answers = Answer.objects.filter(
        assignment__annotator=user,
        assignment__status=Assignment.SUBMITTED,
        assignment__item_id__in=references,
    ).values_list(
        "assignment__item_id",
        "assignment__item__kind",
        "assignment__swapped",
        "unit",
        "field",
        "value",
    )
    given = {
        (item, unit, field): kinds.get(kind).comparable(field, value, swapped)
        for item, kind, swapped, unit, field, value in answers
    }
    submitted = Assignment.objects.filter(
        annotator=user, status=Assignment.SUBMITTED, item_id__in=references
    ).values_list("item_id", flat=True)
    units = matching = 0
    for item in submitted:
        for pair, value in references[item].items():
            units += 1
            matching += given.get((item, *pair)) == value
    return Score(units, matching)


def presented(assignment: Assignment, field: str, value: str) -> str:
    """A reference value as this annotator's page names it (a comparison side as the
    list number they saw)."""
    spec = kinds.get(assignment.item.kind)
    f = spec.field(field)
    for raw in f.values if f else []:
        if spec.comparable(field, raw, assignment.swapped) == value:
            return raw
    return value


def hire_of(membership: Membership) -> Hire | None:
    try:
        return membership.hire
    except Hire.DoesNotExist:
        return None


def after_submit(membership: Membership) -> None:
    """Update the training result and the automatic pause after an answer."""
    hire = hire_of(membership)
    if hire is None:
        return
    project, user = membership.project, membership.user
    policy = HiringPolicy.of(project)
    changed = []
    if not hire.passed_training and not _open(membership, TRAINING).exists():
        s = score(user, project, TRAINING)
        if s.share is None or s.share >= policy.pass_mark:
            hire.passed_training = True
            changed.append("passed_training")
    if policy.pause_below is not None and not hire.paused:
        s = score(user, project, CHECK)
        if s.units >= policy.pause_after and (s.share or 0) < policy.pause_below:
            hire.paused, hire.paused_reason = True, "check accuracy below the threshold"
            changed += ["paused", "paused_reason"]
    if changed:
        hire.save(update_fields=changed)


def _open(membership: Membership, role: str) -> QuerySet[Assignment]:
    return (
        Assignment.objects.in_project(membership.project)
        .for_annotator(membership.user)
        .open()
        .filter(item__quality__role=role)
    )


def blocked(membership: Membership, assignment: Assignment | None = None) -> str | None:
    """Why this annotator may not open `assignment` (or get new items): "paused";
    "training" while training is not passed (training items excepted); None when they may."""
    hire = hire_of(membership)
    if hire is None or (assignment is not None and assignment.is_done):
        return None  # their own past answers stay open to them
    if hire.paused:
        return "paused"
    if (
        assignment is not None
        and QualityItem.objects.filter(item_id=assignment.item_id, role=TRAINING).exists()
    ):
        return None
    return None if hire.cleared else "training"


def next_training(membership: Membership) -> Assignment | None:
    return _open(membership, TRAINING).first()


def quality_rows(project: Project) -> list[dict[str, Any]]:
    """Per annotator: training items and share matching the reference; check accuracy
    with its 95% Wilson interval; hire state. Worker ids are for the project's researchers."""
    rows = []
    for m in project.memberships.filter(role=Membership.ANNOTATOR).select_related("user"):
        hire = hire_of(m)
        t, c = score(m.user, project, TRAINING), score(m.user, project, CHECK)
        t_items = Assignment.objects.filter(
            annotator=m.user,
            status=Assignment.SUBMITTED,
            item__project=project,
            item__quality__role=TRAINING,
        ).count()
        rows.append(
            {
                "annotator": m.pseudonym,
                "membership": m.pk,
                "training_items": t_items,
                "training_share": t.share,
                "checks": c.units,
                "check_accuracy": c.share,
                "check_ci": c.wilson(),
                "hired": hire is not None,
                "worker_id": hire.worker_id if hire else "",
                "passed_training": hire.passed_training if hire else None,
                "let_through": hire.let_through if hire else None,
                "paused": hire.paused if hire else False,
            }
        )
    return rows


def set_state(
    membership: Membership, *, paused: bool | None = None, let_through: bool | None = None
) -> Hire:
    """A researcher pauses / resumes an annotator or lets them past training."""
    hire = hire_of(membership) or Hire.objects.create(membership=membership, passed_training=True)
    if paused is not None:
        hire.paused, hire.paused_reason = paused, ("paused by a researcher" if paused else "")
    if let_through is not None:
        hire.let_through = let_through
    hire.save()
    return hire


def reference_from(item: Item, system: System) -> dict[str, str]:
    """An item's reference answer from the verdicts of an imported system (a human
    reference set), as the item's kind reads them (KindSpec.reference_from)."""
    return kinds.get(item.kind).reference_from(item, Verdict.objects.filter(system=system))


def mark(
    item: Item,
    role: str,
    reference: dict[str, str],
    explanation: str = "",
    *,
    system: System | None = None,
) -> QualityItem:
    """Mark an item as training or check. The reference's keys are "unit.field" of the
    item's categorical fields; without one it comes from `system`'s verdicts, or else
    from the item's adjudications."""
    if role not in (TRAINING, CHECK):
        raise ValueError(f"role must be {TRAINING!r} or {CHECK!r}, not {role!r}")
    if not reference and system is not None:
        reference = reference_from(item, system)
        if not reference:
            raise ValueError(f"{system.name} has no verdict on item {item.pk}")
    if not reference:
        reference = {f"{a.unit}.{a.field}": a.value for a in item.adjudications.all()}
    if not reference:
        raise ValueError("give a reference answer (or adjudicate the item first)")
    fields = kinds.categorical_fields(item.kind, item.project)
    for key, value in reference.items():
        unit, _, field = key.partition(".")
        if field not in fields:
            raise ValueError(f"{key}: {field!r} is not a categorical field of {item.kind} items")
        if fields[field] and value not in fields[field]:
            raise ValueError(f"{key}: {value!r} is not one of {', '.join(fields[field])}")
    q, _ = QualityItem.objects.update_or_create(
        item=item, defaults={"role": role, "reference": reference, "explanation": explanation}
    )
    return q


def mark_imported(items: list[Item]) -> int:
    """Mark new items from their document's import field `metadata.hiring.<kind>`:
    {"role": "training" | "check", "reference": {"unit.field": value}, "explanation": ...}.
    ValueError names the document and the problem. Returns how many were marked."""
    if not items:
        return 0
    docs = {
        d.pk: d
        for d in Document.objects.filter(project_id=items[0].project_id, metadata__has_key="hiring")
    }
    n = 0
    for item in items:
        doc = docs.get(item.document_id)
        spec = doc.metadata["hiring"] if doc else None
        spec = spec.get(item.kind) if isinstance(spec, dict) else None
        if doc is None or spec is None:
            continue
        where = f"document {doc.external_id}: metadata.hiring.{item.kind}"
        if not isinstance(spec, dict) or not isinstance(spec.get("reference", {}), dict):
            raise ValueError(f"{where}: give an object with role, reference and explanation")
        try:
            mark(
                item,
                str(spec.get("role", "")),
                {str(k): str(v) for k, v in spec.get("reference", {}).items()},
                str(spec.get("explanation", "")),
            )
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        n += 1
    return n
