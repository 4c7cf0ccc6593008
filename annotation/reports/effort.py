"""Annotator effort: time and throughput per annotator."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from django.db.models import Q

from .. import hiring
from ..gold import fetch
from ..models import Assignment
from .agreement import rater_key
from .queries import ReportData, assignment_filter
from .tables import Section, Table

# --------------------------------------------------------------------------- effort


def effort_section(data: ReportData) -> Section | None:
    project, filters, names = data.project, data.filters, data.names
    rows = Assignment.objects.filter(
        Q(item__project=project) & assignment_filter(filters) & hiring.REGULAR
    ).values_list("annotator_id", "item__kind", "status", "active_seconds")
    rows = rows.order_by()  # not Assignment's default order: a sort of 300,000 rows at 100k
    found = fetch(rows)
    if not found:
        return None
    # columns as arrays, one mask per annotator and kind (a 100,000-item project has
    # 300,000 assignments); the sums exactly rounded (math.fsum), in any row order
    # (the strings as int codes, mapped at C speed: numpy's comparisons of string arrays
    # took half the section's time at 100,000 items)
    annotator_ids, kind_names, statuses, seconds = zip(*found, strict=True)
    n = len(found)
    kind_codes = {kind: i for i, kind in enumerate(dict.fromkeys(kind_names))}
    annotator_of = np.fromiter(annotator_ids, dtype=np.int64, count=n)
    kind_of = np.fromiter(map(kind_codes.__getitem__, kind_names), dtype=np.int64, count=n)
    is_submitted = np.fromiter(map(Assignment.SUBMITTED.__eq__, statuses), dtype=bool, count=n)
    is_skipped = np.fromiter(map(Assignment.SKIPPED.__eq__, statuses), dtype=bool, count=n)
    seconds_of = np.array(seconds, dtype=np.float64)
    masks: dict[tuple[int, str], npt.NDArray[np.bool_]] = {}
    for annotator in dict.fromkeys(annotator_ids):
        mine = annotator_of == annotator
        masks[(annotator, "all")] = mine
        for kind, code in kind_codes.items():
            if (both := mine & (kind_of == code)).any():
                masks[(annotator, kind)] = both
    table_rows = []
    order = sorted(
        masks, key=lambda k: (rater_key(names.get(k[0], f"A?{k[0]}")), k[1] != "all", k[1])
    )
    for annotator, kind in order:
        mask = masks[(annotator, kind)]
        submitted = seconds_of[mask & is_submitted]
        skipped = int((mask & is_skipped).sum())
        table_rows.append(
            (
                names.get(annotator, f"A?{annotator}"),
                kind,
                int(mask.sum()),
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
