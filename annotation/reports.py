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

import csv
import io
import json
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any, NamedTuple

from django.db import connections
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from pipeline import score as pipeline_score
from pipeline.types import Claim as PipelineClaim
from pipeline.types import ClaimResult, ResponseResult
from pipeline.types import Verdict as PipelineVerdict

from . import charts, stats
from .gold import Gold, decide
from .kinds import CLAIM_LABEL_NAMES, CLAIM_LABELS, categorical_fields, unit_kind
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
)

Cell = str | int | float | None
NO_ANSWER = "(no answer)"
NOT_ASSIGNED = "(not assigned)"
SKIPPED = "(skipped)"
NOT_APPLICABLE = "(not applicable)"
DISPLAY_LIMIT = 100  # rows shown on the page for long lists; exports hold all of them

# (kind, unit level, field, title): the agreement tables, in the order shown.
AGREEMENT_SPECS: tuple[tuple[str, str, str, str], ...] = (
    (Item.COMPARISON, "item", "choice", "Comparison: which claim list is better"),
    (Item.COMPARISON, "item", "hard", "Comparison: hard to decide"),
    (Item.VERIFICATION, "evidence", "stance", "Verification: stance of each search result"),
    (Item.VERIFICATION, "item", "label", "Verification: claim label"),
    (Item.SEGMENT, "segment", "correct", "Segments: correct or not"),
    (Item.SEGMENT, "segment", "error_type",
     "Segments: error type, on segments every annotator marked incorrect"),
    (Item.SEGMENT, "item", "keep", "Segments: keep or remove the response"),
)
CATEGORICAL_FIELDS = sorted({spec[2] for spec in AGREEMENT_SPECS})


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
        return [[_display(col, v, self.decimals) for col, v in zip(self.columns, row, strict=True)]
                for row in rows]

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
    writer = csv.writer(out)
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
    return {uid: (username if real_names else f"A{n}") for uid, n, username in rows}


def annotator_choices(project: Project, *, real_names: bool) -> list[tuple[int, str]]:
    rows = Membership.objects.filter(project=project, role=Membership.ANNOTATOR).order_by(
        "number"
    ).values_list("user_id", "number", "user__username")
    return [(uid, username if real_names else f"A{n}") for uid, n, username in rows]


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


class _Row(NamedTuple):
    item: int
    kind: str
    unit: str
    field: str
    value: str  # comparison choices already translated to the side "a"/"b"
    annotator: int
    raw: str
    swapped: bool
    domain: str


def _fetch(qs: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """The rows of a values_list() query as plain tuples, straight from the cursor.

    Skips the ORM's per-row converters, which cost more than the query itself on
    100,000-row reports; callers only read ints and strings (booleans via bool()).
    """
    sql, params = qs.query.sql_with_params()
    with connections[qs.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _answer_rows(project: Project, filters: Filters) -> list[_Row]:
    assignments = Assignment.objects.filter(
        Q(item__project=project, status=Assignment.SUBMITTED) & _assignment_filter(filters)
    )
    info = {
        pk: (item, kind, annotator, bool(swapped), domain)
        for pk, item, kind, annotator, swapped, domain in _fetch(assignments.values_list(
            "pk", "item_id", "item__kind", "annotator_id", "swapped", "item__document__domain"))
    }
    answers = Answer.objects.filter(
        assignment__in=assignments.values("pk"), field__in=CATEGORICAL_FIELDS
    ).values_list("assignment_id", "unit", "field", "value")
    rows = []
    for assignment, unit, fld, value in _fetch(answers):
        item, kind, annotator, swapped, domain = info[assignment]
        side = value
        if kind == Item.COMPARISON and fld == "choice":
            side = {"1": "b" if swapped else "a", "2": "a" if swapped else "b"}.get(value, value)
        rows.append(_Row(item, kind, unit, fld, side, annotator, value, swapped, domain))
    return rows


UnitKey = tuple[int, str, str]  # (item, unit, field)


def _grouped(rows: Iterable[_Row]) -> dict[UnitKey, dict[int, str]]:
    grouped: dict[UnitKey, dict[int, str]] = defaultdict(dict)
    for r in rows:
        grouped[(r.item, r.unit, r.field)][r.annotator] = r.value
    return grouped


GOLD_FIELDS = ("label", "correct")  # the fields whose gold labels a report uses


def _gold(
    grouped: dict[UnitKey, dict[int, str]], kinds: dict[int, str], project: Project
) -> dict[UnitKey, Gold]:
    adjudicated = {
        (item, unit, fld): (value, note)
        for item, unit, fld, value, note in Adjudication.objects.filter(
            item__project=project, field__in=GOLD_FIELDS
        ).values_list("item_id", "unit", "field", "value", "note")
    }
    golds: dict[UnitKey, Gold] = {}
    for key, by_rater in grouped.items():
        item, unit, fld = key
        if fld in GOLD_FIELDS:
            golds[key] = decide(item, kinds[item], unit, fld, list(by_rater.values()),
                                adjudicated.get(key))
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
    rows = _answer_rows(project, filters)
    kinds = {r.item: r.kind for r in rows}
    grouped = _grouped(rows)
    golds = _gold(grouped, kinds, project)

    sections: list[Section] = []
    agreement = _agreement_sections(
        project, grouped, kinds, names, bootstrap=bootstrap, seed=seed, with_charts=with_charts
    )
    sections += agreement
    sections += _verification_sections(rows, golds, with_charts=with_charts)
    preference = _preference_section(project, rows, with_charts=with_charts)
    if preference:
        sections.append(preference)
    verifiers = _verifier_sections(project, golds, kinds, filters)
    sections += verifiers
    pipeline = _pipeline_section(project, filters, k_rule=k_rule)
    if pipeline:
        sections.append(pipeline)
    from .metric_reports import metric_sections  # it builds on this module's tables

    sections += metric_sections(project, filters=filters, golds=golds, bootstrap=bootstrap,
                                seed=seed, with_charts=with_charts, k_rule=k_rule)
    effort = _effort_section(project, filters, names)
    if effort:
        sections.append(effort)
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


# --------------------------------------------------------------------------- agreement


def _agreement_sections(
    project: Project,
    grouped: dict[UnitKey, dict[int, str]],
    kinds: dict[int, str],
    names: dict[int, str],
    *,
    bootstrap: int,
    seed: int,
    with_charts: bool,
) -> list[Section]:
    # Units every annotator who judged it marked incorrect: where error types are compared.
    all_incorrect = {
        (item, unit)
        for (item, unit, fld), by_rater in grouped.items()
        if fld == "correct" and by_rater and all(v == "false" for v in by_rater.values())
    }
    by_spec: dict[tuple[str, str, str], dict[Hashable, dict[str, str]]] = defaultdict(dict)
    for (item, unit, fld), by_rater in grouped.items():
        kind = kinds[item]
        level = unit_kind(unit)
        if fld == "error_type" and (item, unit) not in all_incorrect:
            continue
        by_spec[(kind, level, fld)][f"{item}/{unit}"] = {
            names.get(a, f"A?{a}"): v for a, v in by_rater.items()
        }
    rater_order = {name: i for i, name in enumerate(sorted(names.values(), key=_rater_key))}

    overview_rows = []
    sections = []
    for kind, level, fld, title in AGREEMENT_SPECS:
        mapping = by_spec.get((kind, level, fld))
        if not mapping:
            continue
        categories = categorical_fields(kind, project)[fld]
        allowed = set(categories)
        dropped = 0
        clean: dict[Hashable, dict[str, str]] = {}
        for unit, by_rater in mapping.items():
            kept = {r: v for r, v in by_rater.items() if v in allowed}
            dropped += len(by_rater) - len(kept)
            if kept:
                clean[unit] = kept
        if not clean:
            continue
        raters = sorted({r for row in clean.values() for r in row}, key=lambda r: rater_order.get(r, 1e9))
        ratings = stats.Ratings(
            units=tuple(clean),
            raters=tuple(raters),
            labels=tuple(tuple(row.get(r) for r in raters) for row in clean.values()),
        )
        result = stats.agreement(ratings, categories=categories, bootstrap=bootstrap, seed=seed)
        slug = f"agreement-{kind}-{fld}"
        overview_rows.append(_overview_row(kind, level, fld, result))
        sections.append(
            _agreement_section(slug, title, result, dropped=dropped, with_charts=with_charts)
        )
    if not sections:
        return []
    columns = (
        "task", "unit", "field", "units used", "raters per unit",
        "percent agreement", "pa CI low", "pa CI high",
        "Fleiss' kappa", "kappa CI low", "kappa CI high",
        "Krippendorff's alpha", "alpha CI low", "alpha CI high",
        "Gwet's AC1", "AC1 CI low", "AC1 CI high",
    )
    overview = Section(
        slug="agreement",
        title="Inter-annotator agreement",
        notes=(
            f"Confidence intervals: {bootstrap} bootstrap resamples of units (seed {seed}), "
            "95 % percentile intervals." if bootstrap else "No confidence intervals (bootstrap=0).",
            "A dash means the coefficient is undefined; the section of the field says why.",
        ),
        tables=(Table("agreement-overview", "Inter-annotator agreement", columns,
                      tuple(overview_rows)),),
    )
    return [overview, *sections]


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
        + ", ".join(f"{k}: {v} units" for k, v in r.raters_per_unit.items()) + ").",
    ]
    if excluded:
        notes.append("Excluded units: " + ", ".join(f"{n} ({reason})" for reason, n in
                                                   excluded.items()) + ".")
    if dropped:
        notes.append(f"{dropped} answer(s) outside the declared labels were left out.")
    coefficients = Table(
        f"{slug}-coefficients", f"{title}: coefficients",
        ("coefficient", "value", "CI low", "CI high", "units", "note"),
        tuple(
            (c.name, c.value, c.ci_low, c.ci_high, c.n_units,
             (f"undefined: {c.undefined_reason}" if c.undefined_reason else c.note) or "")
            for c in r.coefficients
        ),
    )
    total = sum(r.label_distribution.values())
    distribution = Table(
        f"{slug}-labels", f"{title}: label distribution (every rating)",
        ("label", "count", "percent"),
        tuple((label, r.label_distribution.get(label, 0),
               100 * r.label_distribution.get(label, 0) / total if total else None)
              for label in r.categories),
        decimals=1,
    )
    pairwise = Table(
        f"{slug}-pairwise", f"{title}: Cohen's kappa per pair of annotators",
        ("annotator", "other", "shared units", "Cohen's kappa", "CI low", "CI high", "note"),
        tuple(
            (str(p.rater_a), str(p.rater_b), p.n_units, p.kappa.value, p.kappa.ci_low,
             p.kappa.ci_high, f"undefined: {p.kappa.undefined_reason}"
             if p.kappa.undefined_reason else (p.kappa.note or ""))
            for p in r.pairwise
        ),
    )
    per_rater = Table(
        f"{slug}-annotators", f"{title}: each annotator against the others",
        ("annotator", "shared units", "pairs of ratings", "percent agreement", "mean Cohen's kappa",
         "note"),
        tuple((str(a.rater), a.n_units, a.n_pairs, a.percent_agreement, a.mean_kappa,
               a.undefined_reason or "") for a in r.per_rater),
    )
    chart_list: list[Chart] = []
    if with_charts and len(r.raters) >= 2:
        chart_list.append(Chart(
            f"{title}: pairwise Cohen's kappa",
            charts.kappa_heatmap([str(x) for x in r.raters], r.kappa_matrix(), title=title),
        ))
    return Section(slug, title, tuple(notes), (coefficients, distribution, pairwise, per_rater),
                   tuple(chart_list), data=r)


# --------------------------------------------------------------------------- verification


def _verification_sections(
    rows: list[_Row], golds: dict[UnitKey, Gold], *, with_charts: bool
) -> list[Section]:
    sections = []
    labels = [g for g in golds.values() if g.kind == Item.VERIFICATION and g.field == "label"]
    if labels:
        counts = Counter(g.value for g in labels)
        total = len(labels)
        table_rows: list[tuple[Cell, ...]] = [
            (CLAIM_LABEL_NAMES[label], counts.get(label, 0), 100 * counts.get(label, 0) / total)
            for label in CLAIM_LABELS
        ]
        other = total - sum(counts.get(label, 0) for label in CLAIM_LABELS)
        if other:
            table_rows.append(("Other (adjudicated outside the label set)", other,
                               100 * other / total))
        provenance = Counter(g.provenance for g in labels)
        sections.append(Section(
            "claim-labels",
            "Claim labels (VeriScore Table 2)",
            (
                f"Gold label of {total} claims: " + ", ".join(
                    f"{n} {p}" for p, n in sorted(provenance.items())) + ". A tie with no "
                "adjudication counts as inconclusive (not enough information), as in the paper.",
            ),
            (Table("claim-labels", "Distribution of the claim labels", ("label", "count", "%"),
                   tuple(table_rows), decimals=1),),
        ))
    stances = [r for r in rows if r.field == "stance" and r.unit.startswith("evidence:")]
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
            table_rows.append((rank, n, c["supports"], c["contradicts"], c["inconclusive"],
                               100 * informative / n if n else None))
        chart_list = []
        if with_charts:
            chart_list.append(Chart(
                "Informative search results by rank",
                charts.bars([str(r[0]) for r in table_rows],
                            [float(r[5] or 0) for r in table_rows],
                            xlabel="search result rank", ylabel="% informative"),
            ))
        sections.append(Section(
            "evidence-ranks",
            "Informative search results by rank (VeriScore §3.3)",
            ("A search result is informative when an annotator marked it as supporting or "
             "contradicting the claim; every annotator's judgement counts.",),
            (Table("evidence-ranks", "How often each search-result rank was informative",
                   ("rank", "judgements", "supports", "contradicts", "inconclusive",
                    "% informative"), tuple(table_rows), decimals=1),),
            tuple(chart_list),
        ))
    return sections


# --------------------------------------------------------------------------- preference


def _preference_section(project: Project, rows: list[_Row], *, with_charts: bool) -> Section | None:
    choices = [r for r in rows if r.kind == Item.COMPARISON and r.field == "choice"
               and r.raw in ("1", "2")]
    if not choices:
        return None
    hard = {(r.item, r.annotator): r.value == "yes" for r in rows
            if r.kind == Item.COMPARISON and r.field == "hard"}
    systems = {
        pk: (a, b)
        for pk, a, b in Item.objects.filter(project=project, kind=Item.COMPARISON).values_list(
            "pk", "list_a__system__name", "list_b__system__name")
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
        pref_rows.append((r.domain or "(no domain)", winner, loser,
                          hard.get((r.item, r.annotator), False), int(r.raw)))
    if not pref_rows:
        return None
    result = stats.preference(pref_rows)
    cells = Table(
        "preference", "Extraction-method preference (VeriScore Figure 3)",
        ("system A", "system B", "domain", "judgements", "A preferred", "A strong", "A slight",
         "B preferred", "B strong", "B slight", "A rate", "B rate", "binomial p-value"),
        tuple(
            (c.system_a, c.system_b, c.domain or "all", c.n, c.a_wins, c.a_strong, c.a_slight,
             c.b_wins, c.b_strong, c.b_slight, c.a_rate, c.b_rate, c.p_value)
            for c in result.cells
        ),
    )
    bias = Table(
        "position-bias", "Position bias: how often the list shown first won",
        ("domain", "judgements", "list 1 wins", "list 1 rate", "binomial p-value"),
        tuple((b.domain or "all", b.n, b.list1_wins, b.rate, b.p_value)
              for b in result.position_bias),
    )
    chart_list = []
    if with_charts:
        pairs = sorted({(c.system_a, c.system_b) for c in result.cells})
        for a, b in pairs:
            bars = [
                ("All" if c.domain is None else c.domain, c.a_strong, c.a_slight, c.b_slight,
                 c.b_strong)
                for c in result.cells if (c.system_a, c.system_b) == (a, b)
            ]
            chart_list.append(Chart(f"{a} vs {b}",
                                    charts.preference_bars(bars, system_a=a, system_b=b)))
    notes = [
        "Strong: the annotator did not find it hard to decide; slight: hard to decide. "
        "Every annotator's judgement counts (as in the paper's figure). The p-value is a "
        "two-sided exact binomial test against 50 %.",
    ]
    if missing_hard:
        notes.append(f"{missing_hard} judgement(s) had no 'hard to decide' answer and count "
                     "as strong.")
    return Section("preference", "Extraction-method preference", tuple(notes), (cells, bias),
                   tuple(chart_list), data=result)


# --------------------------------------------------------------------------- verifiers


@dataclass(frozen=True)
class _Unit:
    key: str  # "item 12 / claim" or "item 3 / segment:2"
    item: int
    target: int  # claim or segment id
    level: str  # "claim" | "segment"
    domain: str
    gold: Gold
    document: int


def _truthy(value: str | None) -> str | None:
    """Segment labels "true"/"false" as verdicts."""
    return {"true": stats.SUPPORTED, "false": stats.UNSUPPORTED}.get(value or "", value)


def _verifier_sections(
    project: Project, golds: dict[UnitKey, Gold], kinds: dict[int, str], filters: Filters
) -> list[Section]:
    verdicts = list(
        Verdict.objects.filter(system__project=project,
                               system__kind__in=[System.VERIFIER, System.REFERENCE])
        .values_list("claim_id", "segment_id", "system__name", "system__kind", "label")
    )
    if not verdicts:
        return []
    claim_gold = [g for g in golds.values() if g.kind == Item.VERIFICATION and g.field == "label"]
    seg_gold = [g for g in golds.values() if g.kind == Item.SEGMENT and g.field == "correct"]
    units: list[_Unit] = []
    if claim_gold:
        info = {
            pk: (claim, domain, doc)
            for pk, claim, domain, doc in Item.objects.filter(
                project=project, kind=Item.VERIFICATION
            ).values_list("pk", "claim_id", "document__domain", "document_id")
        }
        for g in claim_gold:
            if g.value is None or g.item not in info:
                continue
            claim, domain, doc = info[g.item]
            units.append(_Unit(f"item {g.item}", g.item, claim, "claim", domain, g, doc))
    if seg_gold:
        docs = {
            pk: (doc, domain)
            for pk, doc, domain in Item.objects.filter(project=project, kind=Item.SEGMENT)
            .values_list("pk", "document_id", "document__domain")
        }
        segment_ids = {
            (doc, pos): pk
            for pk, doc, pos in Segment.objects.filter(document__project=project).values_list(
                "pk", "document_id", "position")
        }
        for g in seg_gold:
            if g.value is None or g.item not in docs:
                continue
            doc, domain = docs[g.item]
            try:
                position = int(g.unit.split(":", 1)[1])
            except (IndexError, ValueError):
                continue
            seg = segment_ids.get((doc, position))
            if seg is not None:
                units.append(_Unit(f"item {g.item} / {g.unit}", g.item, seg, "segment", domain,
                                   g, doc))
    by_system: dict[tuple[str, str], dict[tuple[str, int], str]] = defaultdict(dict)
    for claim, segment, name, kind, label in verdicts:
        if claim is not None:
            by_system[(name, kind)][("claim", claim)] = label
        else:
            by_system[(name, kind)][("segment", segment)] = _truthy(label) or ""
    if not units:
        return [Section(
            "verifiers", "Verifiers against human labels",
            (f"{len(by_system)} system(s) have verdicts, but no claim or segment has a human "
             "gold label yet (within the filters).",),
        )]

    systems = sorted(by_system)
    score_rows: list[tuple[Cell, ...]] = []
    class_rows: list[tuple[Cell, ...]] = []
    confusion_tables: list[Table] = []
    disagreement_rows: list[tuple[Cell, ...]] = []
    mcnemar_rows: list[tuple[Cell, ...]] = []
    notes: list[str] = []
    reports: dict[tuple[str, str, str], stats.VerifierReport] = {}
    aligned: dict[tuple[str, str], tuple[list[_Unit], list[str | None]]] = {}
    for level in ("claim", "segment"):
        level_units = [u for u in units if u.level == level]
        if not level_units:
            continue
        ref_raw = [u.gold.value if level == "claim" else _truthy(u.gold.value)
                   for u in level_units]
        for name, kind in systems:
            labels = by_system[(name, kind)]
            pred = [labels.get((level, u.target)) for u in level_units]
            if not any(p is not None for p in pred):
                continue
            aligned[(name, level)] = (level_units, pred)
            for mode in ("binary", "ternary") if level == "claim" else ("binary",):
                try:
                    rep = stats.verifier_vs_reference(
                        pred, ref_raw, mode=mode, units=[u.key for u in level_units]  # type: ignore[arg-type]
                    )
                except ValueError as e:
                    notes.append(f"{name}: no {mode} scores ({e}).")
                    continue
                reports[(name, level, mode)] = rep
                score_rows.append(_score_row(name, kind, level, mode, rep))
                class_rows += [
                    (name, level, mode, c.label, c.precision, c.recall, c.f1, c.support,
                     c.predicted) for c in rep.per_class
                ]
                confusion_tables.append(Table(
                    f"confusion-{_slug(name)}-{level}-{mode}",
                    f"{name}: confusion matrix ({level}, {mode}); rows human, columns system",
                    ("human \\ system", *rep.labels),
                    tuple((label, *row) for label, row in zip(rep.labels, rep.confusion,
                                                               strict=True)),
                ))
                by_key = {u.key: u for u in level_units}
                for d in rep.disagreements:
                    u = by_key[d.unit]  # type: ignore[index]
                    disagreement_rows.append((
                        name, level, mode, u.item, u.gold.unit, u.domain, u.target, d.reference,
                        d.predicted, labels.get((level, u.target)), u.gold.value,
                        " ".join(f"{k}:{v}" for k, v in u.gold.votes.items()), u.gold.provenance,
                    ))
            if level == "segment":
                response = _response_level(level_units, pred, ref_raw)
                if response is not None:
                    reports[(name, "response", "binary")] = response
                    score_rows.append(_score_row(name, kind, "response", "binary", response))
        # McNemar between every two systems on the units both labelled.
        named = [(n, k) for n, k in systems if (n, level) in aligned]
        for i, (a, _) in enumerate(named):
            for b, _ in named[i + 1:]:
                pred_a = aligned[(a, level)][1]
                pred_b = aligned[(b, level)][1]
                for mode in ("binary", "ternary") if level == "claim" else ("binary",):
                    if (a, level, mode) not in reports or (b, level, mode) not in reports:
                        continue
                    m = stats.mcnemar_test(pred_a, pred_b, ref_raw, mode=mode)  # type: ignore[arg-type]
                    mcnemar_rows.append((a, b, level, mode, m.n, m.both_correct, m.only_a_correct,
                                         m.only_b_correct, m.both_wrong, m.method, m.statistic,
                                         m.p_value, m.undefined_reason or ""))
    _add_texts(project, disagreement_rows)

    tables = [
        Table("verifier-scores", "Verifiers against human gold labels (VeriScore Table 11)",
              ("system", "kind", "level", "mode", "units", "excluded", "overall F1 (macro)",
               "supported F1", "unsupported F1", "contradicted F1", "inconclusive F1",
               "accuracy", "balanced accuracy", "Cohen's kappa"),
              tuple(score_rows)),
        Table("verifier-classes", "Precision, recall and F1 per class",
              ("system", "level", "mode", "class", "precision", "recall", "F1", "support",
               "predicted"), tuple(class_rows)),
    ]
    if mcnemar_rows:
        tables.append(Table(
            "mcnemar", "McNemar's test between systems on the same units",
            ("system A", "system B", "level", "mode", "units", "both correct", "only A correct",
             "only B correct", "both wrong", "method", "statistic", "p-value", "note"),
            tuple(mcnemar_rows)))
    tables += confusion_tables
    tables.append(Table(
        "verifier-disagreements", "Units where a system and the human gold label disagree",
        ("system", "level", "mode", "item", "unit", "domain", "claim or segment id",
         "human (as scored)", "system (as scored)", "system label", "human gold", "human votes",
         "gold provenance", "text"),
        tuple(disagreement_rows)))
    notes.insert(0, "Binary mode: contradicted and inconclusive count as unsupported. Overall F1 "
                 "is the macro mean over classes; VeriScore's published 'Overall F1' equals its "
                 "supported F1. Segment labels true/false read as supported/unsupported; a "
                 "response is unsupported when any of its segments is (FELM).")
    return [Section("verifiers", "Verifiers against human labels", tuple(notes), tuple(tables),
                    data=reports)]


def _score_row(name: str, kind: str, level: str, mode: str,
               rep: stats.VerifierReport) -> tuple[Cell, ...]:
    def f1(label: str) -> float | None:
        return rep.scores(label).f1 if label in rep.labels else None

    return (name, kind, level, mode, rep.n, sum(rep.excluded.values()), rep.macro_f1.value,
            f1(stats.SUPPORTED), f1(stats.UNSUPPORTED), f1(stats.CONTRADICTED),
            f1(stats.INCONCLUSIVE), rep.accuracy.value, rep.balanced_accuracy.value,
            rep.kappa.value)


def _response_level(units: list[_Unit], pred: list[str | None],
                    ref: list[str | None]) -> stats.VerifierReport | None:
    both = [(u, p, r) for u, p, r in zip(units, pred, ref, strict=True) if p is not None]
    if not both:
        return None
    docs = [u.document for u, _, _ in both]
    pred_resp = stats.response_labels([p for _, p, _ in both], docs)
    ref_resp = stats.response_labels([r for _, _, r in both], docs)
    keys = list(ref_resp)
    return stats.verifier_vs_reference(
        [pred_resp[k] for k in keys], [ref_resp[k] for k in keys], mode="binary",
        units=[f"document {k}" for k in keys],
    )


def _add_texts(project: Project, rows: list[tuple[Cell, ...]]) -> None:
    texts: dict[tuple[str, Any], str] = {}
    if any(r[1] == "claim" for r in rows):
        claims = Claim.objects.filter(items__project=project, items__kind=Item.VERIFICATION)
        for pk, text in _fetch(claims.values_list("pk", "text")):
            texts[("claim", pk)] = text
    if any(r[1] == "segment" for r in rows):
        segments = Segment.objects.filter(document__project=project)
        for pk, text in _fetch(segments.values_list("pk", "text")):
            texts[("segment", pk)] = text
    for i, row in enumerate(rows):
        text = texts.get((str(row[1]), row[6]), "")
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
            "pk", "document__external_id", "document__source_model", "document__domain",
            "system__name", "abstained")
    }
    sizes = dict(
        Claim.objects.filter(claim_list__in=lists).values("claim_list_id")
        .annotate(n=Count("id")).values_list("claim_list_id", "n")
    )
    tables: list[Table] = []
    data: dict[tuple[str, str], pipeline_score.ScoresTable] = {}
    for verifier in sorted(labels):
        by_extractor: dict[str, list[ResponseResult]] = defaultdict(list)
        seen_extractors = set()
        for list_id, verdict_labels in labels[verifier].items():
            external, model, domain, extractor, abstained = info[list_id]
            seen_extractors.add(extractor)
            by_extractor[extractor].append(_response(
                external, model, domain, abstained, sizes.get(list_id, 0), verdict_labels,
                extractor, verifier))
        # Abstained responses have no claims to verify but still count as abstentions.
        for list_id, (external, model, domain, extractor, abstained) in info.items():
            if abstained and extractor in seen_extractors and list_id not in labels[verifier]:
                by_extractor[extractor].append(
                    _response(external, model, domain, True, 0, [], extractor, verifier))
        for extractor, results in sorted(by_extractor.items()):
            scores = pipeline_score.score_results(results, k_rule=k_rule)
            data[(verifier, extractor)] = scores
            tables += _score_tables(verifier, extractor, scores)
    return Section(
        "pipeline", "Pipeline scores (VERIScore)",
        (f"Per response P = S/|C|, R = min(S/K, 1), F1@K; K per domain is the {k_rule} median "
         "claim count over every model (pipeline.score). Read from the verifiers' verdicts "
         "stored in the project; annotator and date filters do not apply here.",),
        tuple(tables), data=data,
    )


def _response(external: str, model: str, domain: str, abstained: bool, n_claims: int,
              labels: list[str], extractor: str, verifier: str) -> ResponseResult:
    claims = [ClaimResult(_BLANK_CLAIM, verdict=PipelineVerdict(label, "", True))
              for label in labels]
    claims += [ClaimResult(_BLANK_CLAIM) for _ in range(max(n_claims - len(labels), 0))]
    return ResponseResult(
        id=external, response="", question=None, model=model or "(unknown model)",
        domain=domain, abstained=abstained, extractor=extractor, extraction_model="",
        verification_model=verifier, prompt_version="", label_mode="", retriever="",
        claims=claims,
    )


def _score_tables(verifier: str, extractor: str,
                  scores: pipeline_score.ScoresTable) -> list[Table]:
    slug = f"{_slug(verifier)}-{_slug(extractor)}"
    domains = sorted(scores.k)
    models = sorted({r.model for r in scores.rows})
    cell = {(r.model, r.domain): r.veriscore for r in scores.rows if r.responses}
    averages: dict[str, float] = {}
    wide_rows: list[tuple[Cell, ...]] = [
        ("K", *[int(scores.k[d]) if float(scores.k[d]).is_integer() else scores.k[d]
                for d in domains], None)]
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
        Table(f"veriscore-{slug}",
              f"VERIScore per model and domain, verifier {verifier}, claims by {extractor} "
              "(VeriScore Table 3; K in the first row)",
              ("model", *[d or "(no domain)" for d in domains], "Avg."), tuple(wide_rows),
              note="VERIScore x100 per model and domain; the last row is Kendall's tau between "
              "each domain's scores and the models' average.", decimals=2),
        Table(f"veriscore-{slug}-detail", f"VERIScore details, verifier {verifier}, "
              f"claims by {extractor}",
              ("model", "domain", "responses", "abstained", "K", "VERIScore", "precision",
               "recall", "mean claims", "unverified claims"),
              tuple((r.model, r.domain, r.responses, r.abstained, r.k, r.veriscore, r.precision,
                     r.recall, r.mean_claims, r.unverified) for r in scores.rows)),
    ]
    if scores.correlations:
        tables.append(Table(
            f"veriscore-{slug}-kendall", f"Kendall's tau between domains, verifier {verifier}",
            ("domain A", "domain B", "models", "tau", "p-value", "note"),
            tuple((c.domain_a, c.domain_b, c.models, c.tau, c.p_value, c.note)
                  for c in scores.correlations)))
    return tables


# --------------------------------------------------------------------------- effort


def _effort_section(project: Project, filters: Filters, names: dict[int, str]) -> Section | None:
    rows = Assignment.objects.filter(
        Q(item__project=project) & _assignment_filter(filters)
    ).values_list("annotator_id", "item__kind", "status", "active_seconds")
    per: dict[tuple[int, str], list[tuple[str, float]]] = defaultdict(list)
    for annotator, kind, status, seconds in _fetch(rows):
        per[(annotator, kind)].append((status, seconds))
        per[(annotator, "all")].append((status, seconds))
    if not per:
        return None
    table_rows = []
    order = sorted(per, key=lambda k: (_rater_key(names.get(k[0], f"A?{k[0]}")),
                                       k[1] != "all", k[1]))
    for annotator, kind in order:
        entries = per[(annotator, kind)]
        submitted = [s for status, s in entries if status == Assignment.SUBMITTED]
        skipped = sum(status == Assignment.SKIPPED for status, _ in entries)
        table_rows.append((
            names.get(annotator, f"A?{annotator}"), kind, len(entries), len(submitted), skipped,
            len(submitted) + skipped, statistics.median(submitted) if submitted else None,
            sum(submitted) / 3600,
        ))
    notes = ["Active seconds exclude idle gaps; the median is over submitted items."]
    if filters.date_from or filters.date_to:
        notes.append("With a date range only items submitted in it are counted.")
    return Section("effort", "Annotator effort", tuple(notes), (Table(
        "effort", "Annotator effort",
        ("annotator", "kind", "assigned", "submitted", "skipped", "items done",
         "median active s per item", "active hours"), tuple(table_rows)),))


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
        Q(item__project=project) & _assignment_filter(filters)
    ).values_list("item_id", "annotator_id", "status")
    status: dict[tuple[int, int], str] = {}
    for item, annotator, st in assignments.iterator(chunk_size=5000):
        status[(item, annotator)] = st
        if annotator not in annotators:
            annotators.append(annotator)
    items = Item.objects.filter(project=project)
    if filters.domains:
        items = items.filter(document__domain__in=filters.domains)
    item_info = {
        pk: (kind, external, domain, claim, doc, a, b)
        for pk, kind, external, domain, claim, doc, a, b in items.values_list(
            "pk", "kind", "document__external_id", "document__domain", "claim_id", "document_id",
            "list_a__system__name", "list_b__system__name")
    }
    answered: dict[tuple[int, str, str], dict[int, str]] = defaultdict(dict)
    answers = Answer.objects.filter(
        Q(assignment__item__project=project, field__in=CATEGORICAL_FIELDS)
        & _assignment_filter(filters, "assignment__")
    ).values_list("assignment__item_id", "assignment__annotator_id", "assignment__swapped",
                  "unit", "field", "value")
    for item, annotator, swapped, unit, fld, value in answers.iterator(chunk_size=5000):
        info = item_info.get(item)
        if info and info[0] == Item.COMPARISON and fld == "choice" and value in ("1", "2"):
            side_a = (value == "1") != swapped
            value = (info[5] if side_a else info[6]) or value
        answered[(item, unit, fld)][annotator] = value

    evidence: dict[int, list[int]] = defaultdict(list)
    segments: dict[int, list[int]] = defaultdict(list)
    claim_ids = [i[3] for i in item_info.values() if i[0] == Item.VERIFICATION and i[3]]
    if claim_ids:
        for claim, rank in _evidence_ranks(project):
            evidence[claim].append(rank)
    if any(i[0] == Item.SEGMENT for i in item_info.values()):
        for doc, pos in Segment.objects.filter(document__project=project).values_list(
            "document_id", "position"
        ):
            segments[doc].append(pos)

    keys: dict[tuple[int, str, str], None] = {}
    for pk, (kind, _external, _domain, claim, doc, _a, _b) in sorted(item_info.items()):
        if kind == Item.COMPARISON:
            expected = [("item", "choice"), ("item", "hard")]
        elif kind == Item.VERIFICATION:
            expected = [(f"evidence:{r}", "stance") for r in sorted(evidence.get(claim, []))]
            expected.append(("item", "label"))
        else:
            expected = []
            for pos in sorted(segments.get(doc, [])):
                expected += [(f"segment:{pos}", "correct"), (f"segment:{pos}", "error_type")]
            expected.append(("item", "keep"))
        for unit, fld in expected:
            keys[(pk, unit, fld)] = None
    for key in sorted(answered):
        if key[0] in item_info:
            keys.setdefault(key, None)

    header = ["item", "kind", "document", "domain", "unit", "field",
              *[names.get(a, f"A?{a}") for a in annotators]]
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
            elif fld == "error_type" and answered.get((item, unit, "correct"), {}).get(a) == "true":
                row.append(NOT_APPLICABLE)
            else:
                row.append(NO_ANSWER)
        out.append(row)
    return header, out


def _evidence_ranks(project: Project) -> QuerySet[Any]:
    from .models import Evidence

    return Evidence.objects.filter(claim__items__project=project).values_list("claim_id", "rank")


def wide_csv(project: Project, *, filters: Filters | None = None, real_names: bool = False) -> str:
    header, rows = wide_rows(project, filters=filters, real_names=real_names)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def report_json(report: Report) -> str:
    return json.dumps(report.as_json(), indent=1, default=str)


def all_tables_csv(tables: Sequence[Table]) -> str:
    """Several tables in one CSV file, each after a "# table: <name>" line."""
    return "\n".join(f"# table: {t.name}\n{table_csv(t)}" for t in tables)
