"""Answers as comparable labels, and the gold value of every unit with its provenance.

Gold is: the adjudicated value when a researcher set one; otherwise the unanimous or
majority value of the submitted answers; a tie takes the kind's tie value (a
verification claim label: "inconclusive-not-enough", VeriScore's rule) until
adjudicated; other ties have no gold.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Callable, Container, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Model, Q, QuerySet
from django.db.models.expressions import RawSQL

from . import kinds
from .hiring.models import regular
from .models import Adjudication, Answer, Assignment, Item, Project
from .stats import Majority, majority

UNANIMOUS = "unanimous"
MAJORITY = "majority"
ADJUDICATED = "adjudicated"
TIE_RULE = "tie-rule"  # a tie read by the kind's rule (a claim label: inconclusive)
TIE = "tie"  # no gold until adjudicated


class LabelRow(NamedTuple):
    item: int
    kind: str
    unit: str
    field: str
    annotator: int
    value: str  # comparable across annotators (a comparison choice as its side "a"/"b")
    domain: str
    raw: str = ""  # as stored
    swapped: bool = False


class Gold(NamedTuple):
    """A unit's gold value. A NamedTuple, not a dataclass: a report makes one per unit
    (made by tuple.__new__ there, a fraction of a frozen dataclass's __init__)."""

    item: int
    kind: str
    unit: str
    field: str
    value: str | None
    provenance: str
    votes: dict[str, int]  # read only: golds of the same answers may share one dict
    note: str = ""

    @property
    def disagreement(self) -> float:
        """Share of answers that differ from the most common one (0 = everyone agrees)."""
        n = sum(self.votes.values())
        return 1 - max(self.votes.values()) / n if n else 0.0


def fetch(qs: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """The rows of a values_list() query as plain tuples, straight from the cursor.

    Skips the ORM's per-row converters, which cost more than the query itself on
    100,000-row reports; callers only read ints and strings (booleans via bool()).
    """
    if (query := _sql(qs)) is None:
        return []
    with connections[qs.db].cursor() as cursor:
        cursor.execute(*query)
        return list(cursor.fetchall())


def _sql(qs: QuerySet[Any]) -> tuple[str, tuple[Any, ...]] | None:
    """The query's SQL and parameters; None when it can have no row (a filter on an empty
    list of ids, which Django does not send to the database, as its ORM gives no row)."""
    try:
        return qs.query.sql_with_params()
    except EmptyResultSet:
        return None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off meanwhile (as it was, after). Reports make
    hundreds of thousands of small objects and no reference cycle: with the collector on,
    its passes over them cost as much as making them (measured: half the CPU of
    label_rows and most of field_units at 10,000 items)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def chunks(qs: QuerySet[Any], size: int = 20_000) -> Iterator[list[tuple[Any, ...]]]:
    """`fetch`, a chunk at a time: the rows of a large query are never all held as
    Python tuples at once."""
    if (query := _sql(qs)) is None:
        return
    with connections[qs.db].cursor() as cursor:
        cursor.execute(*query)
        while chunk := cursor.fetchmany(size):
            yield chunk


def stream(qs: QuerySet[Any], size: int = 20_000) -> Iterator[tuple[Any, ...]]:
    """`chunks`, row by row."""
    for chunk in chunks(qs, size):
        yield from chunk


def related(q: Q, prefix: str) -> Q:
    """`q`, a filter of plain lookups on a model, as one on a model related to it through
    `prefix` ("assignment__"): Q(item__kind="x") -> Q(assignment__item__kind="x")."""
    out = Q()
    out.connector, out.negated = q.connector, q.negated
    for child in q.children:
        if isinstance(child, Q):
            out.children.append(related(child, prefix))
        elif isinstance(child, tuple):
            out.children.append((prefix + child[0], child[1]))
        else:  # an expression (Exists, ...): its own joins, not a lookup path
            raise TypeError(f"only plain lookups can be moved to a related model: {child!r}")
    return out


UnitKey = tuple[int, str, str]  # (item, unit, field)


class Labels(NamedTuple):
    """The answers of label_rows, and the same grouped, from one pass over them."""

    rows: list[LabelRow]  # in (item, unit, field, annotator) order
    rows_of: dict[str, list[LabelRow]]  # kind -> its rows, in that order
    # (item, unit, field) -> annotator -> comparable value, in that order; units of the
    # same answers by the same annotators share one read-only dict (a 100,000-item report
    # holds a few thousand distinct ones, not one per unit)
    grouped: dict[UnitKey, dict[int, str]]
    item_kinds: dict[int, str]  # item -> its kind, for the items with rows


@collector_paused()
def label_rows(
    project: Project, *, kind: str | None = None, where: Q | None = None
) -> list[LabelRow]:
    """Submitted answers to categorical fields, as each kind compares them; `where`
    narrows the assignments (reports' filters)."""
    return read_labels(project, kind=kind, where=where).rows


class KindRows(dict[str, list[LabelRow]]):
    """kind -> its rows (Labels.rows_of), and the rows of a kind read_labels made none for
    (`rows_for`) read when first asked for: a report's sections read the rows of the kinds
    with sections of their own (45,000 of 110,000 rows at 10,000 items are segments')."""

    def __init__(self, made: dict[str, list[LabelRow]], read: Callable[[str], list[LabelRow]]):
        super().__init__(made)
        self._read = read

    def __missing__(self, kind: str) -> list[LabelRow]:
        rows = self[kind] = self._read(kind)
        return rows

    def get(self, kind: str, default: Any = None) -> Any:
        """The kind's rows (read if not yet made), or `default` when it has none. Unlike a
        dict, `in`, iteration and items() see only the kinds made or read so far."""
        return self[kind] or default


@collector_paused()
def read_labels(
    project: Project,
    *,
    kind: str | None = None,
    where: Q | None = None,
    rows_for: Container[str] | None = None,
) -> Labels:
    """label_rows' rows, per kind and grouped per unit as well (reports read all three).
    With `rows_for` only those kinds' rows are made (rows, rows_of); every unit is grouped."""
    # Training and known-answer items never count for agreement or gold (hiring's
    # `regular`, a NOT EXISTS: PostgreSQL estimated `item__quality__isnull=True` as 0.5 %
    # of the rows and planned this query as nested loops with a sort spilled to disk).
    which = Q(item__project=project, status=Assignment.SUBMITTED)
    if kind:
        which &= Q(item__kind=kind)
    if where is not None:
        which &= where
    fields_of = {spec.name: (spec, spec.categorical(project)) for spec in kinds.all_specs()}
    all_fields = sorted({f for _, fields in fields_of.values() for f in fields})
    # Each item's kind and domain (one string each), and its kind's comparable values per
    # order shown: (field, value) -> (field, comparable, raw, swapped), or None for a field
    # the kind does not compare. Items, not assignments, are the lookup table: the answers
    # carry their assignment's item, annotator and order (a third of the rows to read).
    shared: dict[str, str] = {}
    seen: dict[str, tuple[dict[Any, Any], dict[Any, Any]]] = {}
    items = Item.objects.filter(regular("pk"), project=project)
    if kind:
        items = items.filter(kind=kind)
    info = {
        pk: (
            shared.setdefault(item_kind, item_kind),
            shared.setdefault(domain, domain),
            seen.setdefault(item_kind, ({}, {})),
        )
        for pk, item_kind, domain in fetch(
            items.values_list("pk", "kind", "document__domain").order_by()
        )
    }
    # joined to the assignments, not `assignment IN (their query)`: the same rows, and
    # PostgreSQL's plan is a join, half the time (0.18 s instead of 0.34 at 10,000 items)
    answers_query = (
        Answer.objects.filter(
            related(which, "assignment__"), regular("assignment__item_id"), field__in=all_fields
        )
        .values_list(
            "assignment__item_id",
            "assignment__annotator_id",
            "assignment__swapped",
            "unit",
            "field",
            "value",
        )
        # by the item's own id, not the assignment's item_id (Django writes the latter for
        # either name): the same order, but SQLite reads the items by their project index
        # in id order and then sorts only each item's rows (its "right part of ORDER BY"),
        # not all of them: 5 % of the query at 10,000 and 100,000 items
        .order_by(
            RawSQL(f'"{Item._meta.db_table}"."id"', ()),
            "unit",
            "field",
            "assignment__annotator_id",
        )
    )
    # One answer is one LabelRow; its strings are shared (a 100,000-item report holds a
    # few distinct units, fields and values, not a copy per answer) and each kind's
    # comparable value is computed once per (kind, field, value, order). The rows come
    # unit by unit: each unit's answers are grouped as they pass.
    units: dict[str, str] = {}
    rows: list[LabelRow] = []
    append = rows.append
    new = tuple.__new__  # LabelRow(...) without its Python-level __new__: a frame per answer
    grouped: dict[UnitKey, dict[int, str]] = {}
    item_kinds: dict[int, str] = {}
    runs: list[tuple[str, int]] = []  # (kind, index of its first row) where the kind changes
    same_answers: dict[tuple[tuple[int, str], ...], dict[int, str]] = {}
    key: UnitKey | None = None
    at_item, at_unit, at_field = None, "", ""  # the key's parts
    answers: dict[int, str] = {}
    looked_up = None  # the item whose kind, domain and values are at hand
    item_kind = domain = ""
    by_order: tuple[dict[Any, Any], dict[Any, Any]] = ({}, {})
    keep = True  # the item's kind is one of `rows_for`
    for chunk in chunks(answers_query):
        for item, annotator, swapped, unit, fld, value in chunk:
            if item != looked_up:  # the rows come item by item
                item_kind, domain, by_order = info[item]
                looked_up = item
                keep = rows_for is None or item_kind in rows_for
            comparables = by_order[swapped]  # 0/1 or False/True
            known = comparables.get(pair := (fld, value))
            if known is None and pair not in comparables:
                spec, fields = fields_of[item_kind]
                known = comparables[pair] = (
                    (fld, spec.comparable(fld, value, bool(swapped)), value, bool(swapped))
                    if fld in fields
                    else None
                )
            if known is None:
                continue
            fld, comparable, raw, flag = known
            if item != at_item or unit != at_unit or fld != at_field:  # a new unit
                if key is not None:
                    grouped[key] = same_answers.setdefault(tuple(answers.items()), answers)
                if item != at_item:
                    item_kinds[item] = item_kind  # an item has one kind
                    if keep and (not runs or runs[-1][0] != item_kind):
                        runs.append((item_kind, len(rows)))
                unit = units.setdefault(unit, unit)
                key = at_item, at_unit, at_field = item, unit, fld
                answers = {}  # the ORDER BY gives each unit's rows together: a new unit
            else:
                unit = at_unit
            if keep:
                append(
                    new(
                        LabelRow,
                        (item, item_kind, unit, fld, annotator, comparable, domain, raw, flag),
                    )
                )
            answers[annotator] = comparable
    if key is not None:
        grouped[key] = same_answers.setdefault(tuple(answers.items()), answers)
    rows_of: dict[str, list[LabelRow]] = defaultdict(list)
    bounds = [begin for _, begin in runs] + [len(rows)]
    for i, (run_kind, begin) in enumerate(runs):
        rows_of[run_kind] += rows[begin : bounds[i + 1]]
    return Labels(rows, rows_of, grouped, item_kinds)


def decide(
    item: int,
    kind: str,
    unit: str,
    field: str,
    values: list[str],
    adjudication: tuple[str, str] | None = None,
) -> Gold:
    """The gold value of one unit's field from its answers and an optional (value, note)
    adjudication: the rules of this module, in one place."""
    if len(set(values)) == 1:  # the common case, without counting
        result = Majority(values[0], False, len(values), {values[0]: len(values)})
    else:
        result = majority(values)
    votes = {str(k): v for k, v in result.distribution.items()}
    if adjudication is not None:
        return Gold(item, kind, unit, field, adjudication[0], ADJUDICATED, votes, adjudication[1])
    if not result.is_tie:
        provenance = UNANIMOUS if len(votes) == 1 else MAJORITY
        return Gold(
            item,
            kind,
            unit,
            field,
            None if result.label is None else str(result.label),
            provenance,
            votes,
        )
    tie_value = kinds.get(kind).tie_value(field)
    if tie_value is not None:
        return Gold(item, kind, unit, field, tie_value, TIE_RULE, votes)
    return Gold(item, kind, unit, field, None, TIE, votes)


@collector_paused()
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


def gold_by_target(project: Project, model: type[Model]) -> dict[int, Gold]:
    """Claim (or segment) id -> its human gold label, from every kind that judges it;
    a later kind does not override an earlier one."""
    found: dict[int, Gold] = {}
    for spec in kinds.judging(model):
        for t in spec.verdict_targets(project, gold_values(project, kind=spec.name)):
            found.setdefault(t.target, t.gold)
    return found
