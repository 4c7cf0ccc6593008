"""Inter-annotator agreement sections, per kind, level and field."""

from __future__ import annotations

from collections import Counter
from itertools import combinations, compress

import numpy as np

from .. import charts, kinds, stats
from ..answers import FieldCodes
from ..stats.inter_rater import unique_rows
from ..stats.ratings import Ratings
from .queries import ReportData
from .tables import Cell, Chart, Section, Table, failed_section


def field_codes(data: ReportData, kind: str, level: str, fld: str) -> FieldCodes | None:
    """The codes of (kind, level, field) as agreement reads them, None when unanswered.

    A field asked only when another one has a value (the error type of an incorrect
    segment) is compared on the units where every annotator who judged it gave that value.
    """
    codes = data.answers.fields.get((kind, level, fld))
    return None if codes is None else data.answers.where(codes)


def agreement_sections(data: ReportData) -> list[Section]:
    names = data.names
    rater_order = {name: i for i, name in enumerate(sorted(names.values(), key=rater_key))}

    overview_rows = []
    sections = []
    own = data.project.agreement_weights or {}  # the researcher's distances and weights
    for spec in kinds.all_specs():
        for agreement in spec.agreement:
            kind, level, fld, title = spec.name, agreement.level, agreement.field, agreement.title
            slug = f"agreement-{kind}-{fld}"
            setting = own.get(f"{kind}.{fld}", {})
            try:
                categories = spec.categorical(data.project)[fld]
                section = _agreement_for(
                    field_codes(data, kind, level, fld),
                    categories,
                    names,
                    rater_order,
                    bootstrap=data.bootstrap,
                    seed=data.seed,
                    distance=setting.get("distance"),
                )
                if section is None:
                    continue
                result, dropped, ratings = section
                weighted = (
                    (_weighted_pairs(slug, title, ratings, categories, setting["weights"]),)
                    if setting.get("weights")
                    else ()
                )
                built = _agreement_section(slug, title, result, dropped, data.with_charts, weighted)
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
            f"Confidence intervals: {data.bootstrap} bootstrap resamples of units "
            f"(seed {data.seed}), 95 % percentile intervals."
            if data.bootstrap
            else "No confidence intervals (bootstrap=0).",
            "A dash means the coefficient is undefined; the section of the field says why.",
        ),
        tables=(
            Table("agreement-overview", "Inter-annotator agreement", columns, tuple(overview_rows)),
        ),
    )
    return [overview, *sections]


def _agreement_for(
    codes: FieldCodes | None,
    categories: list[str],
    names: dict[int, str],
    rater_order: dict[str, int],
    *,
    bootstrap: int,
    seed: int,
    distance: list[list[float]] | None = None,
) -> tuple[stats.AgreementReport, int, Ratings] | None:
    """Agreement on one field, how many answers outside its labels were left out, and the
    ratings it was computed from. `distance`: the researcher's squared differences for
    alpha (Project.agreement_weights)."""
    if codes is None:
        return None
    allowed = np.array([v in categories for v in codes.values] + [False])  # -1: False
    clean = allowed[codes.codes]
    dropped = int((codes.codes >= 0).sum() - clean.sum())
    kept = np.asarray(clean.any(axis=1))  # units with an answer left (each had one)
    if not kept.any():
        return None
    matrix = np.where(clean, codes.codes, -1)[kept]
    rater_names = [names.get(a, f"A?{a}") for a in codes.annotators.tolist()]
    columns = sorted(
        np.flatnonzero((matrix >= 0).any(axis=0)).tolist(),
        key=lambda j: rater_order.get(rater_names[j], 1e9),
    )
    # each distinct row of answers one tuple, shared by its units (stats reads it once)
    distinct, row_of, _ = unique_rows(matrix[:, columns])
    rows = [tuple(codes.values[c] if c >= 0 else None for c in r) for r in distinct.tolist()]
    units = compress(zip(codes.items.tolist(), codes.units, strict=True), kept.tolist())
    ratings = Ratings(
        units=tuple([f"{item}/{unit}" for item, unit in units]),
        raters=tuple(rater_names[j] for j in columns),
        labels=tuple(map(rows.__getitem__, row_of.tolist())),
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
    for i, j in combinations(range(len(raters)), 2):
        shared = [
            (x, y)
            for x, y in zip(columns[i], columns[j], strict=True)
            if x is not None and y is not None
        ]
        if not shared:
            continue
        xs, ys = zip(*shared, strict=True)
        k = stats.cohen_kappa(list(xs), list(ys), labels=categories, weights=weights)
        rows.append(
            (
                str(raters[i]),
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


def _coefficient_tables(slug: str, title: str, r: stats.AgreementReport) -> tuple[Table, Table]:
    """The coefficients with their parts and intervals, and kappa per category."""
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
    return coefficients, per_category


def _rater_tables(slug: str, title: str, r: stats.AgreementReport) -> tuple[Table, Table, Table]:
    """The label distribution, Cohen's kappa per pair and each annotator against the others."""
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
    return distribution, pairwise, per_rater


def _agreement_section(
    slug: str,
    title: str,
    r: stats.AgreementReport,
    dropped: int,
    with_charts: bool,
    weighted: tuple[Table, ...],
) -> Section:
    """A field's section; `weighted`: its table of the researcher's weighted kappas, if any."""
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
    coefficients, per_category = _coefficient_tables(slug, title, r)
    distribution, pairwise, per_rater = _rater_tables(slug, title, r)
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
        (coefficients, per_category, distribution, pairwise, per_rater, *parts, *weighted),
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
