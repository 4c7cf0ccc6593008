"""Annotator effort: time and throughput per annotator."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from django.db.models import Case, IntegerField, Q, Value, When

from .. import hiring
from ..answers import fetch
from ..models import Assignment
from .agreement import rater_key
from .queries import ReportData, assignment_filter
from .tables import Section, Table


def _assignments(data: ReportData) -> list[tuple[int, str, int, float]]:
    """(annotator id, kind, status code, active seconds) of each assignment counted."""
    project, filters = data.project, data.filters
    # the status as a small int (1 submitted, 2 skipped, 0 other) from the database: a
    # str per assignment costs more to read than the CASE does to compute
    status = Case(
        When(status=Assignment.SUBMITTED, then=Value(1)),
        When(status=Assignment.SKIPPED, then=Value(2)),
        default=Value(0),
        output_field=IntegerField(),
    )
    rows = (
        Assignment.objects.filter(
            Q(item__project=project) & assignment_filter(filters) & hiring.regular(joined="item")
        )
        .annotate(code=status)
        .order_by()  # not Assignment's default order: no sort
        .values_list("annotator_id", "item__kind", "code", "active_seconds")
    )
    return fetch(rows)


def _row_groups(
    found: list[tuple[int, str, int, float]],
) -> tuple[
    dict[tuple[int, str], npt.NDArray[np.intp]],
    npt.NDArray[np.bool_],
    npt.NDArray[np.bool_],
    npt.NDArray[np.float64],
]:
    """Each (annotator, "all") and (annotator, kind)'s rows of `found` as index arrays,
    and the columns submitted, skipped and active seconds."""
    annotator_ids, kind_names, statuses, seconds = zip(*found, strict=True)
    n = len(found)
    kinds = sorted(set(kind_names))
    # kinds as int codes: numpy's comparisons of string arrays are slow
    code_of = {kind: i for i, kind in enumerate(kinds)}
    kind_of = np.fromiter(map(code_of.__getitem__, kind_names), dtype=np.int64, count=n)
    annotator_of = np.fromiter(annotator_ids, dtype=np.int64, count=n)
    status_of = np.fromiter(statuses, dtype=np.int64, count=n)
    rows_by = {(a, "all"): rows for a, rows in _rows_of(annotator_of).items()}
    for code, rows in _rows_of(annotator_of * len(kinds) + kind_of).items():
        rows_by[(code // len(kinds), kinds[code % len(kinds)])] = rows
    return rows_by, status_of == 1, status_of == 2, np.array(seconds, dtype=np.float64)


def _rows_of(codes: npt.NDArray[np.int64]) -> dict[int, npt.NDArray[np.intp]]:
    """Each code of `codes` -> the indices holding it (one stable sort)."""
    order = np.argsort(codes, kind="stable")
    values, starts = np.unique(codes[order], return_index=True)
    return dict(zip(values.tolist(), np.split(order, starts[1:]), strict=True))


def effort_section(data: ReportData) -> Section | None:
    names, filters = data.names, data.filters
    found = _assignments(data)
    if not found:
        return None
    rows_by, is_submitted, is_skipped, seconds_of = _row_groups(found)
    name = {a: names.get(a, f"A?{a}") for a, _ in rows_by}
    table_rows = []
    for annotator, kind in sorted(
        rows_by, key=lambda k: (rater_key(name[k[0]]), k[1] != "all", k[1], k[0])
    ):
        mine = rows_by[(annotator, kind)]
        submitted = seconds_of[mine[is_submitted[mine]]]
        skipped = int(is_skipped[mine].sum())
        table_rows.append(
            (
                name[annotator],
                kind,
                len(mine),
                len(submitted),
                skipped,
                len(submitted) + skipped,
                float(np.median(submitted)) if len(submitted) else None,  # as statistics'
                math.fsum(submitted.tolist()) / 3600,
            )
        )
    notes = ["Active seconds exclude idle gaps; the median is over submitted items."]
    if filters.date_from or filters.date_to:
        notes.append("With a date range only items submitted in it are counted.")
    return Section(
        "effort",
        "Annotator effort",
        tuple(notes),
        (
            Table(
                "effort",
                "Annotator effort",
                (
                    "annotator",
                    "kind",
                    "assigned",
                    "submitted",
                    "skipped",
                    "items done",
                    "median active s per item",
                    "active hours",
                ),
                tuple(table_rows),
            ),
        ),
    )
