"""The queries every section shares: member names, filters as Q objects, the answers'
codes and their gold labels."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, time
from typing import NamedTuple

from django.db.models import Q
from django.utils import timezone

from .. import kinds
from ..answers import Answers, collector_paused, fetch, read_answers
from ..gold import Gold, GoldMethod, adjudications, golds_of, project_method
from ..kinds import ReportKind
from ..kinds.base import Target
from ..models import Membership, Project, System, Verdict
from .tables import Filters


def member_names(project: Project, *, real_names: bool) -> dict[int, str]:
    """user id -> what reports call them: "A<n>" unless real names are asked for."""
    rows = Membership.objects.filter(project=project).values_list(
        "user_id", "pseudonym", "user__username"
    )
    return {uid: (username if real_names else name) for uid, name, username in rows}


def annotator_choices(project: Project, *, real_names: bool) -> list[tuple[int, str]]:
    rows = (
        Membership.objects.filter(project=project, role=Membership.ANNOTATOR)
        .order_by("number")
        .values_list("user_id", "pseudonym", "user__username")
    )
    return [(uid, username if real_names else name) for uid, name, username in rows]


def domains_of(project: Project) -> list[str]:
    # DISTINCT in the database: a project may hold a million documents and a few domains
    return sorted(project.documents.order_by().values_list("domain", flat=True).distinct())


def assignment_filter(filters: Filters, prefix: str = "") -> Q:
    q = Q()
    if filters.annotators:
        q &= Q(**{f"{prefix}annotator_id__in": filters.annotators})
    if filters.domains:
        q &= Q(**{f"{prefix}item__document__domain__in": filters.domains})
    tz = timezone.get_current_timezone()
    if filters.date_from:
        start = datetime.combine(filters.date_from, time.min, tzinfo=tz)
        q &= Q(**{f"{prefix}submitted_at__gte": start})
    if filters.date_to:
        end = datetime.combine(filters.date_to, time.max, tzinfo=tz)
        q &= Q(**{f"{prefix}submitted_at__lte": end})
    return q


class Verdicts(NamedTuple):
    """The verdicts of a project's verifier and reference systems (ReportData.verdicts)."""

    systems: dict[int, tuple[str, str]]  # system id -> (name, kind)
    # (system id, claim id, segment id, the claim's list id, label): a verdict is on a
    # claim or on a segment (the other two None)
    rows: list[tuple[int, int | None, int | None, int | None, str]]


def read_verdicts(project: Project) -> Verdicts:
    """Every verdict of the project's verifier and reference systems."""
    systems = {
        pk: (name, kind)
        for pk, name, kind in System.objects.filter(
            project=project, kind__in=[System.VERIFIER, System.REFERENCE]
        ).values_list("pk", "name", "kind")
    }
    rows = fetch(  # the systems' ids: a few, not a join per verdict
        Verdict.objects.filter(system__in=list(systems)).values_list(
            "system_id", "claim_id", "segment_id", "claim__claim_list_id", "label"
        )
    )
    return Verdicts(systems, rows)


@dataclass(frozen=True)
class ReportData:
    """What every section builder reads: the report's options, and the submitted answers
    (as codes per kind, level and field) with their gold labels, queried once per report."""

    project: Project
    filters: Filters
    names: dict[int, str]
    bootstrap: int
    seed: int
    k_rule: str
    with_charts: bool
    answers: Answers
    golds_of: dict[str, list[Gold]]  # kind -> the golds of its units' verdict fields
    gold_method: str = "majority"  # the gold method's name (gold.METHODS)
    # kind -> its verdict targets (`verdict_targets`), computed when first asked for
    _targets: dict[str, list[Target]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    _verdicts: list[Verdicts] = field(default_factory=list, init=False, compare=False, repr=False)

    def verdicts(self) -> Verdicts:
        """Every verdict of the project's verifier and reference systems, read once per
        report (the verifier, pipeline, FActScore and score sections each read them; the
        first asks)."""
        if not self._verdicts:
            self._verdicts.append(read_verdicts(self.project))
        return self._verdicts[0]

    def verdict_targets(self, spec: ReportKind) -> list[Target]:
        """`spec.verdict_targets` of the kind's golds with a value: the claims or segments
        their labels judge, read once per report (the verifier and the score sections both
        compare verdicts with them)."""
        if spec.name not in self._targets:
            golds = [
                g
                for g in self.golds_of.get(spec.name, ())
                if g.field == spec.verdict_field and g.value is not None
            ]
            self._targets[spec.name] = spec.verdict_targets(self.project, golds) if golds else []
        return self._targets[spec.name]


def report_data(
    project: Project,
    *,
    filters: Filters,
    names: dict[int, str],
    bootstrap: int,
    seed: int,
    k_rule: str,
    with_charts: bool,
    gold: str | GoldMethod | None = None,
    gold_name: str = "majority",
) -> ReportData:
    """`gold`: the gold method (its name, by default the project's, or a GoldMethod);
    `gold_name`: its name, as the report tells it."""
    with collector_paused():
        answers = read_answers(project, where=assignment_filter(filters))
        # the fields whose gold labels a report uses
        fields = [s.verdict_field for s in kinds.all_specs() if s.verdict_field]
        adjudicated = adjudications(project, fields)
        method = gold if callable(gold) else project_method(project, adjudicated, gold)
        golds = golds_of(answers, adjudicated, set(fields), method)
    return ReportData(
        project=project,
        filters=filters,
        names=names,
        bootstrap=bootstrap,
        seed=seed,
        k_rule=k_rule,
        with_charts=with_charts,
        answers=answers,
        golds_of=golds,
        gold_method=gold_name,
    )
