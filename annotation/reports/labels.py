"""How the gold values of a kind's verdict field are distributed: the label section of
the kinds that label claims or facts (their report_sections)."""

from __future__ import annotations

from collections import Counter

from ..gold import Gold
from ..kinds import ReportKind
from .tables import Cell, Section, Table


def label_distribution(
    spec: ReportKind, golds: list[Gold], slug: str, title: str, what: str, tie_note: str
) -> Section | None:
    """How the gold values of the kind's verdict field are distributed."""
    labels = [g for g in golds if g.field == spec.verdict_field]
    field = spec.field(spec.verdict_field)
    if not labels or field is None:
        return None
    counts = Counter(g.value for g in labels)
    total = len(labels)
    table_rows: list[tuple[Cell, ...]] = [
        (name, counts.get(label, 0), 100 * counts.get(label, 0) / total)
        for label, name in field.choices
    ]
    ties = counts.get(None, 0)
    other = total - ties - sum(counts.get(label, 0) for label in field.values)
    if other:
        table_rows.append(("Other (adjudicated outside the label set)", other, 100 * other / total))
    if ties:
        table_rows.append(("Tie (no gold label until adjudicated)", ties, 100 * ties / total))
    provenance = Counter(g.provenance for g in labels)
    return Section(
        slug,
        title,
        (
            f"Gold label of {total} {what}: "
            + ", ".join(f"{n} {p}" for p, n in sorted(provenance.items()))
            + ". "
            + tie_note,
        ),
        (
            Table(
                slug,
                f"Distribution of the {what[:-1]} labels",
                ("label", "count", "%"),
                tuple(table_rows),
                decimals=1,
            ),
        ),
    )
