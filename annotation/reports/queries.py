"""The queries every section shares: member names, filters as Q objects, answers
grouped per unit and their gold labels."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, time
from typing import NamedTuple

from django.db.models import Q
from django.utils import timezone

from .. import kinds
from ..gold import Gold, KindRows, LabelRow, UnitKey, collector_paused, decide, fetch, read_labels
from ..kinds import KindSpec
from ..kinds.base import Target
from ..models import Adjudication, Membership, Project, System, Verdict
from .tables import Filters

# --------------------------------------------------------------------------- queries


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


def unit_golds(
    grouped: dict[UnitKey, dict[int, str]], item_kinds: dict[int, str], project: Project
) -> dict[UnitKey, Gold]:
    # the fields whose gold labels a report uses
    gold_fields = {s.verdict_field for s in kinds.all_specs() if s.verdict_field}
    adjudicated = {
        (item, unit, fld): (value, note)
        for item, unit, fld, value, note in Adjudication.objects.filter(
            item__project=project, field__in=gold_fields
        ).values_list("item_id", "unit", "field", "value", "note")
    }
    golds: dict[UnitKey, Gold] = {}
    # The same answers give the same gold: decided once per (kind, field, answers dict),
    # the dicts being shared by units of the same answers (report_data) and alive here.
    decided: dict[tuple[str, str, int], Gold] = {}
    new = tuple.__new__  # a Gold without its Python-level __new__: a frame per unit
    for key, by_rater in grouped.items():
        item, unit, fld = key
        if fld not in gold_fields:
            continue
        kind = item_kinds[item]
        if adjudicated and (adjudication := adjudicated.get(key)) is not None:
            golds[key] = decide(item, kind, unit, fld, list(by_rater.values()), adjudication)
            continue
        answers = (kind, fld, id(by_rater))
        if (same := decided.get(answers)) is None:
            golds[key] = decided[answers] = decide(item, kind, unit, fld, list(by_rater.values()))
        else:  # its votes dict shared, as nothing changes a gold's votes
            golds[key] = new(
                Gold, (item, kind, unit, fld, same.value, same.provenance, same.votes, "")
            )
    return golds


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
    (grouped per unit, per kind) with their gold labels, queried once per report."""

    project: Project
    filters: Filters
    names: dict[int, str]
    bootstrap: int
    seed: int
    k_rule: str
    with_charts: bool
    grouped: dict[UnitKey, dict[int, str]]
    item_kinds: dict[int, str]
    golds: dict[UnitKey, Gold]
    rows_of: dict[str, list[LabelRow]]
    golds_of: dict[str, list[Gold]]
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

    def verdict_targets(self, spec: KindSpec) -> list[Target]:
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
) -> ReportData:
    where = assignment_filter(filters)
    with collector_paused():
        # the rows of the kinds with sections of their own (the kind sections and the
        # planning section read them); another kind's rows are read if asked for
        made = {s.name for s in kinds.all_specs() if s.report_sections}
        labels = read_labels(project, where=where, rows_for=made)
        grouped, item_kinds = labels.grouped, labels.item_kinds
        rows_of = KindRows(
            {kind: labels.rows_of.get(kind, []) for kind in made},  # none: no second query
            lambda kind: read_labels(project, kind=kind, where=where).rows,
        )
        del labels  # its flat list of rows: the report reads them per kind
        golds = unit_golds(grouped, item_kinds, project)
        golds_of: dict[str, list[Gold]] = defaultdict(list)
        for g in golds.values():
            golds_of[g.kind].append(g)
    return ReportData(
        project=project,
        filters=filters,
        names=names,
        bootstrap=bootstrap,
        seed=seed,
        k_rule=k_rule,
        with_charts=with_charts,
        grouped=grouped,
        item_kinds=item_kinds,
        golds=golds,
        rows_of=rows_of,
        golds_of=golds_of,
    )
