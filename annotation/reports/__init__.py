"""Agreement and validation reports: ORM queries -> stats.py -> frozen report objects.

A report is a list of sections; a section holds tables (every one exportable as CSV,
JSON and LaTeX) and inline SVG charts. A section exists only when its data does.

Queries read flat tuples (`values_list`) in a handful of queries per report, whatever
the project size: no model instances per answer, no query per item.

Gold labels follow `gold.py`'s rules (adjudication, else majority, a verification tie
read as inconclusive) but are computed here on the filtered answers, so a report
restricted to some annotators, domains or dates uses the gold of that subset.
"""

from __future__ import annotations

import io
import json
import logging
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any

from django.db.models import Count, Q
from django.utils import timezone

from pipeline import score as pipeline_score
from pipeline.types import Claim as PipelineClaim
from pipeline.types import ClaimResult, ResponseResult
from pipeline.types import Verdict as PipelineVerdict

from . import charts, factscore_table, hiring, kinds, safecsv, stats
from .gold import Gold, LabelRow, decide, fetch, label_rows
from .kinds import ITEM, KindSpec, unit_type
from .kinds.base import Field
from .models import (
    Adjudication,
    Answer,
    Assignment,
    Claim,
    ClaimList,
    Item,
    Membership,
    Project,
    Segment,
    System,
    Verdict,
    validate_verifier_collapse,
)

logger = logging.getLogger(__name__)

Cell = str | int | float | None
NO_ANSWER = "(no answer)"
NOT_ASSIGNED = "(not assigned)"
SKIPPED = "(skipped)"
NOT_APPLICABLE = "(not applicable)"
DISPLAY_LIMIT = 100  # rows shown on the page for long lists; exports hold all of them


# --------------------------------------------------------------------------- containers


@dataclass(frozen=True)
class Filters:
    annotators: tuple[int, ...] = ()  # user ids; empty = everyone
    domains: tuple[str, ...] = ()
    date_from: date | None = None  # on Assignment.submitted_at, inclusive
    date_to: date | None = None

    @property
    def active(self) -> bool:
        return bool(self.annotators or self.domains or self.date_from or self.date_to)

    def describe(self, names: dict[int, str]) -> str:
        parts = []
        if self.annotators:
            parts.append("annotators " + ", ".join(names.get(a, f"#{a}") for a in self.annotators))
        if self.domains:
            parts.append("domains " + ", ".join(d or "(none)" for d in self.domains))
        if self.date_from or self.date_to:
            parts.append(f"submitted {self.date_from or '…'} to {self.date_to or '…'}")
        return "; ".join(parts) or "none"


@dataclass(frozen=True)
class Table:
    name: str  # unique within a report, used in export URLs and file names
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    note: str = ""
    decimals: int = 3  # for display and LaTeX; CSV and JSON keep full precision

    def __post_init__(self) -> None:
        if len(set(self.columns)) != len(self.columns):
            raise ValueError(f"table {self.name}: column names must be unique")

    def as_dicts(self) -> list[dict[str, Cell]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def display_rows(self, limit: int | None = None) -> list[list[str]]:
        rows = self.rows if limit is None else self.rows[:limit]
        return [
            [_display(col, v, self.decimals) for col, v in zip(self.columns, row, strict=True)]
            for row in rows
        ]

    @property
    def truncated(self) -> bool:
        return len(self.rows) > DISPLAY_LIMIT

    @property
    def page_rows(self) -> list[list[str]]:
        return self.display_rows(DISPLAY_LIMIT)

    @property
    def numeric(self) -> tuple[bool, ...]:
        return tuple(
            all(isinstance(row[i], int | float) or row[i] is None for row in self.rows)
            and any(row[i] is not None for row in self.rows)
            for i in range(len(self.columns))
        )


@dataclass(frozen=True)
class Chart:
    title: str
    svg: str


@dataclass(frozen=True)
class Section:
    slug: str
    title: str
    notes: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    charts: tuple[Chart, ...] = ()
    # The stats.py objects behind the tables, for callers and tests; not exported.
    data: Any = field(default=None, compare=False, repr=False)
    error: str | None = None  # set when the section's computation failed


@dataclass(frozen=True)
class Report:
    project_id: int
    project_name: str
    generated_at: datetime
    filters: Filters
    filters_text: str
    real_names: bool
    bootstrap: int
    seed: int
    sections: tuple[Section, ...]

    def tables(self) -> list[Table]:
        return [t for s in self.sections for t in s.tables]

    def table(self, name: str) -> Table:
        for t in self.tables():
            if t.name == name:
                return t
        raise KeyError(name)

    def section(self, slug: str) -> Section | None:
        return next((s for s in self.sections if s.slug == slug), None)

    def as_json(self) -> dict[str, Any]:
        return {
            "project": {"id": self.project_id, "name": self.project_name},
            "generated_at": self.generated_at.isoformat(),
            "filters": self.filters_text,
            "annotators": "usernames" if self.real_names else "pseudonyms (A<n>)",
            "bootstrap_resamples": self.bootstrap,
            "seed": self.seed,
            "sections": [
                {
                    "slug": s.slug,
                    "title": s.title,
                    "notes": list(s.notes),
                    "tables": [table_json(t) for t in s.tables],
                }
                for s in self.sections
            ],
        }


# --------------------------------------------------------------------------- formats


def _display(column: str, value: Cell, decimals: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if "p-value" in column:
            return f"{value:.3g}" if value >= 0.001 else "<0.001"
        return f"{value:.{decimals}f}"
    return str(value)


def table_json(table: Table) -> dict[str, Any]:
    return {
        "name": table.name,
        "title": table.title,
        "note": table.note,
        "columns": list(table.columns),
        "rows": table.as_dicts(),
    }


def table_csv(table: Table) -> str:
    out = io.StringIO()
    writer = safecsv.writer(out)
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow(["" if v is None else v for v in row])
    return out.getvalue()


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def table_latex(table: Table) -> str:
    """A booktabs table; numbers right-aligned and rounded to 3 decimals."""
    align = "".join("r" if num else "l" for num in table.numeric)
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{latex_escape(table.title)}}}",
        rf"\label{{tab:{latex_escape(table.name)}}}",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in table.columns) + r" \\",
        r"\midrule",
    ]
    for row in table.display_rows():
        lines.append(" & ".join(latex_escape(v) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- queries


def member_names(project: Project, *, real_names: bool) -> dict[int, str]:
    """user id -> what reports call them: "A<n>" unless real names are asked for."""
    rows = Membership.objects.filter(project=project).values_list(
        "user_id", "number", "user__username"
    )
    return {
        uid: (username if real_names else Membership.pseudonym_of(n)) for uid, n, username in rows
    }


def annotator_choices(project: Project, *, real_names: bool) -> list[tuple[int, str]]:
    rows = (
        Membership.objects.filter(project=project, role=Membership.ANNOTATOR)
        .order_by("number")
        .values_list("user_id", "number", "user__username")
    )
    return [
        (uid, username if real_names else Membership.pseudonym_of(n)) for uid, n, username in rows
    ]


def domains_of(project: Project) -> list[str]:
    return sorted(set(project.documents.values_list("domain", flat=True)))


def _assignment_filter(filters: Filters, prefix: str = "") -> Q:
    q = Q()
    if filters.annotators:
        q &= Q(**{f"{prefix}annotator_id__in": filters.annotators})
    if filters.domains:
        q &= Q(**{f"{prefix}item__document__domain__in": filters.domains})
    tz = timezone.get_current_timezone()
    if filters.date_from:
        start = datetime.combine(filters.date_from, time.min, tzinfo=tz)
        q &= Q(**{f"{prefix}submitted_at__gte": start})
    if filters.date_to:
        end = datetime.combine(filters.date_to, time.max, tzinfo=tz)
        q &= Q(**{f"{prefix}submitted_at__lte": end})
    return q


UnitKey = tuple[int, str, str]  # (item, unit, field)


def _grouped(rows: Iterable[LabelRow]) -> dict[UnitKey, dict[int, str]]:
    grouped: dict[UnitKey, dict[int, str]] = defaultdict(dict)
    for r in rows:
        grouped[(r.item, r.unit, r.field)][r.annotator] = r.value
    return grouped


def _gold(
    grouped: dict[UnitKey, dict[int, str]], item_kinds: dict[int, str], project: Project
) -> dict[UnitKey, Gold]:
    # the fields whose gold labels a report uses
    gold_fields = {s.verdict_field for s in kinds.all_specs() if s.verdict_field}
    adjudicated = {
        (item, unit, fld): (value, note)
        for item, unit, fld, value, note in Adjudication.objects.filter(
            item__project=project, field__in=gold_fields
        ).values_list("item_id", "unit", "field", "value", "note")
    }
    golds: dict[UnitKey, Gold] = {}
    for key, by_rater in grouped.items():
        item, unit, fld = key
        if fld in gold_fields:
            golds[key] = decide(
                item, item_kinds[item], unit, fld, list(by_rater.values()), adjudicated.get(key)
            )
    return golds


# --------------------------------------------------------------------------- report


def build_report(
    project: Project,
    *,
    filters: Filters | None = None,
    real_names: bool = False,
    bootstrap: int = 1000,
    seed: int = 0,
    k_rule: str = "upper",
    with_charts: bool = True,
) -> Report:
    filters = filters or Filters()
    names = member_names(project, real_names=real_names)
    rows = label_rows(project, where=_assignment_filter(filters))
    item_kinds = {r.item: r.kind for r in rows}
    grouped = _grouped(rows)
    golds = _gold(grouped, item_kinds, project)

    sections: list[Section] = []
    sections += _isolated(
        "agreement",
        "Inter-annotator agreement",
        lambda: _agreement_sections(
            project,
            grouped,
            item_kinds,
            names,
            bootstrap=bootstrap,
            seed=seed,
            with_charts=with_charts,
        ),
    )
    rows_of: dict[str, list[LabelRow]] = defaultdict(list)
    for r in rows:
        rows_of[r.kind].append(r)
    golds_of: dict[str, list[Gold]] = defaultdict(list)
    for g in golds.values():
        golds_of[g.kind].append(g)
    for spec in kinds.all_specs():
        for slug in spec.report_sections:
            sections += _isolated(
                f"{slug}-{spec.name}",
                slug.capitalize(),
                lambda slug=slug, spec=spec: KIND_SECTIONS[slug](
                    project, spec, rows_of[spec.name], golds_of[spec.name], with_charts=with_charts
                ),
            )
    sections += _isolated(
        "verifiers",
        "Verifiers against human labels",
        lambda: _verifier_sections(project, golds_of, filters),
    )
    sections += _isolated(
        "pipeline", "Pipeline scores", lambda: _pipeline_section(project, filters, k_rule=k_rule)
    )
    sections += _isolated(
        "factscore",
        "FActScore from verdicts on atomic facts",
        lambda: _factscore_section(project, filters),
    )
    from .metric_reports import metric_sections  # it builds on this module's tables

    sections += _isolated(
        "metrics",
        "Metric against metric",
        lambda: metric_sections(
            project,
            filters=filters,
            golds=golds,
            bootstrap=bootstrap,
            seed=seed,
            with_charts=with_charts,
            k_rule=k_rule,
        ),
    )
    sections += _isolated(
        "effort", "Annotation effort", lambda: _effort_section(project, filters, names)
    )
    sections += _isolated(
        "annotator-quality", "Annotator quality", lambda: hiring.report_section(project, names)
    )
    return Report(
        project_id=project.pk,
        project_name=project.name,
        generated_at=timezone.now(),
        filters=filters,
        filters_text=filters.describe(names),
        real_names=real_names,
        bootstrap=bootstrap,
        seed=seed,
        sections=tuple(sections),
    )


def _isolated(
    slug: str, title: str, build: Callable[[], list[Section] | Section | None]
) -> list[Section]:
    """One section's computation; when it fails, the section shows the error, the rest stays."""
    try:
        built = build()
    except Exception as error:  # noqa: BLE001 - any failure stays inside its section
        return [_failed(slug, title, error)]
    if built is None:
        return []
    return built if isinstance(built, list) else [built]


# --------------------------------------------------------------------------- agreement


def _agreement_sections(
    project: Project,
    grouped: dict[UnitKey, dict[int, str]],
    item_kinds: dict[int, str],
    names: dict[int, str],
    *,
    bootstrap: int,
    seed: int,
    with_charts: bool,
) -> list[Section]:
    # A field asked only when another one has a value (the error type of an incorrect
    # segment) is compared on the units where every annotator who judged it gave that value.
    conditions = {
        (s.name, f.name): f.only_when for s in kinds.all_specs() for f in s.fields if f.only_when
    }
    by_spec: dict[tuple[str, str, str], dict[Hashable, dict[str, str]]] = defaultdict(dict)
    for (item, unit, fld), by_rater in grouped.items():
        kind = item_kinds[item]
        condition = conditions.get((kind, fld))
        if condition:
            other = grouped.get((item, unit, condition[0]))
            if not other or any(v != condition[1] for v in other.values()):
                continue
        by_spec[(kind, unit_type(unit), fld)][f"{item}/{unit}"] = {
            names.get(a, f"A?{a}"): v for a, v in by_rater.items()
        }
    rater_order = {name: i for i, name in enumerate(sorted(names.values(), key=_rater_key))}

    overview_rows = []
    sections = []
    for spec in kinds.all_specs():
        for agreement in spec.agreement:
            kind, level, fld, title = spec.name, agreement.level, agreement.field, agreement.title
            slug = f"agreement-{kind}-{fld}"
            try:
                section = _agreement_for(
                    by_spec.get((kind, level, fld)),
                    spec.categorical(project)[fld],
                    rater_order,
                    bootstrap=bootstrap,
                    seed=seed,
                )
                if section is None:
                    continue
                result, dropped = section
                built = _agreement_section(
                    slug, title, result, dropped=dropped, with_charts=with_charts
                )
            except Exception as error:  # noqa: BLE001 - one field's failure stays in its section
                sections.append(_failed(slug, title, error))
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
) -> tuple[stats.AgreementReport, int] | None:
    """Agreement on one field, and how many answers outside its labels were left out."""
    if not mapping:
        return None
    allowed = set(categories)
    dropped = 0
    clean: dict[Hashable, dict[str, str]] = {}
    for unit, by_rater in mapping.items():
        kept = {r: v for r, v in by_rater.items() if v in allowed}
        dropped += len(by_rater) - len(kept)
        if kept:
            clean[unit] = kept
    if not clean:
        return None
    raters = sorted(
        {r for row in clean.values() for r in row}, key=lambda r: rater_order.get(r, 1e9)
    )
    ratings = stats.Ratings(
        units=tuple(clean),
        raters=tuple(raters),
        labels=tuple(tuple(row.get(r) for r in raters) for row in clean.values()),
    )
    return stats.agreement(ratings, categories=categories, bootstrap=bootstrap, seed=seed), dropped


def _failed(slug: str, title: str, error: Exception) -> Section:
    logger.exception("report section %s failed", slug, exc_info=error)
    message = f"{type(error).__name__}: {error}"
    return Section(slug, title, (f"This section could not be computed: {message}",), error=message)


def _rater_key(name: str) -> tuple[int, str]:
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
                c.p_e,
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
            (
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
        (coefficients, per_category, distribution, pairwise, per_rater),
        tuple(chart_list),
        data=r,
    )


# --------------------------------------------------------------------------- verification


def _label_distribution(
    spec: KindSpec, golds: list[Gold], slug: str, title: str, what: str, tie_note: str
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


def _claim_labels(
    project: Project, spec: KindSpec, rows: list[LabelRow], golds: list[Gold], *, with_charts: bool
) -> Section | None:
    return _label_distribution(
        spec,
        golds,
        "claim-labels",
        "Claim labels (VeriScore Table 2)",
        "claims",
        "A tie with no adjudication counts as inconclusive (not enough information), as in "
        "the paper.",
    )


def _fact_labels(
    project: Project, spec: KindSpec, rows: list[LabelRow], golds: list[Gold], *, with_charts: bool
) -> Section | None:
    return _label_distribution(
        spec,
        golds,
        "fact-labels",
        "Atomic fact labels (FActScore)",
        "facts",
        "A tie with no adjudication has no gold label and is left out.",
    )


def _evidence_ranks(
    project: Project, spec: KindSpec, rows: list[LabelRow], golds: list[Gold], *, with_charts: bool
) -> Section | None:
    stances = [r for r in rows if r.field == "stance"]
    if stances:
        by_rank: dict[int, Counter[str]] = defaultdict(Counter)
        for r in stances:
            try:
                rank = int(r.unit.split(":", 1)[1])
            except ValueError:
                continue
            by_rank[rank][r.value] += 1
        table_rows = []
        for rank in sorted(by_rank):
            c = by_rank[rank]
            n = sum(c.values())
            informative = c["supports"] + c["contradicts"]
            table_rows.append(
                (
                    rank,
                    n,
                    c["supports"],
                    c["contradicts"],
                    c["inconclusive"],
                    100 * informative / n if n else None,
                )
            )
        chart_list = []
        if with_charts:
            chart_list.append(
                Chart(
                    "Informative search results by rank",
                    charts.bars(
                        [str(r[0]) for r in table_rows],
                        [float(r[5] or 0) for r in table_rows],
                        xlabel="search result rank",
                        ylabel="% informative",
                    ),
                )
            )
        return Section(
            "evidence-ranks",
            "Informative search results by rank (VeriScore §3.3)",
            (
                "A search result is informative when an annotator marked it as supporting or "
                "contradicting the claim; every annotator's judgement counts.",
            ),
            (
                Table(
                    "evidence-ranks",
                    "How often each search-result rank was informative",
                    (
                        "rank",
                        "judgements",
                        "supports",
                        "contradicts",
                        "inconclusive",
                        "% informative",
                    ),
                    tuple(table_rows),
                    decimals=1,
                ),
            ),
            tuple(chart_list),
        )
    return None


# --------------------------------------------------------------------------- preference


def _preference_section(
    project: Project, spec: KindSpec, rows: list[LabelRow], golds: list[Gold], *, with_charts: bool
) -> Section | None:
    choices = [r for r in rows if r.field == "choice" and r.raw in ("1", "2")]
    if not choices:
        return None
    hard = {(r.item, r.annotator): r.value == "yes" for r in rows if r.field == "hard"}
    systems = {
        pk: (a, b)
        for pk, a, b in Item.objects.filter(project=project, kind=spec.name).values_list(
            "pk", "list_a__system__name", "list_b__system__name"
        )
    }
    missing_hard = 0
    pref_rows = []
    for r in choices:
        pair = systems.get(r.item)
        if pair is None or pair[0] == pair[1]:
            continue
        winner, loser = pair if r.value == "a" else pair[::-1]
        if (r.item, r.annotator) not in hard:
            missing_hard += 1
        pref_rows.append(
            (
                r.domain or "(no domain)",
                winner,
                loser,
                hard.get((r.item, r.annotator), False),
                int(r.raw),
            )
        )
    if not pref_rows:
        return None
    result = stats.preference(pref_rows)
    cells = Table(
        "preference",
        "Extraction-method preference (VeriScore Figure 3)",
        (
            "system A",
            "system B",
            "domain",
            "judgements",
            "A preferred",
            "A strong",
            "A slight",
            "B preferred",
            "B strong",
            "B slight",
            "A rate",
            "B rate",
            "binomial p-value",
        ),
        tuple(
            (
                c.system_a,
                c.system_b,
                c.domain or "all",
                c.n,
                c.a_wins,
                c.a_strong,
                c.a_slight,
                c.b_wins,
                c.b_strong,
                c.b_slight,
                c.a_rate,
                c.b_rate,
                c.p_value,
            )
            for c in result.cells
        ),
    )
    bias = Table(
        "position-bias",
        "Position bias: how often the list shown first won",
        ("domain", "judgements", "list 1 wins", "list 1 rate", "binomial p-value"),
        tuple(
            (b.domain or "all", b.n, b.list1_wins, b.rate, b.p_value) for b in result.position_bias
        ),
    )
    chart_list = []
    if with_charts:
        pairs = sorted({(c.system_a, c.system_b) for c in result.cells})
        for a, b in pairs:
            bars = [
                (
                    "All" if c.domain is None else c.domain,
                    c.a_strong,
                    c.a_slight,
                    c.b_slight,
                    c.b_strong,
                )
                for c in result.cells
                if (c.system_a, c.system_b) == (a, b)
            ]
            chart_list.append(
                Chart(f"{a} vs {b}", charts.preference_bars(bars, system_a=a, system_b=b))
            )
    notes = [
        "Strong: the annotator did not find it hard to decide; slight: hard to decide. "
        "Every annotator's judgement counts (as in the paper's figure). The p-value is a "
        "two-sided exact binomial test against 50 %.",
    ]
    if missing_hard:
        notes.append(
            f"{missing_hard} judgement(s) had no 'hard to decide' answer and count as strong."
        )
    return Section(
        "preference",
        "Extraction-method preference",
        tuple(notes),
        (cells, bias),
        tuple(chart_list),
        data=result,
    )


KIND_SECTIONS = {  # the sections a kind may ask for (KindSpec.report_sections)
    "claim-labels": _claim_labels,
    "evidence-ranks": _evidence_ranks,
    "fact-labels": _fact_labels,
    "preference": _preference_section,
}


# --------------------------------------------------------------------------- verifiers


@dataclass(frozen=True)
class _Unit:
    key: str  # "item 12" or "item 3 / segment:2"
    item: int
    target: int  # claim or segment id
    level: str  # the verdict_level of its kind (claim, segment, fact)
    domain: str
    gold: Gold
    document: int
    reference: str | None  # the gold value as a verdict label


def _verifier_sections(
    project: Project, golds_of: dict[str, list[Gold]], filters: Filters
) -> list[Section]:
    verdicts = list(
        Verdict.objects.filter(
            system__project=project, system__kind__in=[System.VERIFIER, System.REFERENCE]
        ).values_list("claim_id", "segment_id", "system__name", "system__kind", "label")
    )
    if not verdicts:
        return []
    units: list[_Unit] = []
    specs = [s for s in kinds.all_specs() if s.verdict_field]
    for spec in specs:
        mine = [g for g in golds_of[spec.name] if g.field == spec.verdict_field]
        for t in spec.verdict_targets(project, mine) if mine else []:
            key = f"item {t.gold.item}" + ("" if t.gold.unit == ITEM else f" / {t.gold.unit}")
            units.append(
                _Unit(
                    key,
                    t.gold.item,
                    t.target,
                    spec.verdict_level,
                    t.domain,
                    t.gold,
                    t.document,
                    spec.as_verdict(t.gold.value),
                )
            )
    # verdicts per system, keyed by (Claim or Segment, id)
    by_system: dict[tuple[str, str], dict[tuple[Any, int], str]] = defaultdict(dict)
    for claim, segment, name, kind, label in verdicts:
        if claim is not None:
            by_system[(name, kind)][(Claim, claim)] = label
        else:
            by_system[(name, kind)][(Segment, segment)] = label
    if not units:
        return [
            Section(
                "verifiers",
                "Verifiers against human labels",
                (
                    f"{len(by_system)} system(s) have verdicts, "
                    "but no claim or segment has a human "
                    "gold label yet (within the filters).",
                ),
            )
        ]

    systems = sorted(by_system)
    rules = _collapse_rules(project)
    score_rows: list[tuple[Cell, ...]] = []
    class_rows: list[tuple[Cell, ...]] = []
    confusion_tables: list[Table] = []
    disagreement_rows: list[tuple[Cell, ...]] = []
    mcnemar_rows: list[tuple[Cell, ...]] = []
    notes: list[str] = []
    reports: dict[tuple[str, str, str], stats.VerifierReport] = {}
    aligned: dict[tuple[str, str], tuple[list[_Unit], list[str | None]]] = {}
    for spec in specs:
        level = spec.verdict_level
        target = spec.verdict_target
        level_units = [u for u in units if u.level == level]
        if not level_units:
            continue
        ref_raw = [u.reference for u in level_units]
        for name, kind in systems:
            labels = by_system[(name, kind)]
            # read like the gold labels ("true"/"false" on a segment: supported/unsupported)
            pred = [spec.as_verdict(labels.get((target, u.target))) for u in level_units]
            if not any(p is not None for p in pred):
                continue
            aligned[(name, level)] = (level_units, pred)
            mode_rules = rules if level == "claim" else {m: None for m in spec.verdict_modes}
            for mode, rule in mode_rules.items():
                try:
                    rep = stats.verifier_vs_reference(
                        y_true=ref_raw,
                        y_pred=pred,
                        collapse=rule,
                        mode=None if rule is not None else mode,  # type: ignore[arg-type]
                        units=[u.key for u in level_units],
                    )
                except ValueError as e:
                    notes.append(f"{name}: no {mode} scores ({e}).")
                    continue
                reports[(name, level, mode)] = rep
                score_rows.append(_score_row(name, kind, level, mode, rep))
                class_rows += [
                    (
                        name,
                        level,
                        mode,
                        c.label,
                        c.precision,
                        c.recall,
                        c.f1,
                        c.support,
                        c.predicted,
                    )
                    for c in rep.per_class
                ]
                confusion_tables.append(
                    Table(
                        f"confusion-{_slug(name)}-{level}-{mode}",
                        f"{name}: confusion matrix ({level}, {mode}); rows human, columns system",
                        ("human \\ system", *rep.labels),
                        tuple(
                            (label, *row)
                            for label, row in zip(rep.labels, rep.confusion, strict=True)
                        ),
                    )
                )
                by_key = {u.key: u for u in level_units}
                for d in rep.disagreements:
                    u = by_key[d.unit]  # type: ignore[index]
                    disagreement_rows.append(
                        (
                            name,
                            level,
                            mode,
                            u.item,
                            u.gold.unit,
                            u.domain,
                            u.target,
                            d.reference,
                            d.predicted,
                            labels.get((target, u.target)),
                            u.gold.value,
                            " ".join(f"{k}:{v}" for k, v in u.gold.votes.items()),
                            u.gold.provenance,
                        )
                    )
            if spec.verdict_target is not Claim:  # segments add up to a response (FELM)
                response = _response_level(level_units, pred, ref_raw)
                if response is not None:
                    reports[(name, "response", "binary")] = response
                    score_rows.append(_score_row(name, kind, "response", "binary", response))
        # McNemar between every two systems on the units both labelled.
        named = [(n, k) for n, k in systems if (n, level) in aligned]
        for i, (a, _) in enumerate(named):
            for b, _ in named[i + 1 :]:
                pred_a = aligned[(a, level)][1]
                pred_b = aligned[(b, level)][1]
                mode_rules = rules if level == "claim" else {m: None for m in spec.verdict_modes}
                for mode, rule in mode_rules.items():
                    if (a, level, mode) not in reports or (b, level, mode) not in reports:
                        continue
                    m = stats.mcnemar_test(
                        pred_a,
                        pred_b,
                        ref_raw,
                        collapse=rule,
                        mode="binary" if rule is not None else mode,  # type: ignore[arg-type]
                    )
                    mcnemar_rows.append(
                        (
                            a,
                            b,
                            level,
                            mode,
                            m.n,
                            m.both_correct,
                            m.only_a_correct,
                            m.only_b_correct,
                            m.both_wrong,
                            m.method,
                            m.statistic,
                            m.p_value,
                            m.undefined_reason or "",
                        )
                    )
    _add_texts(disagreement_rows, {s.verdict_level: s.verdict_target for s in specs})

    tables = [
        Table(
            "verifier-scores",
            "Verifiers against human gold labels (VeriScore Table 11)",
            (
                "system",
                "kind",
                "level",
                "mode",
                "units",
                "excluded",
                "overall F1 (macro)",
                "supported F1",
                "unsupported F1",
                "contradicted F1",
                "inconclusive F1",
                "accuracy",
                "balanced accuracy",
                "Cohen's kappa",
                "MCC",
                "weighted F1",
                "micro F1",
            ),
            tuple(score_rows),
        ),
        Table(
            "verifier-classes",
            "Precision, recall and F1 per class",
            (
                "system",
                "level",
                "mode",
                "class",
                "precision",
                "recall",
                "F1",
                "support",
                "predicted",
            ),
            tuple(class_rows),
        ),
    ]
    if mcnemar_rows:
        tables.append(
            Table(
                "mcnemar",
                "McNemar's test between systems on the same units",
                (
                    "system A",
                    "system B",
                    "level",
                    "mode",
                    "units",
                    "both correct",
                    "only A correct",
                    "only B correct",
                    "both wrong",
                    "method",
                    "statistic",
                    "p-value",
                    "note",
                ),
                tuple(mcnemar_rows),
            )
        )
    tables += confusion_tables
    tables.append(
        Table(
            "verifier-disagreements",
            "Units where a system and the human gold label disagree",
            (
                "system",
                "level",
                "mode",
                "item",
                "unit",
                "domain",
                "claim or segment id",
                "human (as scored)",
                "system (as scored)",
                "system label",
                "human gold",
                "human votes",
                "gold provenance",
                "text",
            ),
            tuple(disagreement_rows),
        )
    )
    if rules is not _DEFAULT_RULES:
        notes.insert(
            0,
            "Claim labels scored under the project's collapse rules: "
            + "; ".join(
                f"{name}: " + (", ".join(f"{k} -> {v}" for k, v in rule.items()) or "as labelled")
                for name, rule in rules.items()
                if rule is not None
            )
            + ".",
        )
    notes.insert(
        0,
        "Binary mode: contradicted and inconclusive count as unsupported. Overall F1 "
        "is the macro mean over classes; VeriScore's published 'Overall F1' equals its "
        "supported F1. Segment labels true/false read as supported/unsupported; a "
        "response is unsupported when any of its segments is (FELM).",
    )
    return [
        Section(
            "verifiers", "Verifiers against human labels", tuple(notes), tuple(tables), data=reports
        )
    ]


# Claim verdicts are scored under each of the project's collapse rules; without any, under
# VeriScore's binary rule (Table 11) and as ternary labels. Segments are true/false.
_DEFAULT_RULES: dict[str, dict[str, str] | None] = {"binary": None, "ternary": None}


def _collapse_rules(project: Project) -> dict[str, dict[str, str] | None]:
    declared = project.verifier_collapse
    if not declared:
        return _DEFAULT_RULES
    validate_verifier_collapse(declared)
    return {name: dict(rule) for name, rule in declared.items()}


def _score_row(
    name: str, kind: str, level: str, mode: str, rep: stats.VerifierReport
) -> tuple[Cell, ...]:
    def f1(label: str) -> float | None:
        return rep.scores(label).f1 if label in rep.labels else None

    return (
        name,
        kind,
        level,
        mode,
        rep.n,
        sum(rep.excluded.values()),
        rep.macro_f1.value,
        f1(stats.SUPPORTED),
        f1(stats.UNSUPPORTED),
        f1(stats.CONTRADICTED),
        f1(stats.INCONCLUSIVE),
        rep.accuracy.value,
        rep.balanced_accuracy.value,
        rep.kappa.value,
        rep.mcc.value if rep.mcc else None,
        rep.weighted.f1 if rep.weighted else None,
        rep.micro.f1 if rep.micro else None,
    )


def _response_level(
    units: list[_Unit], pred: list[str | None], ref: list[str | None]
) -> stats.VerifierReport | None:
    both = [(u, p, r) for u, p, r in zip(units, pred, ref, strict=True) if p is not None]
    if not both:
        return None
    docs = [u.document for u, _, _ in both]
    pred_resp = stats.response_labels([p for _, p, _ in both], docs)
    ref_resp = stats.response_labels([r for _, _, r in both], docs)
    keys = list(ref_resp)
    return stats.verifier_vs_reference(
        y_true=[ref_resp[k] for k in keys],
        y_pred=[pred_resp[k] for k in keys],
        mode="binary",
        units=[f"document {k}" for k in keys],
    )


def _add_texts(rows: list[tuple[Cell, ...]], models: dict[str, Any]) -> None:
    """Each disagreement row gets the text of its claim or segment."""
    ids: dict[Any, set[Any]] = defaultdict(set)
    for row in rows:
        ids[models[row[1]]].add(row[6])
    texts = {
        (model, pk): text
        for model, pks in ids.items()
        for pk, text in fetch(model.objects.filter(pk__in=pks).values_list("pk", "text"))
    }
    for i, row in enumerate(rows):
        text = texts.get((models[row[1]], row[6]), "")
        rows[i] = (*row, text if len(text) <= 300 else text[:297] + "...")


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-") or "system"


# --------------------------------------------------------------------------- pipeline


_BLANK_CLAIM = PipelineClaim("", 0, "")


def _pipeline_section(project: Project, filters: Filters, *, k_rule: str) -> Section | None:
    verdicts = Verdict.objects.filter(
        system__project=project, system__kind=System.VERIFIER, claim__isnull=False
    )
    lists = ClaimList.objects.filter(document__project=project)
    if filters.domains:
        verdicts = verdicts.filter(claim__claim_list__document__domain__in=filters.domains)
        lists = lists.filter(document__domain__in=filters.domains)
    labels: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for verifier, list_id, label in verdicts.values_list(
        "system__name", "claim__claim_list_id", "label"
    ).iterator(chunk_size=5000):
        try:
            canonical = stats.normalise_verdict(label)
        except ValueError:
            canonical = None
        labels[verifier][list_id].append(canonical or "unparsed")
    if not labels:
        return None
    info = {
        pk: (external, model, domain, extractor, abstained)
        for pk, external, model, domain, extractor, abstained in lists.values_list(
            "pk",
            "document__external_id",
            "document__source_model",
            "document__domain",
            "system__name",
            "abstained",
        )
    }
    sizes = dict(
        Claim.objects.filter(claim_list__in=lists)
        .values("claim_list_id")
        .annotate(n=Count("id"))
        .values_list("claim_list_id", "n")
    )
    tables: list[Table] = []
    data: dict[tuple[str, str], pipeline_score.ScoresTable] = {}
    for verifier in sorted(labels):
        by_extractor: dict[str, list[ResponseResult]] = defaultdict(list)
        seen_extractors = set()
        for list_id, verdict_labels in labels[verifier].items():
            external, model, domain, extractor, abstained = info[list_id]
            seen_extractors.add(extractor)
            by_extractor[extractor].append(
                _response(
                    external,
                    model,
                    domain,
                    abstained,
                    sizes.get(list_id, 0),
                    verdict_labels,
                    extractor,
                    verifier,
                )
            )
        # Abstained responses have no claims to verify but still count as abstentions.
        for list_id, (external, model, domain, extractor, abstained) in info.items():
            if abstained and extractor in seen_extractors and list_id not in labels[verifier]:
                by_extractor[extractor].append(
                    _response(external, model, domain, True, 0, [], extractor, verifier)
                )
        for extractor, results in sorted(by_extractor.items()):
            scores = pipeline_score.score_results(results, k_rule=k_rule)
            data[(verifier, extractor)] = scores
            tables += _score_tables(verifier, extractor, scores)
    return Section(
        "pipeline",
        "Pipeline scores (VERIScore)",
        (
            f"Per response P = S/|C|, R = min(S/K, 1), F1@K; K per domain is the {k_rule} median "
            "claim count over every model (pipeline.score). Read from the verifiers' verdicts "
            "stored in the project; annotator and date filters do not apply here.",
        ),
        tuple(tables),
        data=data,
    )


def _factscore_section(project: Project, filters: Filters) -> list[Section]:
    docs = None
    if filters.domains:
        docs = list(
            project.documents.filter(domain__in=filters.domains).values_list("pk", flat=True)
        )
    sets = factscore_table.system_verdict_sets(project)
    gold = factscore_table.gold_verdict_set(project)
    rows = [
        r
        for vs in [*sets, *([gold] if gold else [])]
        for r in factscore_table.factscore_rows(project, vs, docs)
    ]
    if not rows:
        return []
    table = Table(
        "factscore",
        "FActScore per source model",
        factscore_table.COLUMNS,
        tuple(r.cells() for r in rows),
        decimals=1,
    )
    return [
        Section(
            "factscore",
            "FActScore",
            (
                "Per responding response S / (S + NS + IR + the model's atomic facts of "
                "sentences marked is-relevant: false), averaged over responding responses "
                "(Min et al., 2023); one row per verdict set on atomic facts, claim-list system "
                "and source model. Annotator and date filters do not apply here.",
            ),
            (table,),
        )
    ]


def _response(
    external: str,
    model: str,
    domain: str,
    abstained: bool,
    n_claims: int,
    labels: list[str],
    extractor: str,
    verifier: str,
) -> ResponseResult:
    claims = [
        ClaimResult(_BLANK_CLAIM, verdict=PipelineVerdict(label, "", True)) for label in labels
    ]
    claims += [ClaimResult(_BLANK_CLAIM) for _ in range(max(n_claims - len(labels), 0))]
    return ResponseResult(
        id=external,
        response="",
        question=None,
        model=model or "(unknown model)",
        domain=domain,
        abstained=abstained,
        extractor=extractor,
        extraction_model="",
        verification_model=verifier,
        prompt_version="",
        label_mode="",
        retriever="",
        claims=claims,
    )


def _score_tables(verifier: str, extractor: str, scores: pipeline_score.ScoresTable) -> list[Table]:
    slug = f"{_slug(verifier)}-{_slug(extractor)}"
    domains = sorted(scores.k)
    models = sorted({r.model for r in scores.rows})
    cell = {(r.model, r.domain): r.veriscore for r in scores.rows if r.responses}
    averages: dict[str, float] = {}
    wide_rows: list[tuple[Cell, ...]] = [
        (
            "K",
            *[
                int(scores.k[d]) if float(scores.k[d]).is_integer() else scores.k[d]
                for d in domains
            ],
            None,
        )
    ]
    for m in models:
        values = [cell.get((m, d)) for d in domains]
        present = [v for v in values if v is not None]
        if present:
            averages[m] = sum(present) / len(present)
        wide_rows.append((m, *values, averages.get(m)))
    taus: list[Cell] = []
    for d in domains:
        column = {m: cell[(m, d)] for m in models if (m, d) in cell}
        taus.append(stats.kendall_tau(column, averages).tau)
    wide_rows.append(("Kendall's tau w/ Avg.", *taus, 1.0 if len(averages) > 1 else None))
    tables = [
        Table(
            f"veriscore-{slug}",
            f"VERIScore per model and domain, verifier {verifier}, claims by {extractor} "
            "(VeriScore Table 3; K in the first row)",
            ("model", *[d or "(no domain)" for d in domains], "Avg."),
            tuple(wide_rows),
            note="VERIScore x100 per model and domain; the last row is Kendall's tau between "
            "each domain's scores and the models' average.",
            decimals=2,
        ),
        Table(
            f"veriscore-{slug}-detail",
            f"VERIScore details, verifier {verifier}, claims by {extractor}",
            (
                "model",
                "domain",
                "responses",
                "abstained",
                "K",
                "VERIScore",
                "precision",
                "recall",
                "mean claims",
                "unverified claims",
            ),
            tuple(
                (
                    r.model,
                    r.domain,
                    r.responses,
                    r.abstained,
                    r.k,
                    r.veriscore,
                    r.precision,
                    r.recall,
                    r.mean_claims,
                    r.unverified,
                )
                for r in scores.rows
            ),
        ),
    ]
    if scores.correlations:
        tables.append(
            Table(
                f"veriscore-{slug}-kendall",
                f"Kendall's tau between domains, verifier {verifier}",
                ("domain A", "domain B", "models", "tau", "p-value", "note"),
                tuple(
                    (c.domain_a, c.domain_b, c.models, c.tau, c.p_value, c.note)
                    for c in scores.correlations
                ),
            )
        )
    return tables


# --------------------------------------------------------------------------- effort


def _effort_section(project: Project, filters: Filters, names: dict[int, str]) -> Section | None:
    rows = Assignment.objects.filter(
        Q(item__project=project) & _assignment_filter(filters) & hiring.REGULAR
    ).values_list("annotator_id", "item__kind", "status", "active_seconds")
    per: dict[tuple[int, str], list[tuple[str, float]]] = defaultdict(list)
    for annotator, kind, status, seconds in fetch(rows):
        per[(annotator, kind)].append((status, seconds))
        per[(annotator, "all")].append((status, seconds))
    if not per:
        return None
    table_rows = []
    order = sorted(
        per, key=lambda k: (_rater_key(names.get(k[0], f"A?{k[0]}")), k[1] != "all", k[1])
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


# --------------------------------------------------------------------------- wide export


def wide_rows(
    project: Project, *, filters: Filters | None = None, real_names: bool = False
) -> tuple[list[str], list[list[str]]]:
    """The diagnosis table: one row per (item, unit, field), one column per annotator.

    Cells hold the annotator's answer, or an explicit marker: "(no answer)" (assigned,
    submitted or not, but this field is empty), "(skipped)", "(not assigned)", and
    "(not applicable)" for an error type on a segment the annotator marked correct.
    Comparison choices show the chosen system's name, not the list number.
    """
    filters = filters or Filters()
    names = member_names(project, real_names=real_names)
    annotators = [uid for uid, _ in annotator_choices(project, real_names=real_names)]
    if filters.annotators:
        annotators = [a for a in annotators if a in filters.annotators]
    assignments = Assignment.objects.filter(
        Q(item__project=project) & _assignment_filter(filters) & hiring.REGULAR
    ).values_list("item_id", "annotator_id", "status")
    status: dict[tuple[int, int], str] = {}
    for item, annotator, st in assignments.iterator(chunk_size=5000):
        status[(item, annotator)] = st
        if annotator not in annotators:
            annotators.append(annotator)
    items = Item.objects.filter(project=project, quality__isnull=True)
    if filters.domains:
        items = items.filter(document__domain__in=filters.domains)
    item_info = {
        pk: (kind, external, domain, claim, doc, list_a)
        for pk, kind, external, domain, claim, doc, list_a in items.values_list(
            "pk",
            "kind",
            "document__external_id",
            "document__domain",
            "claim_id",
            "document_id",
            "list_a_id",
        )
    }
    systems = {
        pk: (a, b)
        for pk, a, b in items.values_list("pk", "list_a__system__name", "list_b__system__name")
    }
    specs = {spec.name: spec for spec in kinds.all_specs()}
    fields = sorted({f for spec in specs.values() for f in spec.categorical(project)})
    answered: dict[tuple[int, str, str], dict[int, str]] = defaultdict(dict)
    answers = Answer.objects.filter(
        Q(
            assignment__item__project=project,
            field__in=fields,
            assignment__item__quality__isnull=True,
        )
        & _assignment_filter(filters, "assignment__")
    ).values_list(
        "assignment__item_id",
        "assignment__annotator_id",
        "assignment__swapped",
        "unit",
        "field",
        "value",
    )
    for item, annotator, swapped, unit, fld, value in answers.iterator(chunk_size=5000):
        info = item_info.get(item)
        if info:
            spec = specs[info[0]]
            value = spec.export_value(fld, spec.comparable(fld, value, swapped), systems[item])
        answered[(item, unit, fld)][annotator] = value

    expected: dict[int, list[tuple[str, str]]] = {}
    for spec in specs.values():
        of_kind = {pk: info for pk, info in item_info.items() if info[0] == spec.name}
        if of_kind:
            expected.update(spec.expected(project, of_kind))
    keys: dict[tuple[int, str, str], None] = {}
    for pk in sorted(item_info):
        for unit, fld in expected.get(pk, []):
            keys[(pk, unit, fld)] = None
    for key in sorted(answered):
        if key[0] in item_info:
            keys.setdefault(key, None)

    header = [
        "item",
        "kind",
        "document",
        "domain",
        "unit",
        "field",
        *[names.get(a, f"A?{a}") for a in annotators],
    ]
    out = []
    for item, unit, fld in keys:
        kind, external, domain = item_info[item][:3]
        given = answered.get((item, unit, fld), {})
        row = [str(item), kind, external, domain, unit, fld]
        for a in annotators:
            st = status.get((item, a))
            if a in given:
                row.append(given[a])
            elif st is None:
                row.append(NOT_ASSIGNED)
            elif st == Assignment.SKIPPED:
                row.append(SKIPPED)
            elif _not_asked(specs[kind].field(fld), answered, (item, unit), a):
                row.append(NOT_APPLICABLE)
            else:
                row.append(NO_ANSWER)
        out.append(row)
    return header, out


def _not_asked(
    field: Field | None,
    answered: dict[tuple[int, str, str], dict[int, str]],
    unit: tuple[int, str],
    annotator: int,
) -> bool:
    """A conditional field the annotator's other answer made moot (an error type of a
    segment they marked correct)."""
    if field is None or field.only_when is None:
        return False
    given = answered.get((*unit, field.only_when[0]), {}).get(annotator)
    return given is not None and given != field.only_when[1]


def wide_csv(project: Project, *, filters: Filters | None = None, real_names: bool = False) -> str:
    header, rows = wide_rows(project, filters=filters, real_names=real_names)
    out = io.StringIO()
    writer = safecsv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def report_json(report: Report) -> str:
    return json.dumps(report.as_json(), indent=1, default=str)


def all_tables_csv(tables: Sequence[Table]) -> str:
    """Several tables in one CSV file, each after a "# table: <name>" line."""
    return "\n".join(f"# table: {t.name}\n{table_csv(t)}" for t in tables)
