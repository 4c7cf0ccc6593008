"""Annotator effort: time and throughput per annotator."""

from __future__ import annotations

import statistics
from collections import defaultdict

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
    per: dict[tuple[int, str], list[tuple[str, float]]] = defaultdict(list)
    for annotator, kind, status, seconds in fetch(rows):
        per[(annotator, kind)].append((status, seconds))
        per[(annotator, "all")].append((status, seconds))
    if not per:
        return None
    table_rows = []
    order = sorted(
        per, key=lambda k: (rater_key(names.get(k[0], f"A?{k[0]}")), k[1] != "all", k[1])
    )
    for annotator, kind in order:
        entries = per[(annotator, kind)]
        submitted = [s for status, s in entries if status == Assignment.SUBMITTED]
        skipped = sum(status == Assignment.SKIPPED for status, _ in entries)
        table_rows.append(
            (
                names.get(annotator, f"A?{annotator}"),
                kind,
                len(entries),
                len(submitted),
                skipped,
                len(submitted) + skipped,
                statistics.median(submitted) if submitted else None,
                sum(submitted) / 3600,
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
