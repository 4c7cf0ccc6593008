"""How much the report's headline figures depend on the gold method (issue 39): each
figure under majority vote and under each annotator model side by side (verifier macro
F1 and balanced accuracy against gold, FActScore of the annotators' gold, the share of
gold choices preferring a system), with the share of units whose gold differs from
majority's. The models' gold comes from the task worker's fits (`gold_models`); a model
not fitted yet is "computing" in the notes and its column is empty meanwhile (the report
is then not cached, so it fills in on a later view)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from .. import kinds
from ..gold import METHOD_MAJORITY, METHOD_TITLES, MODELS, Gold, adjudications, golds_of
from ..models import Item
from .gold_models import DONE, cached_method, fit_of, report_fields
from .pipeline_scores import factscore_section
from .queries import ReportData
from .tables import Section, Table
from .verifiers import verifier_sections

METHODS = (METHOD_MAJORITY, *MODELS)
Figures = dict[tuple[str, str], float | None]  # (figure, of what) -> value


def sensitivity_section(data: ReportData) -> Section | None:
    if not data.answers.fields:
        return None
    golds, pending = _golds(data)
    figures = {m: _figures(data, g) for m, g in golds.items()}
    changed = {m: _changed(golds[METHOD_MAJORITY], g) for m, g in golds.items()}
    # a model not fitted yet has no figures: its column is empty (None)
    rows = [
        (
            "units whose gold differs from majority",
            of,
            *(changed.get(m, {}).get(of) for m in METHODS),
        )
        for of in sorted({k for c in changed.values() for k in c})
    ]
    keys = dict.fromkeys(k for f in figures.values() for k in f)
    rows += [(*key, *(figures.get(m, {}).get(key) for m in METHODS)) for key in keys]
    notes = [
        "Each headline figure with gold by majority vote and by each annotator model"
        " (adjudicated values are gold under every method). FActScore here is that of the"
        " annotators' gold labels on atomic facts; the gold preference share counts one"
        " gold choice per comparison item (the preference table counts every judgement,"
        " whatever the gold).",
        *(
            f"{METHOD_TITLES[m]}: {state}; its column is empty until then."
            for m, state in pending.items()
        ),
    ]
    if data.filters.active:
        notes.append("FActScore is left out: it reads all answers, whatever the filters.")
    table = Table(
        "sensitivity",
        "Headline figures by gold method",
        ("figure", "of", *(METHOD_TITLES[m] for m in METHODS)),
        tuple(rows),
    )
    return Section(
        "sensitivity",
        "Sensitivity to the gold method",
        tuple(notes),
        (table,),
        data={"pending": pending},
    )


def _golds(data: ReportData) -> tuple[dict[str, dict[str, list[Gold]]], dict[str, str]]:
    """method -> kind -> golds of the report's fields; the models still being fitted."""
    fields = report_fields()
    adjudicated = adjudications(data.project, fields)
    out = {METHOD_MAJORITY: golds_of(data.answers, adjudicated, set(fields))}
    pending: dict[str, str] = {}
    for method in MODELS:
        fit = fit_of(data.project, data.filters, method)
        if fit.state == DONE and fit.columns is not None:
            out[method] = golds_of(
                data.answers, adjudicated, set(fields), cached_method(fit.columns)
            )
        else:
            pending[method] = fit.error or fit.progress
    return out, pending


def _changed(majority: dict[str, list[Gold]], other: dict[str, list[Gold]]) -> dict[str, float]:
    """kind.field -> the share of its units whose gold value differs from majority's."""
    base = {(g.item, g.unit, g.field): g.value for gs in majority.values() for g in gs}
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for gs in other.values():
        for g in gs:
            of = counts[f"{g.kind}.{g.field}"]
            of[0] += 1
            of[1] += base.get((g.item, g.unit, g.field)) != g.value
    return {k: changed / n for k, (n, changed) in counts.items() if n}


def _figures(data: ReportData, golds: dict[str, list[Gold]]) -> Figures:
    from .factscore_table import GOLD

    verdict = {s.verdict_field for s in kinds.all_specs() if s.verdict_field}
    variant = replace(
        data,
        golds_of={k: [g for g in gs if g.field in verdict] for k, gs in golds.items()},
        with_charts=False,
        bootstrap=0,
    )
    out: Figures = {}
    for row in _rows(verifier_sections(variant), "verifier-scores"):
        of = f"{row['system']} / {row['level']} / {row['mode']}"
        out["verifier macro F1", of] = _number(row["overall F1 (macro)"])
        out["verifier balanced accuracy", of] = _number(row["balanced accuracy"])
    if not data.filters.active:
        for row in _rows(factscore_section(variant), "factscore"):
            if row["verdict set"] == GOLD:
                of = f"{row['facts from']} / {row['source model']}"
                out["FActScore (annotators' gold)", of] = _number(row["FActScore"])
    out.update(_preference_figures(golds))
    return out


def _rows(sections: Iterable[Section], name: str) -> Iterator[dict[str, Any]]:
    """The rows of the sections' tables called `name`, each as column -> value."""
    for section in sections:
        for table in section.tables:
            if table.name == name:
                yield from (dict(zip(table.columns, row, strict=True)) for row in table.rows)


def _preference_figures(golds: dict[str, list[Gold]]) -> Figures:
    """Per pair of systems (list A, list B) and domain: the share of comparison items whose
    gold choice is list A, among those whose gold is a list."""
    chosen = [
        g
        for spec in kinds.all_specs()
        if "preference" in spec.report_sections and spec.main_field
        for g in golds.get(spec.name, [])
        if g.field == spec.main_field and g.value in ("a", "b")
    ]
    if not chosen:
        return {}
    info = {
        pk: (a or "?", b or "?", domain)
        for pk, a, b, domain in Item.objects.filter(pk__in={g.item for g in chosen}).values_list(
            "pk", "list_a__system__name", "list_b__system__name", "document__domain"
        )
    }
    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for g in chosen:
        a, b, domain = info[g.item]
        for where in (domain or "(no domain)", "all"):
            of = counts[a, b, where]
            of[0] += 1
            of[1] += g.value == "a"
    return {
        ("gold share preferring A", f"{a} (A) vs {b} / {where}"): n_a / n
        for (a, b, where), (n, n_a) in sorted(counts.items())
    }


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None
