"""The submitted answers as integer codes: one layer between the database and everything
that computes (agreement, gold, the kind sections, planning, exports).

One query reads a project's answers to categorical fields; `read_answers` lays them out
per (kind, level, field) as a units x annotators matrix of codes (-1 where an annotator
gave no answer), with the matrix's distinct rows, how many units have each, and each
unit's row. What holds for a row of answers holds for every unit with that row, so gold
and agreement compute once per distinct row.

A unit is (item, unit name); its level is the name's type ("evidence:3" -> "evidence").
Values are as each kind compares them (`KindSpec.comparable`: a comparison's choice is
the side "a"/"b" whatever the order shown); `raw` keeps them as stored.
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from itertools import chain, compress
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from . import kinds
from .hiring.models import regular
from .kinds import unit_type
from .models import Assignment, Item, Project
from .stats.inter_rater import unique_rows

Codes = npt.NDArray[np.int64]
UnitKey = tuple[int, str, str]  # (item, unit, field)
FieldKey = tuple[str, str, str]  # (kind, level, field)


def chunks(qs: QuerySet[Any], size: int = 20_000) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of a values_list() query as plain tuples straight from the cursor, a chunk
    at a time: no ORM per-row converters, which cost more than the query itself on
    100,000-row reports (callers only read ints and strings, booleans via bool()). No row
    for a query on an empty list of ids, which Django does not send to the database."""
    try:
        query = qs.query.sql_with_params()
    except EmptyResultSet:
        return
    with connections[qs.db].cursor() as cursor:
        cursor.execute(*query)
        while chunk := cursor.fetchmany(size):
            yield chunk


def fetch(qs: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """The rows of `chunks`, all at once."""
    return list(chain.from_iterable(chunks(qs)))


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off meanwhile (as it was, after). Reports make
    hundreds of thousands of small objects and no reference cycle: with the collector on,
    its passes over them cost as much as making them."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@dataclass(frozen=True, eq=False)
class FieldCodes:
    """One (kind, level, field): its units in (item, unit) order, its annotators in id
    order, and who answered what as codes into `values` (-1: no answer)."""

    kind: str
    level: str
    field: str
    items: Codes  # per unit: its item id
    units: tuple[str, ...]  # per unit: its name ("item", "evidence:3")
    annotators: Codes  # per column: the annotator's user id, ascending
    values: tuple[str, ...]  # code -> the value as the kind compares it
    codes: Codes  # units x annotators
    raw_values: tuple[str, ...]  # raw code -> the value as stored
    raw: Codes  # units x annotators: codes into raw_values, -1 where no answer
    distinct: Codes = dataclass_field(init=False)  # the distinct rows of `codes`
    counts: Codes = dataclass_field(init=False)  # per distinct row: how many units have it
    row_of: Codes = dataclass_field(init=False)  # per unit: its row in `distinct`

    def __post_init__(self) -> None:
        distinct, row_of, counts = unique_rows(self.codes)
        object.__setattr__(self, "distinct", distinct)
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "row_of", row_of)

    def select(self, mask: npt.NDArray[np.bool_]) -> FieldCodes:
        """The units where `mask` is true, without the annotators left with no answer."""
        codes = self.codes[mask]
        answered = (codes >= 0).any(axis=0)
        return replace(
            self,
            items=self.items[mask],
            units=tuple(compress(self.units, mask.tolist())),
            annotators=self.annotators[answered],
            codes=codes[:, answered],
            raw=self.raw[mask][:, answered],
        )

    def keys(self) -> Iterator[UnitKey]:
        """(item, unit, field) per unit, in order."""
        fld = self.field
        return (
            (item, unit, fld) for item, unit in zip(self.items.tolist(), self.units, strict=True)
        )

    def answers(self, row: int) -> dict[int, str]:
        """annotator -> value of a distinct row."""
        annotators, values = self.annotators.tolist(), self.values
        return {
            annotators[a]: values[c] for a, c in enumerate(self.distinct[row].tolist()) if c >= 0
        }

    def all_equal(self, value: str) -> npt.NDArray[np.bool_]:
        """Per unit: whether every answer on it is `value` (a unit has one answer at least)."""
        code = self.values.index(value) if value in self.values else -2
        rows: npt.NDArray[np.bool_] = ((self.distinct == code) | (self.distinct < 0)).all(axis=1)
        return rows[self.row_of]


class Answers(NamedTuple):
    """A project's submitted answers to categorical fields, per (kind, level, field)."""

    fields: dict[FieldKey, FieldCodes]  # in order of each field's first unit
    domains: dict[int, str]  # item -> its document's domain, for the items with answers

    def of_kind(self, kind: str) -> list[FieldCodes]:
        return [f for key, f in self.fields.items() if key[0] == kind]

    def where(self, codes: FieldCodes) -> FieldCodes:
        """`codes`, on the units its field is asked on (`Field.only_when`: the error type
        of an incorrect segment): where every annotator who answered the condition gave
        its value."""
        spec_field = kinds.get(codes.kind).field(codes.field)
        if spec_field is None or spec_field.only_when is None:
            return codes
        name, value = spec_field.only_when
        met: set[tuple[int, str]] = set()
        if (condition := self.fields.get((codes.kind, codes.level, name))) is not None:
            units = zip(condition.items.tolist(), condition.units, strict=True)
            met = set(compress(units, condition.all_equal(value).tolist()))
        units = zip(codes.items.tolist(), codes.units, strict=True)
        mask = np.array([unit in met for unit in units], dtype=np.bool_)
        return codes.select(mask)


class _Field:
    """A (kind, field)'s values while the answers are read: comparable and raw codes."""

    def __init__(self) -> None:
        self.values: dict[str, int] = {}
        self.raw: dict[str, int] = {}

    def code(self, comparable: str, raw: str) -> tuple[int, int]:
        return (
            self.values.setdefault(comparable, len(self.values)),
            self.raw.setdefault(raw, len(self.raw)),
        )


class _Level:
    """A (kind, level, field)'s units and answers while they are read."""

    def __init__(self, field: _Field) -> None:
        self.field = field
        self.items: list[int] = []
        self.units: list[str] = []
        self.cells = array("q")  # (unit index, annotator, code, raw code) per answer

    def done(self, key: FieldKey) -> FieldCodes:
        cells = np.frombuffer(self.cells, dtype=np.int64).reshape(-1, 4)
        annotators, column = np.unique(cells[:, 1], return_inverse=True)
        shape = (len(self.units), len(annotators))
        codes, raw = np.full(shape, -1, np.int64), np.full(shape, -1, np.int64)
        codes[cells[:, 0], column] = cells[:, 2]
        raw[cells[:, 0], column] = cells[:, 3]
        return FieldCodes(
            *key,
            np.array(self.items, dtype=np.int64),
            tuple(self.units),
            annotators,
            tuple(self.field.values),
            codes,
            tuple(self.field.raw),
            raw,
        )


def _query(project: Project, kind: str | None, where: Q | None) -> QuerySet[Any]:
    # training and known-answer items never count for agreement or gold (`regular`)
    which = Q(item__project=project, status=Assignment.SUBMITTED)
    if kind:
        which &= Q(item__kind=kind)
    fields = sorted({f for spec in kinds.all_specs() for f in spec.categorical(project)})
    return (
        Assignment.objects.filter(which, where or Q(), regular(), answers__field__in=fields)
        .values_list(
            "item_id",
            "annotator_id",
            "swapped",
            "answers__unit",
            "answers__field",
            "answers__value",
        )
        # by the item's own id, not the assignment's item_id: the same order, but SQLite
        # reads the items by their project index in id order and sorts only each item's rows;
        # a unit's answers by annotator, so that the codes (first seen, first numbered) are
        # the same whatever order the database returns equal rows in
        .order_by(
            RawSQL(f'"{Item._meta.db_table}"."id"', ()),
            "answers__unit",
            "answers__field",
            "annotator_id",
        )
    )


@collector_paused()
def read_answers(project: Project, *, kind: str | None = None, where: Q | None = None) -> Answers:
    """The project's submitted answers to categorical fields (of one kind, or those of
    the assignments `where` selects: a report's filters), in one query."""
    items = Item.objects.filter(regular("pk"), project=project)
    if kind:
        items = items.filter(kind=kind)
    info = {pk: (k, d) for pk, k, d in fetch(items.values_list("pk", "kind", "document__domain"))}
    specs = {spec.name: (spec, spec.categorical(project)) for spec in kinds.all_specs()}
    fields: dict[tuple[str, str], _Field] = {}
    levels: dict[FieldKey, _Level] = {}
    # kind -> per order shown (swapped 0/1): (field, value) -> (code, raw code), or None
    # for a field the kind does not compare
    known: dict[str, tuple[dict[Any, Any], dict[Any, Any]]] = {}
    domains: dict[int, str] = {}
    level_of: dict[str, str] = {}  # unit name -> its level
    at_item, at_unit, at_field = None, "", ""  # the unit being read
    item_kind = ""
    by_order: tuple[dict[Any, Any], dict[Any, Any]] = ({}, {})
    level: _Level | None = None
    for chunk in chunks(_query(project, kind, where)):
        for item, annotator, swapped, unit, fld, value in chunk:
            if item != at_item:  # the rows come item by item, unit by unit
                item_kind, domains[item] = info[item]
                by_order = known.setdefault(item_kind, ({}, {}))
            of_order = by_order[swapped]
            if (found := of_order.get(pair := (fld, value), pair)) is pair:
                spec, compared = specs[item_kind]
                found = of_order[pair] = (
                    fields.setdefault((item_kind, fld), _Field()).code(
                        spec.comparable(fld, value, bool(swapped)), value
                    )
                    if fld in compared
                    else None
                )
            if found is None:
                continue
            if item != at_item or unit != at_unit or fld != at_field:  # a new unit
                at_item, at_unit, at_field = item, unit, fld
                if (of_unit := level_of.get(unit)) is None:
                    of_unit = level_of[unit] = unit_type(unit)
                key = (item_kind, of_unit, fld)
                if (level := levels.get(key)) is None:
                    level = levels[key] = _Level(fields[item_kind, fld])
                index = len(level.items)
                level.items.append(item)
                level.units.append(unit)
            level.cells.extend((index, annotator, *found))  # type: ignore[union-attr]
    return Answers({key: lv.done(key) for key, lv in levels.items()}, domains)
