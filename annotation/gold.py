"""The gold value of every unit, with its confidence and provenance, decided in one
place (`field_golds`) from the answers' codes (`answers.FieldCodes`).

Gold is: the adjudicated value when a researcher set one; otherwise the project's gold
method on the answers of the unit (`Project.gold_method`, or the one a caller names).
The method is a function of a field's codes that decides once per distinct row of
answers (`GoldMethod`). `majority_gold` (the default): the unanimous or majority value,
its vote share as confidence; a tie takes the kind's tie value (a verification claim
label: "inconclusive-not-enough", VeriScore's rule) until adjudicated; other ties have
no gold. `model_gold`: a model of the annotators (Dawid-Skene, MACE, GLAD; crowd-kit via
`stats.crowd.posteriors`) fitted on the field's answers; the value is the label of
highest posterior, the posterior its confidence (an exact tie: the kind's tie rule, as
for majority). The posterior of a unit depends only on its row of answers, so it is read
once per distinct row, on a unit of that row no adjudication anchors. Adjudicated values
and known-answer (check) items' references anchor Dawid-Skene (crowd-kit holds those
units at their known label through EM); MACE and GLAD cannot take known labels. Every
gold value carries its method (`Gold.method`: the method's name, or "adjudicated") and
its confidence (1 for an adjudicated value).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Container, Mapping
from itertools import chain
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from django.db.models import Model, Q

from . import kinds
from .answers import Answers, FieldCodes, FieldKey, UnitKey, collector_paused, read_answers
from .hiring.models import CHECK, QualityItem
from .kinds import unit_type
from .models import Adjudication, Answer, Assignment, Project
from .stats import crowd, majority

UNANIMOUS = "unanimous"
MAJORITY = "majority"
ADJUDICATED = "adjudicated"
TIE_RULE = "tie-rule"  # a tie read by the kind's rule (a claim label: inconclusive)
TIE = "tie"  # no gold until adjudicated

METHOD_MAJORITY = crowd.MAJORITY
METHODS = crowd.METHODS  # majority, dawid_skene, mace, glad
METHOD_TITLES = {
    crowd.MAJORITY: "Majority vote",
    crowd.DAWID_SKENE: "Dawid-Skene",
    crowd.MACE: "MACE",
    crowd.GLAD: "GLAD",
}
MODELS = crowd.MODELS  # the methods that fit a model of the annotators


class LabelRow(NamedTuple):
    """One submitted answer to a categorical field, as `label_rows` lists them."""

    item: int
    unit: str
    field: str
    annotator: int
    value: str  # comparable across annotators (a comparison choice as its side "a"/"b")
    raw: str  # as stored


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
    method: str = METHOD_MAJORITY  # the gold method, or ADJUDICATED

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
    method: str = METHOD_MAJORITY


GoldMethod = Callable[[FieldCodes], GoldColumn]


def majority_gold(codes: FieldCodes) -> GoldColumn:
    """The majority value of each distinct row (unanimous or majority), its vote share as
    confidence; a tie gives the kind's tie value (TIE_RULE) or no gold (TIE). The votes
    count in order of first answer (annotator id order) among equal counts."""
    tie_value = kinds.gold(codes.kind).tie_value(codes.field)
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


# per (kind, level, field): (unit key, annotator, value as compared, the unit's known
# value) for each answer to a check item's reference unit
Checks = dict[FieldKey, list[tuple[UnitKey, int, str, str]]]


def check_answers(project: Project) -> Checks:
    """The submitted answers to the reference units of the project's check items, which
    anchor Dawid-Skene."""
    truth = {
        (q.item_id, unit, fld): value
        for q in QualityItem.objects.filter(item__project=project, role=CHECK)
        for (unit, fld), value in q.reference_pairs().items()
    }
    found: Checks = defaultdict(list)
    rows = Answer.objects.filter(
        assignment__item__project=project,
        assignment__item__quality__role=CHECK,
        assignment__status=Assignment.SUBMITTED,
    ).values_list(
        "assignment__item_id",
        "assignment__item__kind",
        "assignment__annotator_id",
        "assignment__swapped",
        "unit",
        "field",
        "value",
    )
    for item, kind, annotator, swapped, unit, fld, value in rows.order_by("pk"):
        if (known := truth.get((item, unit, fld))) is not None:
            compared = kinds.gold(kind).comparable(fld, value, swapped)
            found[kind, unit_type(unit), fld].append(
                ((item, unit, fld), annotator, compared, known)
            )
    return dict(found)


def model_gold(
    method: str,
    known: Mapping[UnitKey, str] | None = None,
    checks: Checks | None = None,
) -> GoldMethod:
    """The GoldMethod of an annotator model (`MODELS`). `known` (adjudicated values) and
    `checks` anchor Dawid-Skene only; MACE and GLAD are fitted on the answers alone (an
    adjudicated value still wins in `field_golds`)."""
    if method not in MODELS:
        raise ValueError(f"unknown annotator model {method!r}; one of {', '.join(MODELS)}")
    anchored = method in crowd.ANCHORED

    def gold(codes: FieldCodes) -> GoldColumn:
        code_of = {v: i for i, v in enumerate(codes.values)}
        units, columns = np.nonzero(codes.codes >= 0)
        annotators, labels = codes.annotators[columns], codes.codes[units, columns]
        anchors: dict[int, int] = {}
        if anchored and known:
            for i, key in enumerate(codes.keys()):
                if (value := known.get(key)) is not None and value in code_of:
                    anchors[i] = code_of[value]
        if anchored and checks:
            extra = _check_rows(codes, checks, code_of, anchors)
            units, annotators, labels = (
                np.concatenate(p) for p in zip((units, annotators, labels), extra, strict=True)
            )
        post = crowd.posteriors(method, units, annotators, labels, len(codes.values), anchors)
        return _column(codes, post, _representatives(codes, anchors), method)

    return gold


def _check_rows(
    codes: FieldCodes, checks: Checks, code_of: dict[str, int], anchors: dict[int, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The check answers of `codes`' field as (unit, annotator, label) arrays, their units
    numbered after the field's own; their references added to `anchors`. A value no
    regular answer gave is left out (the model has no such category)."""
    index: dict[UnitKey, int] = {}
    rows = []
    for key, annotator, value, truth in checks.get((codes.kind, codes.level, codes.field), ()):
        if value not in code_of or truth not in code_of:
            continue
        if (unit := index.get(key)) is None:
            unit = index[key] = len(codes.units) + len(index)
            anchors[unit] = code_of[truth]
        rows.append((unit, annotator, code_of[value]))
    table = np.array(rows, dtype=np.int64).reshape(-1, 3)
    return table[:, 0], table[:, 1], table[:, 2]


def _representatives(codes: FieldCodes, anchors: Mapping[int, int]) -> np.ndarray:
    """Per distinct row: its first unit that no known label anchors (else its first)."""
    n = len(codes.units)
    _, first = np.unique(codes.row_of, return_index=True)
    free = np.ones(n, dtype=bool)
    free[[u for u in anchors if u < n]] = False
    index = np.flatnonzero(free)[::-1]
    rep = first.copy()
    rep[codes.row_of[index]] = index  # written last to first: the first free unit stays
    return rep


def _column(codes: FieldCodes, post: np.ndarray, rep: np.ndarray, method: str) -> GoldColumn:
    """A model's GoldColumn from its posteriors (units x values) read at each distinct
    row's representative unit; the votes as majority counts them."""
    tie_value = kinds.gold(codes.kind).tie_value(codes.field)
    votes = majority_gold(codes).votes
    out = GoldColumn([], [], [], votes, method)
    for p in post[rep].tolist():
        order = sorted(range(len(p)), key=lambda c: -p[c])
        top = order[0] if order else None
        if top is None or p[top] <= 0:
            value, confidence, provenance = None, None, TIE
        elif len(order) > 1 and abs(p[order[1]] - p[top]) < 1e-12:
            value = tie_value
            provenance = TIE if tie_value is None else TIE_RULE
            code = codes.values.index(tie_value) if tie_value in codes.values else None
            confidence = None if tie_value is None else (p[code] if code is not None else 0.0)
        else:
            value, confidence, provenance = codes.values[top], p[top], method
        out.values.append(value)
        out.confidences.append(confidence)
        out.provenances.append(provenance)
    return out


def gold_method(
    name: str,
    adjudicated: Mapping[UnitKey, tuple[str, str]] | None = None,
    checks: Checks | None = None,
) -> GoldMethod:
    """The GoldMethod called `name` (`METHODS`; ValueError naming them otherwise);
    adjudicated values and `checks` anchor Dawid-Skene."""
    if name == METHOD_MAJORITY:
        return majority_gold
    if name not in METHODS:
        raise ValueError(f"unknown gold method {name!r}; one of {', '.join(METHODS)}")
    known = {key: value for key, (value, _) in (adjudicated or {}).items()}
    return model_gold(name, known, checks)


def field_golds(
    codes: FieldCodes,
    adjudicated: Mapping[UnitKey, tuple[str, str]] | None = None,
    method: str | GoldMethod = METHOD_MAJORITY,
) -> list[Gold]:
    """The gold of each unit of `codes`: its (value, note) in `adjudicated`, else the
    gold method's (a name in `METHODS`, or a GoldMethod), decided once per distinct row
    of answers. The one place gold is decided."""
    if isinstance(method, str):
        method = gold_method(method, adjudicated)
    column = method(codes)
    kind, fld, adjudicated = codes.kind, codes.field, adjudicated or {}
    golds = []
    for item, unit, row in zip(
        codes.items.tolist(), codes.units, codes.row_of.tolist(), strict=True
    ):
        value, provenance, note = column.values[row], column.provenances[row], ""
        confidence, method_name = column.confidences[row], column.method
        if (adjudication := adjudicated.get((item, unit, fld))) is not None:
            (value, note), provenance = adjudication, ADJUDICATED
            confidence, method_name = 1.0, ADJUDICATED
        votes = column.votes[row]
        golds.append(
            Gold(item, kind, unit, fld, value, provenance, votes, note, confidence, method_name)
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


def project_method(
    project: Project,
    adjudicated: Mapping[UnitKey, tuple[str, str]] | None = None,
    name: str | None = None,
) -> GoldMethod:
    """The GoldMethod called `name`, by default the project's (`Project.gold_method`),
    anchored for Dawid-Skene by `adjudicated` and the project's check items."""
    name = name or project.gold_method
    checks = check_answers(project) if name in MODELS and name in crowd.ANCHORED else None
    return gold_method(name, adjudicated, checks)


def golds_of(
    answers: Answers,
    adjudicated: Mapping[UnitKey, tuple[str, str]],
    fields: Container[str],
    method: str | GoldMethod = METHOD_MAJORITY,
) -> dict[str, list[Gold]]:
    """kind -> the golds of its units' `fields`, in (item, unit, field) order."""
    parts: dict[str, list[FieldCodes]] = defaultdict(list)
    for codes in answers.fields.values():
        if codes.field in fields:
            parts[codes.kind].append(codes)
    found: dict[str, list[Gold]] = defaultdict(list)
    for kind, of_kind in parts.items():
        golds = list(chain.from_iterable(field_golds(c, adjudicated, method) for c in of_kind))
        found[kind] = list(map(golds.__getitem__, _unit_order(of_kind).tolist()))
    return found


def _unit_order(parts: list[FieldCodes]) -> npt.NDArray[np.intp]:
    """The order by (item, unit, field) of the units of `parts`, one after the other: a
    stable sort (np.lexsort) of the item ids and the ranks of the unit and field names, as
    sorting their golds by a key tuple each would give, without a tuple per gold."""
    units = list(chain.from_iterable(c.units for c in parts))
    unit_rank = {name: i for i, name in enumerate(sorted(set(units)))}
    field_rank = {name: i for i, name in enumerate(sorted({c.field for c in parts}))}
    order: npt.NDArray[np.intp] = np.lexsort(
        (
            np.repeat([field_rank[c.field] for c in parts], [len(c.units) for c in parts]),
            np.fromiter(map(unit_rank.__getitem__, units), np.int64, len(units)),
            np.concatenate([c.items for c in parts]),
        )
    )
    return order


@collector_paused()
def label_rows(
    project: Project, *, kind: str | None = None, where: Q | None = None
) -> list[LabelRow]:
    """Submitted answers to categorical fields, one row each, as each kind compares them,
    in (item, unit, field, annotator) order; `where` narrows the assignments."""
    rows = []
    for codes in read_answers(project, kind=kind, where=where).fields.values():
        annotators = codes.annotators.tolist()
        for (item, unit, fld), row, raw in zip(
            codes.keys(), codes.codes.tolist(), codes.raw.tolist(), strict=True
        ):
            rows += [
                LabelRow(item, unit, fld, a, codes.values[c], codes.raw_values[r])
                for a, c, r in zip(annotators, row, raw, strict=True)
                if c >= 0
            ]
    rows.sort(key=lambda r: (r.item, r.unit, r.field, r.annotator))
    return rows


@collector_paused()
def gold_values(
    project: Project,
    *,
    kind: str | None = None,
    answers: Answers | None = None,
    method: str | None = None,
) -> list[Gold]:
    """Gold of every answered unit, in (item, unit, field) order, by `method` (a name in
    METHODS; default the project's `gold_method`); pass `answers` (from read_answers)
    when you have them. Each Gold carries value, method and confidence."""
    if answers is None:
        answers = read_answers(project, kind=kind)
    adjudicated = adjudications(project)
    chosen = project_method(project, adjudicated, method)
    golds = [
        g for codes in answers.fields.values() for g in field_golds(codes, adjudicated, chosen)
    ]
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
