"""Disagreement drill-down: from an agreement figure to the units behind it.

A figure is a field of a kind (every unit whose annotators disagree on it), a category of
that field (the units where some but not all annotators gave it: what its per-category
kappa counts against), or a pair of annotators (the units both answered differently).
Each unit comes with every annotator's label by pseudonym, its gold and the gold's
provenance (`gold.gold_values`, read-only) and a link to its place on the adjudication
page. One table, so the page, CSV and JSON share it."""

from __future__ import annotations

from collections import defaultdict

from django.urls import reverse
from django.utils.http import urlencode
from django.utils.text import slugify

from .. import gold, kinds
from ..models import Project
from .tables import Table


def disagreement_table(
    project: Project,
    *,
    kind: str,
    field: str,
    category: str = "",
    pair: tuple[str, str] | None = None,
) -> Table:
    """The units behind one figure (see the module docstring); `pair` as pseudonyms."""
    names = dict(project.memberships.values_list("user_id", "pseudonym"))
    rows = [r for r in gold.label_rows(project, kind=kind) if r.field == field]
    labels: dict[tuple[int, str], dict[str, str]] = defaultdict(dict)
    for r in rows:
        labels[(r.item, r.unit)][names.get(r.annotator, f"annotator {r.annotator}")] = r.value
    golds = {(g.item, g.unit): g for g in gold.gold_values(project, kind=kind)}
    people = sorted({name for given in labels.values() for name in given})
    adjudication = reverse("adjudication", args=[project.pk])
    query = urlencode({"kind": kind, "field": field})
    out = []
    for (item, unit), given in sorted(labels.items()):
        values = set(given.values())
        if pair is not None:
            a, b = pair
            if a not in given or b not in given or given[a] == given[b]:
                continue
        elif category:
            if category not in values or len(values) == 1:
                continue
        elif len(values) < 2:
            continue
        g = golds.get((item, unit))
        out.append(
            (
                item,
                unit,
                *[given.get(name) for name in people],
                g.value if g else None,
                g.provenance if g else "",
                f"{adjudication}?{query}#unit-{item}-{slugify(unit)}-{field}",
            )
        )
    what = (
        f"annotators {pair[0]} and {pair[1]} differ"
        if pair
        else f"some but not all gave {category!r}"
        if category
        else "the annotators disagree"
    )
    return Table(
        "disagreements",
        f"{kind} {field}: units where {what}",
        ("item", "unit", *people, "gold", "gold_provenance", "adjudication_url"),
        tuple(out),
        note="Every annotator's label by pseudonym; the gold as the reports use it.",
    )


def figure_table(project: Project, params: dict[str, str]) -> Table:
    """The drill-down's table from its query (page and API): kind, field (one of the
    kind's categorical fields), and category, or a and b (pseudonyms); ValueError
    "name: message" for a bad one."""
    kind, field = params.get("kind", ""), params.get("field", "")
    if kind not in {spec.name for spec in kinds.all_specs()}:
        raise ValueError(f"kind: no such kind {kind!r}")
    if field not in kinds.get(kind).categorical(project):
        raise ValueError(f"field: {kind} items have no categorical field {field!r}")
    a, b = params.get("a", ""), params.get("b", "")
    if bool(a) != bool(b):
        raise ValueError("a: give both annotators of the pair (a and b)")
    return disagreement_table(
        project,
        kind=kind,
        field=field,
        category=params.get("category", ""),
        pair=(a, b) if a else None,
    )
