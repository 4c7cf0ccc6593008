"""The gold value of every unit, with its confidence and provenance, decided in one
place (`field_golds`) from the answers' codes (`answers.FieldCodes`).

Gold is: the adjudicated value when a researcher set one; otherwise the project's gold
method on the answers of the unit. The method is a function of a field's codes that
decides once per distinct row of answers (`GoldMethod`); today's is `majority_gold`: the
unanimous or majority value, its vote share as confidence; a tie takes the kind's tie
value (a verification claim label: "inconclusive-not-enough", VeriScore's rule) until
adjudicated; other ties have no gold. A model of the annotators (Dawid-Skene, MACE,
GLAD) plugs in as another GoldMethod: its posterior is one per distinct row as well.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Container, Mapping
from typing import NamedTuple

from django.db.models import Model, Q

from . import kinds
from .answers import Answers, FieldCodes, UnitKey, collector_paused, read_answers
from .models import Adjudication, Project
from .stats import majority

UNANIMOUS = "unanimous"
MAJORITY = "majority"
ADJUDICATED = "adjudicated"
TIE_RULE = "tie-rule"  # a tie read by the kind's rule (a claim label: inconclusive)
TIE = "tie"  # no gold until adjudicated


class LabelRow(NamedTuple):
    """One submitted answer to a categorical field, as `label_rows` lists them."""

    item: int
    kind: str
    unit: str
    field: str
    annotator: int
    value: str  # comparable across annotators (a comparison choice as its side "a"/"b")
    domain: str
    raw: str = ""  # as stored


class Gold(NamedTuple):
    """A unit's gold value."""

    item: int
    kind: str
    unit: str
    field: str
    value: str | None
    provenance: str
    votes: dict[str, int]  # read only: golds of the same answers share one dict
    note: str = ""
    confidence: float | None = None  # the method's (majority: the value's vote share)

    @property
    def disagreement(self) -> float:
        """Share of answers that differ from the most common one (0 = everyone agrees)."""
        n = sum(self.votes.values())
        return 1 - max(self.votes.values()) / n if n else 0.0


class GoldColumn(NamedTuple):
    """A gold method's decision per distinct row of a field's answers."""

    values: list[str | None]
    confidences: list[float | None]
    provenances: list[str]
    votes: list[dict[str, int]]  # value -> answers, most given first


GoldMethod = Callable[[FieldCodes], GoldColumn]


def majority_gold(codes: FieldCodes) -> GoldColumn:
    """The majority value of each distinct row (unanimous or majority), its vote share as
    confidence; a tie gives the kind's tie value (TIE_RULE) or no gold (TIE). The votes
    count in order of first answer (annotator id order) among equal counts."""
    tie_value = kinds.get(codes.kind).tie_value(codes.field)
    out = GoldColumn([], [], [], [])
    for row in codes.distinct.tolist():
        result = majority([codes.values[c] for c in row if c >= 0])
        votes = {str(k): v for k, v in result.distribution.items()}
        if not result.is_tie:
            value = None if result.label is None else str(result.label)
            provenance = UNANIMOUS if len(votes) == 1 else MAJORITY
        else:
            value, provenance = tie_value, (TIE if tie_value is None else TIE_RULE)
        out.values.append(value)
        out.provenances.append(provenance)
        out.votes.append(votes)
        n = sum(votes.values())
        out.confidences.append(votes.get(value, 0) / n if value is not None and n else None)
    return out


METHOD: GoldMethod = majority_gold  # the project's gold method


def field_golds(
    codes: FieldCodes, adjudicated: Mapping[UnitKey, tuple[str, str]] | None = None
) -> list[Gold]:
    """The gold of each unit of `codes`: its (value, note) in `adjudicated`, else the
    project's method, decided once per distinct row of answers. The one place gold is
    decided."""
    column = METHOD(codes)
    kind, fld, adjudicated = codes.kind, codes.field, adjudicated or {}
    golds = []
    for item, unit, row in zip(
        codes.items.tolist(), codes.units, codes.row_of.tolist(), strict=True
    ):
        if adjudicated and (adjudication := adjudicated.get((item, unit, fld))) is not None:
            value, note = adjudication
            golds.append(
                Gold(item, kind, unit, fld, value, ADJUDICATED, column.votes[row], note, 1.0)
            )
            continue
        golds.append(
            Gold(
                item,
                kind,
                unit,
                fld,
                column.values[row],
                column.provenances[row],
                column.votes[row],
                "",
                column.confidences[row],
            )
        )
    return golds


def adjudications(
    project: Project, fields: list[str] | None = None
) -> dict[UnitKey, tuple[str, str]]:
    """(item, unit, field) -> the researcher's (value, note), of `fields` or all."""
    which = Adjudication.objects.filter(item__project=project, item__deletion=None)
    if fields is not None:
        which = which.filter(field__in=fields)
    return {
        (item, unit, fld): (value, note)
        for item, unit, fld, value, note in which.values_list(
            "item_id", "unit", "field", "value", "note"
        )
    }


def golds_of(
    answers: Answers, adjudicated: Mapping[UnitKey, tuple[str, str]], fields: Container[str]
) -> dict[str, list[Gold]]:
    """kind -> the golds of its units' `fields`, in (item, unit, field) order."""
    found: dict[str, list[Gold]] = defaultdict(list)
    parts: dict[str, int] = defaultdict(int)
    for codes in answers.fields.values():
        if codes.field in fields:
            found[codes.kind] += field_golds(codes, adjudicated)
            parts[codes.kind] += 1
    for kind, n in parts.items():
        if n > 1:
            found[kind].sort(key=lambda g: (g.item, g.unit, g.field))
    return found


@collector_paused()
def label_rows(
    project: Project, *, kind: str | None = None, where: Q | None = None
) -> list[LabelRow]:
    """Submitted answers to categorical fields, one row each, as each kind compares them,
    in (item, unit, field, annotator) order; `where` narrows the assignments."""
    answers = read_answers(project, kind=kind, where=where)
    rows = []
    for codes in answers.fields.values():
        annotators = codes.annotators.tolist()
        for (item, unit, fld), row, raw in zip(
            codes.keys(), codes.codes.tolist(), codes.raw.tolist(), strict=True
        ):
            domain = answers.domains[item]
            rows += [
                LabelRow(
                    item, codes.kind, unit, fld, a, codes.values[c], domain, codes.raw_values[r]
                )
                for a, c, r in zip(annotators, row, raw, strict=True)
                if c >= 0
            ]
    rows.sort(key=lambda r: (r.item, r.unit, r.field, r.annotator))
    return rows


@collector_paused()
def gold_values(
    project: Project, *, kind: str | None = None, answers: Answers | None = None
) -> list[Gold]:
    """Gold of every answered unit, in (item, unit, field) order; pass `answers` (from
    read_answers) when you have them."""
    if answers is None:
        answers = read_answers(project, kind=kind)
    adjudicated = adjudications(project)
    golds = [g for codes in answers.fields.values() for g in field_golds(codes, adjudicated)]
    golds.sort(key=lambda g: (g.item, g.unit, g.field))
    return golds


def gold_by_target(project: Project, model: type[Model]) -> dict[int, Gold]:
    """Claim (or segment) id -> its human gold label, from every kind that judges it;
    a later kind does not override an earlier one."""
    found: dict[int, Gold] = {}
    for spec in kinds.judging(model):
        for t in spec.verdict_targets(project, gold_values(project, kind=spec.name)):
            found.setdefault(t.target, t.gold)
    return found
