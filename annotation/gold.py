"""Answers as comparable labels, and the gold value of every unit with its provenance.

Gold is: the adjudicated value when a researcher set one; otherwise the unanimous or
majority value of the submitted answers; a tie on a verification claim label is
"inconclusive-not-enough" (VeriScore's rule) until adjudicated; other ties have no gold.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from .kinds import categorical_fields
from .models import Adjudication, Answer, Assignment, Item, Project
from .stats import Majority, majority

UNANIMOUS = "unanimous"
MAJORITY = "majority"
ADJUDICATED = "adjudicated"
TIE_RULE = "tie-rule"  # a verification tie read as inconclusive
TIE = "tie"  # no gold until adjudicated
VERIFICATION_TIE_VALUE = "inconclusive-not-enough"


@dataclass(frozen=True)
class LabelRow:
    item: int
    kind: str
    unit: str
    field: str
    annotator: int
    value: str
    domain: str


@dataclass(frozen=True)
class Gold:
    item: int
    kind: str
    unit: str
    field: str
    value: str | None
    provenance: str
    votes: dict[str, int]
    note: str = ""

    @property
    def disagreement(self) -> float:
        """Share of answers that differ from the most common one (0 = everyone agrees)."""
        n = sum(self.votes.values())
        return 1 - max(self.votes.values()) / n if n else 0.0


def label_rows(project: Project, *, kind: str | None = None) -> list[LabelRow]:
    """Submitted categorical answers, comparison choices translated to the side ("a"/"b")."""
    answers = Answer.objects.filter(
        assignment__item__project=project, assignment__status=Assignment.SUBMITTED
    ).select_related("assignment__item__document")
    if kind:
        answers = answers.filter(assignment__item__kind=kind)
    fields_of = {k: categorical_fields(k, project) for k, _ in Item.KINDS}
    rows = []
    for answer in answers.order_by("assignment__item_id", "unit", "field", "assignment__annotator_id"):
        a = answer.assignment
        item = a.item
        if answer.field not in fields_of[item.kind]:
            continue
        value = answer.value
        if item.kind == Item.COMPARISON and answer.field == "choice":
            value = {"1": "b" if a.swapped else "a", "2": "a" if a.swapped else "b"}.get(value, value)
        rows.append(LabelRow(item.pk, item.kind, answer.unit, answer.field, a.annotator_id, value,
                             item.document.domain))
    return rows


def decide(
    item: int, kind: str, unit: str, field: str, values: list[str],
    adjudication: tuple[str, str] | None = None,
) -> Gold:
    """The gold value of one unit's field from its answers and an optional (value, note)
    adjudication: the rules of this module, in one place."""
    if len(set(values)) == 1:  # the common case, without counting
        result = Majority(values[0], False, len(values), {values[0]: len(values)})
    else:
        result = majority(values)
    votes = dict(result.distribution)
    if adjudication is not None:
        return Gold(item, kind, unit, field, adjudication[0], ADJUDICATED, votes, adjudication[1])
    if not result.is_tie:
        provenance = UNANIMOUS if len(votes) == 1 else MAJORITY
        return Gold(item, kind, unit, field, result.label, provenance, votes)
    if kind == Item.VERIFICATION and field == "label":
        return Gold(item, kind, unit, field, VERIFICATION_TIE_VALUE, TIE_RULE, votes)
    return Gold(item, kind, unit, field, None, TIE, votes)


def gold_values(
    project: Project, *, kind: str | None = None, rows: list[LabelRow] | None = None
) -> list[Gold]:
    """Gold of every answered unit; pass `rows` (from label_rows) when you have them."""
    grouped: dict[tuple[int, str, str, str], list[str]] = defaultdict(list)
    for row in rows if rows is not None else label_rows(project, kind=kind):
        grouped[(row.item, row.kind, row.unit, row.field)].append(row.value)
    adjudicated = {
        (adj.item_id, adj.unit, adj.field): (adj.value, adj.note)
        for adj in Adjudication.objects.filter(item__project=project)
    }
    return [
        decide(item, item_kind, unit, field, values, adjudicated.get((item, unit, field)))
        for (item, item_kind, unit, field), values in grouped.items()
    ]
