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

# --------------------------------------------------------------------------- effort


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
            Q(item__project=project) & assignment_filter(filters) & hiring.regular()
        )
        .annotate(code=status)
        .values_list("annotator_id", "item__kind", "code", "active_seconds")
    )
    rows = rows.order_by()  # not Assignment's default order: a sort of 300,000 rows at 100k
    return fetch(rows)


def _row_groups(
    found: list[tuple[int, str, int, float]],
) -> tuple[
    dict[tuple[int, str], npt.NDArray[np.intp]],
    npt.NDArray[np.bool_],
    npt.NDArray[np.bool_],
    npt.NDArray[np.float64],
]:
    """Each (annotator, "all" or kind)'s rows of `found`, in the table's first order,
    and the columns submitted, skipped and active seconds."""
    # columns as arrays, each annotator's and (annotator, kind)'s rows as index arrays
    # from one stable sort (not a mask per annotator: a project of hired annotators has
    # hundreds); the sums exactly rounded (math.fsum), in any row order (the strings as
    # int codes, mapped at C speed: numpy's comparisons of string arrays are slow)
    annotator_ids, kind_names, statuses, seconds = zip(*found, strict=True)
    n = len(found)
    kind_codes = {kind: i for i, kind in enumerate(dict.fromkeys(kind_names))}
    kinds = list(kind_codes)
    annotator_of = np.fromiter(annotator_ids, dtype=np.int64, count=n)
    kind_of = np.fromiter(map(kind_codes.__getitem__, kind_names), dtype=np.int64, count=n)
    status_of = np.fromiter(statuses, dtype=np.int64, count=n)
    is_submitted, is_skipped = status_of == 1, status_of == 2
    seconds_of = np.array(seconds, dtype=np.float64)
    annotators, annotator_code = np.unique(annotator_of, return_inverse=True)
    found_rows: dict[tuple[int, str], npt.NDArray[np.intp]] = {}
    for codes, name_of in (
        (annotator_code, lambda c: (int(annotators[c]), "all")),
        (
            annotator_code * len(kinds) + kind_of,
            lambda c: (int(annotators[c // len(kinds)]), kinds[c % len(kinds)]),
        ),
    ):
        by_code = np.argsort(codes, kind="stable")
        groups, starts = np.unique(codes[by_code], return_index=True)
        for code, rows_of in zip(groups.tolist(), np.split(by_code, starts[1:]), strict=True):
            found_rows[name_of(code)] = rows_of
    # in the order of the earlier code (annotators as first seen, "all", then each kind):
    # sorted() below keeps it among rows of equal names
    rows_by = {
        key: found_rows[key]
        for annotator in dict.fromkeys(annotator_ids)
        for key in [(annotator, "all"), *((annotator, kind) for kind in kinds)]
        if key in found_rows
    }
    return rows_by, is_submitted, is_skipped, seconds_of


def effort_section(data: ReportData) -> Section | None:
    names, filters = data.names, data.filters
    found = _assignments(data)
    if not found:
        return None
    rows_by, is_submitted, is_skipped, seconds_of = _row_groups(found)
    table_rows = []
    order = sorted(
        rows_by, key=lambda k: (rater_key(names.get(k[0], f"A?{k[0]}")), k[1] != "all", k[1])
    )
    for annotator, kind in order:
        mine = rows_by[(annotator, kind)]
        submitted = seconds_of[mine[is_submitted[mine]]]
        skipped = int(is_skipped[mine].sum())
        table_rows.append(
            (
                names.get(annotator, f"A?{annotator}"),
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
