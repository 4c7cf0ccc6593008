"""Inter-annotator agreement sections, per kind, level and field."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

from .. import charts, kinds, stats
from ..kinds import unit_type
from ..stats.ratings import Ratings
from .queries import ReportData
from .tables import Cell, Chart, Section, Table, failed_section

# --------------------------------------------------------------------------- agreement


def field_units(data: ReportData) -> dict[tuple[str, str, str], dict[Hashable, dict[str, str]]]:
    """(kind, unit type, field) -> unit -> annotator name -> answer, as agreement reads them.

    A field asked only when another one has a value (the error type of an incorrect
    segment) is compared on the units where every annotator who judged it gave that value.
    """
    grouped, item_kinds = data.grouped, data.item_kinds
    names = {a: data.names.get(a, f"A?{a}") for a in {r for row in grouped.values() for r in row}}
    conditions = {
        (s.name, f.name): f.only_when for s in kinds.all_specs() for f in s.fields if f.only_when
    }
    by_spec: dict[tuple[str, str, str], dict[Hashable, dict[str, str]]] = defaultdict(dict)
    # kind -> (unit, field) -> its units' dict in by_spec and the field's condition, once
    # per distinct triple (a few hundred in a 100,000-item report)
    targets: dict[str, dict[tuple[str, str], tuple[dict[Hashable, dict[str, str]], Any]]] = {}
    # answers by name, once per answers dict (units of the same answers share one: queries)
    named: dict[int, dict[str, str]] = {}
    conditions_met: dict[tuple[Any, int], bool] = {}
    at_item = None
    prefix = ""
    of_kind: dict[tuple[str, str], tuple[dict[Hashable, dict[str, str]], Any]] = {}
    for (item, unit, fld), by_rater in grouped.items():  # item by item
        if item != at_item:
            at_item, prefix = item, f"{item}/"
            kind = item_kinds[item]
            of_kind = targets.setdefault(kind, {})
        if (target := of_kind.get(pair := (unit, fld))) is None:
            target = of_kind[pair] = (
                by_spec[(kind, unit_type(unit), fld)],
                conditions.get((kind, fld)),
            )
        units, condition = target
        if condition:
            other = grouped.get((item, unit, condition[0]))
            if not other:
                continue
            # once per (condition, answers dict): units of the same answers share one
            if (met := conditions_met.get(held := (condition, id(other)))) is None:
                met = conditions_met[held] = all(v == condition[1] for v in other.values())
            if not met:
                continue
        if (by_name := named.get(id(by_rater))) is None:
            by_name = named[id(by_rater)] = {names[a]: v for a, v in by_rater.items()}
        units[prefix + unit] = by_name
    return by_spec


def agreement_sections(data: ReportData) -> list[Section]:
    project, names = data.project, data.names
    bootstrap, seed, with_charts = data.bootstrap, data.seed, data.with_charts
    by_spec = field_units(data)
    rater_order = {name: i for i, name in enumerate(sorted(names.values(), key=rater_key))}

    overview_rows = []
    sections = []
    own = project.agreement_weights or {}  # the researcher's distances and weights
    for spec in kinds.all_specs():
        for agreement in spec.agreement:
            kind, level, fld, title = spec.name, agreement.level, agreement.field, agreement.title
            slug = f"agreement-{kind}-{fld}"
            setting = own.get(f"{kind}.{fld}", {})
            try:
                categories = spec.categorical(project)[fld]
                section = _agreement_for(
                    by_spec.get((kind, level, fld)),
                    categories,
                    rater_order,
                    bootstrap=bootstrap,
                    seed=seed,
                    distance=setting.get("distance"),
                )
                if section is None:
                    continue
                result, dropped, ratings = section
                built = _agreement_section(
                    slug, title, result, dropped=dropped, with_charts=with_charts
                )
                if setting.get("weights"):
                    built = replace(
                        built,
                        tables=(
                            *built.tables,
                            _weighted_pairs(slug, title, ratings, categories, setting["weights"]),
                        ),
                    )
            except Exception as error:  # noqa: BLE001 - one field's failure stays in its section
                sections.append(failed_section(slug, title, error))
                continue
            overview_rows.append(_overview_row(kind, level, fld, result))
            sections.append(built)
    if not sections:
        return []
    columns = (
        "task",
        "unit",
        "field",
        "units used",
        "raters per unit",
        "percent agreement",
        "pa CI low",
        "pa CI high",
        "Fleiss' kappa",
        "kappa CI low",
        "kappa CI high",
        "Krippendorff's alpha",
        "alpha CI low",
        "alpha CI high",
        "Gwet's AC1",
        "AC1 CI low",
        "AC1 CI high",
    )
    overview = Section(
        slug="agreement",
        title="Inter-annotator agreement",
        notes=(
            f"Confidence intervals: {bootstrap} bootstrap resamples of units (seed {seed}), "
            "95 % percentile intervals."
            if bootstrap
            else "No confidence intervals (bootstrap=0).",
            "A dash means the coefficient is undefined; the section of the field says why.",
        ),
        tables=(
            Table("agreement-overview", "Inter-annotator agreement", columns, tuple(overview_rows)),
        ),
    )
    return [overview, *sections]


def _agreement_for(
    mapping: dict[Hashable, dict[str, str]] | None,
    categories: list[str],
    rater_order: dict[str, int],
    *,
    bootstrap: int,
    seed: int,
    distance: list[list[float]] | None = None,
) -> tuple[stats.AgreementReport, int, Ratings] | None:
    """Agreement on one field, how many answers outside its labels were left out, and the
    ratings it was computed from. `distance`: the researcher's squared differences for
    alpha (Project.agreement_weights)."""
    if not mapping:
        return None
    allowed = set(categories)
    dropped = 0
    clean: dict[Hashable, dict[str, str]] = mapping
    # units of the same answers share one dict (field_units): each read once
    distinct = dict(zip(map(id, mapping.values()), mapping.values(), strict=True))
    if not {v for row in distinct.values() for v in row.values()} <= allowed:
        clean = {}
        for unit, by_rater in mapping.items():
            kept = {r: v for r, v in by_rater.items() if v in allowed}
            dropped += len(by_rater) - len(kept)
            if kept:
                clean[unit] = kept
        distinct = dict(zip(map(id, clean.values()), clean.values(), strict=True))
    if not clean:
        return None
    raters = sorted(set().union(*distinct.values()), key=lambda r: rater_order.get(r, 1e9))
    row_of = {key: tuple(map(row.get, raters)) for key, row in distinct.items()}
    ratings = Ratings(
        units=tuple(clean),
        raters=tuple(raters),
        labels=tuple(map(row_of.__getitem__, map(id, clean.values()))),
    )
    result = stats.agreement(
        ratings, categories=categories, bootstrap=bootstrap, seed=seed, distance=distance
    )
    return result, dropped, ratings


def _weighted_pairs(
    slug: str, title: str, ratings: Ratings, categories: list[str], weights: list[list[float]]
) -> Table:
    """Cohen's weighted kappa with the researcher's agreement weights, per pair of
    annotators on the units both answered, with its observed and expected disagreement."""
    rows: list[tuple[Cell, ...]] = []
    raters = ratings.raters
    columns = list(zip(*ratings.labels, strict=True)) if ratings.labels else []
    for i, a in enumerate(raters):
        for j in range(i + 1, len(raters)):
            shared = [
                (x, y)
                for x, y in zip(columns[i], columns[j], strict=True)
                if x is not None and y is not None
            ]
            if not shared:
                continue
            k = stats.cohen_kappa(
                [x for x, _ in shared], [y for _, y in shared], labels=categories, weights=weights
            )
            rows.append(
                (
                    str(a),
                    str(raters[j]),
                    len(shared),
                    k.value,
                    k.d_o,
                    k.d_e,
                    k.se,
                    k.wald_low,
                    k.wald_high,
                    f"undefined: {k.undefined_reason}" if k.undefined_reason else (k.note or ""),
                )
            )
    return Table(
        f"{slug}-weighted-kappa",
        f"{title}: Cohen's weighted kappa per pair (your agreement weights)",
        (
            "annotator",
            "other",
            "shared units",
            "weighted kappa",
            "D_o",
            "D_e",
            "SE",
            "Wald low",
            "Wald high",
            "note",
        ),
        tuple(rows),
        note="kappa = 1 - D_o / D_e, with the disagreement 1 - weight (Cohen 1968); "
        "Wald: value -/+ z x SE (Fleiss, Cohen & Everitt 1969).",
    )


def rater_key(name: str) -> tuple[int, str]:
    if name.startswith("A") and name[1:].isdigit():
        return int(name[1:]), ""
    return 10**9, name


def _overview_row(kind: str, level: str, fld: str, r: stats.AgreementReport) -> tuple[Cell, ...]:
    spread = f"{r.min_raters}" if r.min_raters == r.max_raters else f"{r.min_raters}–{r.max_raters}"
    row: list[Cell] = [kind, level, fld, r.n_units_used, spread]
    for c in (r.percent_agreement, r.fleiss_kappa, r.krippendorff_alpha, r.gwet_ac1):
        row += [c.value, c.ci_low, c.ci_high]
    return tuple(row)


def _agreement_section(
    slug: str, title: str, r: stats.AgreementReport, *, dropped: int, with_charts: bool
) -> Section:
    excluded = Counter(e.reason for e in r.excluded)
    notes = [
        f"{r.n_units_used} of {r.n_units_total} units have two or more ratings "
        f"({r.n_ratings} ratings; raters per unit: "
        + ", ".join(f"{k}: {v} units" for k, v in r.raters_per_unit.items())
        + ").",
    ]
    if excluded:
        notes.append(
            "Excluded units: "
            + ", ".join(f"{n} ({reason})" for reason, n in excluded.items())
            + "."
        )
    if dropped:
        notes.append(f"{dropped} answer(s) outside the declared labels were left out.")
    coefficients = Table(
        f"{slug}-coefficients",
        f"{title}: coefficients",
        (
            "coefficient",
            "value",
            "CI low",
            "CI high",
            "units",
            "p_o",
            "p_e",
            "D_o",
            "D_e",
            "SE",
            "Wald low",
            "Wald high",
            "note",
        ),
        tuple(
            (
                c.name,
                c.value,
                c.ci_low,
                c.ci_high,
                c.n_units,
                c.p_o,
                None if c is r.percent_agreement else c.p_e,  # no chance term to show
                c.d_o,
                c.d_e,
                c.se,
                c.wald_low,
                c.wald_high,
                (f"undefined: {c.undefined_reason}" if c.undefined_reason else c.note) or "",
            )
            for c in r.coefficients
        ),
        note="CI: bootstrap percentile interval; Wald: value -/+ t(n-1) x SE (Gwet 2014).",
    )
    per_category = Table(
        f"{slug}-categories",
        f"{title}: kappa per category (Fleiss 1971)",
        ("category", "kappa", "SE", "Wald low", "Wald high", "note"),
        tuple(
            (
                str(c.category),
                c.kappa.value,
                c.kappa.se,
                c.kappa.wald_low,
                c.kappa.wald_high,
                c.kappa.undefined_reason or "",
            )
            for c in r.per_category
        ),
    )
    total = sum(r.label_distribution.values())
    distribution = Table(
        f"{slug}-labels",
        f"{title}: label distribution (every rating)",
        ("label", "count", "percent"),
        tuple(
            (  # type: ignore[misc]
                label,
                r.label_distribution.get(label, 0),
                100 * r.label_distribution.get(label, 0) / total if total else None,
            )
            for label in r.categories
        ),
        decimals=1,
    )
    pairwise = Table(
        f"{slug}-pairwise",
        f"{title}: Cohen's kappa per pair of annotators",
        ("annotator", "other", "shared units", "Cohen's kappa", "CI low", "CI high", "note"),
        tuple(
            (
                str(p.rater_a),
                str(p.rater_b),
                p.n_units,
                p.kappa.value,
                p.kappa.ci_low,
                p.kappa.ci_high,
                f"undefined: {p.kappa.undefined_reason}"
                if p.kappa.undefined_reason
                else (p.kappa.note or ""),
            )
            for p in r.pairwise
        ),
    )
    per_rater = Table(
        f"{slug}-annotators",
        f"{title}: each annotator against the others",
        (
            "annotator",
            "shared units",
            "pairs of ratings",
            "percent agreement",
            "mean Cohen's kappa",
            "note",
        ),
        tuple(
            (
                str(a.rater),
                a.n_units,
                a.n_pairs,
                a.percent_agreement,
                a.mean_kappa,
                a.undefined_reason or "",
            )
            for a in r.per_rater
        ),
    )
    parts = _parts_tables(slug, title, r)
    chart_list: list[Chart] = []
    if with_charts and len(r.raters) >= 2:
        chart_list.append(
            Chart(
                f"{title}: pairwise Cohen's kappa",
                charts.kappa_heatmap([str(x) for x in r.raters], r.kappa_matrix(), title=title),
            )
        )
    return Section(
        slug,
        title,
        tuple(notes),
        (coefficients, per_category, distribution, pairwise, per_rater, *parts),
        tuple(chart_list),
        data=r,
    )


def _parts_tables(slug: str, title: str, r: stats.AgreementReport) -> tuple[Table, ...]:
    """Each coefficient's parts: Fleiss' P_i per unit and p_j per category, alpha's
    pairable values and coincidence matrix (with the distances used)."""
    tables: list[Table] = []
    fleiss = r.fleiss_parts
    if fleiss is not None:
        tables.append(
            Table(
                f"{slug}-fleiss-units",
                f"{title}: Fleiss' agreement P_i per unit",
                ("unit", "P_i"),
                tuple(zip(map(str, fleiss.units), fleiss.p_i, strict=True)),
                note=f"P-bar (their mean) = {fleiss.p_bar:.4f}; P_e = sum of p_j squared = "
                f"{fleiss.p_e:.4f} (Fleiss 1971).",
            )
        )
        tables.append(
            Table(
                f"{slug}-fleiss-categories",
                f"{title}: Fleiss' category shares p_j",
                ("category", "p_j"),
                tuple((str(c), v) for c, v in fleiss.p_j.items()),
            )
        )
    alpha = r.alpha_parts
    if alpha is not None:
        names = [str(c) for c in r.categories]
        tables.append(
            Table(
                f"{slug}-alpha-coincidences",
                f"{title}: Krippendorff's coincidence matrix",
                ("category", "pairable values n_c", *names, *(f"delta² to {n}" for n in names)),
                tuple(
                    (name, alpha.n_c[c], *row, *dist)
                    for name, c, row, dist in zip(
                        names, r.categories, alpha.coincidences, alpha.distances, strict=True
                    )
                ),
                note=f"n = {alpha.pairable:g} pairable values; alpha = 1 - D_o / D_e with the "
                "squared differences delta² shown (Krippendorff 2011).",
            )
        )
    return tuple(tables)
