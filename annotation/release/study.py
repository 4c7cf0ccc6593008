"""What the dataset card and the Croissant file say about the study, read from the
project once: the instructions and worked examples, the training and check design, the
hiring policy's pay with the median active time, who was left out, the gold rule and the
pipeline's models. Counts only: no person is named."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings

from .. import hiring, kinds
from ..models import Assignment, ImportedStudy, Item, Membership, Project, System

LICENCE_GLOB = "LICENSE*"
CENT = Decimal("0.01")


@dataclass
class Example:
    kind: str
    answers: dict[str, str]
    explanation: str


@dataclass
class Study:
    name: str
    description: str
    instructions: str
    instructions_version: int
    kinds: dict[str, int]  # kind -> regular items
    roles: dict[str, int]  # role -> items
    annotators: int  # members who submitted an answer
    per_item: tuple[int, int, float] | None  # min, max, mean submitted assignments per item
    median_seconds: float | None  # active time per submitted regular item
    pay_per_item: Decimal
    pay_per_check: Decimal
    pass_mark: float | None
    check_rate: float
    pause_below: float | None
    hired: dict[str, int]  # hire status -> people
    careless_action: str
    systems: list[dict[str, Any]] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)

    @property
    def hourly_pay(self) -> Decimal | None:
        if not self.pay_per_item or not self.median_seconds:
            return None
        return (self.pay_per_item * Decimal(3600) / Decimal(self.median_seconds)).quantize(
            Decimal("0.01")
        )


def _per_item(project: Project) -> tuple[tuple[int, int, float] | None, float | None, int]:
    submitted = Assignment.objects.filter(
        item__project=project, status=Assignment.SUBMITTED
    ).filter(hiring.regular())
    counts = Counter(submitted.values_list("item_id", flat=True).iterator(chunk_size=20_000))
    # as the annotations table states them (to 0.1 s): a project imported from the release
    # finds the same median
    rounded = (
        round(s, 1)
        for s in submitted.values_list("active_seconds", flat=True).iterator(chunk_size=20_000)
    )
    seconds = [s for s in rounded if s > 0]
    people = submitted.values("annotator").distinct().count()
    if not counts:
        return None, None, people
    values = list(counts.values())
    spread = (min(values), max(values), sum(values) / len(values))
    return spread, (statistics.median(seconds) if seconds else None), people


def _examples(project: Project) -> list[Example]:
    return [
        Example(
            e.item.kind,
            {f"{unit}.{fld}": value for (unit, fld), value in e.answers.items()},
            e.explanation,
        )
        for e in hiring.examples(project)
    ]


def stated_facts(project: Project) -> dict[str, Any]:
    """The study.json the project was imported from ({} for a project of its own)."""
    found = ImportedStudy.objects.filter(project=project).values_list("facts", flat=True)
    return next(iter(found), None) or {}


def _hired(project: Project, stated: dict[str, Any]) -> dict[str, int]:
    """People hired through invite links by outcome: the project's own hires, and those
    the release it was imported from states (counts: an imported project has no hire)."""
    hires = hiring.Hire.objects.filter(membership__project=project, invited=True)
    counts = Counter(hiring.status(h) for h in hires.select_related("membership"))
    counts.update({str(k): int(v) for k, v in (stated.get("hired") or {}).items()})
    return dict(counts)


def read_study(project: Project) -> Study:
    # the policy in force: its defaults where the project never saved one
    policy = hiring.HiringPolicy.objects.filter(project=project).first() or hiring.HiringPolicy()
    roles = Counter(
        hiring.QualityItem.objects.filter(item__project=project).values_list("role", flat=True)
    )
    regular = Item.objects.filter(project=project).filter(hiring.regular("pk"))
    spread, median, people = _per_item(project)
    has_training = roles.get(hiring.TRAINING, 0) > 0
    return Study(
        name=project.name,
        description=project.description,
        instructions=project.instructions,
        instructions_version=project.instructions_version,
        kinds=dict(Counter(regular.values_list("kind", flat=True))),
        roles=dict(roles),
        annotators=people,
        per_item=spread,
        median_seconds=median,
        # to the cent, as the policy stores it (an unsaved policy's default is a bare 0)
        pay_per_item=Decimal(policy.pay_per_item).quantize(CENT),
        pay_per_check=Decimal(policy.pay_per_correct_check).quantize(CENT),
        pass_mark=policy.pass_mark if has_training else None,
        check_rate=policy.check_rate,
        pause_below=policy.pause_below,
        hired=_hired(project, stated_facts(project)),
        careless_action=policy.careless_action,
        systems=[
            {
                "name": s.name,
                "kind": s.kind,
                "origin": s.origin,
                "model": s.model,
                "prompt_version": s.prompt_version,
            }
            for s in System.objects.filter(project=project).order_by("name")
        ],
        examples=_examples(project),
    )


def kind_titles() -> dict[str, str]:
    return {spec.name: spec.title for spec in kinds.all_specs()}


def researchers(project: Project) -> int:
    return project.memberships.filter(role=Membership.RESEARCHER).count()


def available_licences() -> list[str]:
    """The licence files of the source data shipped with the platform (fixtures/), by
    their path under it: what a release may name and copy."""
    root = settings.BASE_DIR / "fixtures"
    return sorted(str(p.relative_to(root)) for p in root.rglob(LICENCE_GLOB) if p.is_file())
