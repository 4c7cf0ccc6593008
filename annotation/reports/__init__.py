"""Agreement and validation reports: ORM queries -> stats -> frozen report objects.

A report is a list of sections; a section holds tables (every one exportable as CSV,
JSON and LaTeX) and inline SVG charts. A section exists only when its data does.

Queries read flat tuples (`values_list`) in a handful of queries per report, whatever
the project size: no model instances per answer, no query per item. Gold labels are
`gold.field_golds`' on the filtered answers: a report restricted to some annotators,
domains or dates uses the gold of that subset.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from django.core.cache import cache
from django.utils import timezone
from threadpoolctl import threadpool_limits

from .. import kinds
from ..answers import collector_paused
from ..models import Project
from .drilldown import linked_agreement_sections
from .effort import effort_section
from .gold_models import notice_section, pending, resolve
from .metrics import metric_sections
from .options import ReportOptions
from .pipeline_scores import factscore_section, pipeline_section
from .planning import adaptive_overlap_section, planning_section
from .quality import quality_section
from .queries import ReportData, annotator_choices, domains_of, member_names, report_data
from .sensitivity import sensitivity_section
from .tables import (
    DISPLAY_LIMIT,
    Cell,
    Chart,
    Filters,
    Report,
    Section,
    Table,
    all_tables_csv,
    isolated,
    latex_escape,
    report_json,
    table_csv,
    table_json,
    table_latex,
    table_text,
)
from .verifiers import verifier_sections

__all__ = [
    "DISPLAY_LIMIT",
    "SECTIONS",
    "CachedReport",
    "Cell",
    "Chart",
    "Filters",
    "Report",
    "ReportOptions",
    "ReportData",
    "Section",
    "SectionBuilder",
    "Table",
    "all_tables_csv",
    "annotator_choices",
    "build_report",
    "cached_report",
    "cached_table",
    "cached_table_text",
    "domains_of",
    "latex_escape",
    "member_names",
    "report_json",
    "table_csv",
    "table_json",
    "table_latex",
    "table_text",
]

# --------------------------------------------------------------------------- sections


def kind_sections(data: ReportData) -> list[Section]:
    """The sections each kind asks for (KindSpec.report_sections; their builders are in
    the kind's folder, KindSpec.report_section), each on its own."""
    sections: list[Section] = []
    for spec in kinds.all_specs():
        for slug in spec.report_sections:
            sections += isolated(
                f"{slug}-{spec.name}",
                slug.capitalize(),
                lambda slug=slug, spec=spec: spec.report_section(slug)(  # type: ignore[misc]
                    data.project,
                    spec,
                    data.answers,
                    data.golds_of.get(spec.name, []),
                    with_charts=data.with_charts,
                ),
            )
    return sections


class SectionBuilder(NamedTuple):
    title: str
    build: Callable[[ReportData], list[Section] | Section | None]


# slug -> builder, in the report's order. Each builder queries what it needs beyond
# ReportData, computes with `stats`, and returns tables (None or [] when it has no data).
SECTIONS: dict[str, SectionBuilder] = {
    "agreement": SectionBuilder("Inter-annotator agreement", linked_agreement_sections),
    "kinds": SectionBuilder("Sections of the item kinds", kind_sections),
    "verifiers": SectionBuilder("Verifiers against human labels", verifier_sections),
    "pipeline": SectionBuilder("Pipeline scores", pipeline_section),
    "factscore": SectionBuilder("FActScore from verdicts on atomic facts", factscore_section),
    "metrics": SectionBuilder("Metric against metric", metric_sections),
    "effort": SectionBuilder("Annotation effort", effort_section),
    "annotator-quality": SectionBuilder("Annotator quality", quality_section),
    "adaptive-overlap": SectionBuilder("Adaptive overlap", adaptive_overlap_section),
    "planning": SectionBuilder("Planning the study", planning_section),
    "sensitivity": SectionBuilder("Sensitivity to the gold method", sensitivity_section),
}
# slow sections built only when asked for (`build_report(plan=True)`, `sensitivity=True`:
# it has the task worker fit every annotator model)
OPT_IN = {"planning", "sensitivity"}

# --------------------------------------------------------------------------- report


def warm_up() -> None:
    """What the first report of a process would do once and the next ones not: the report
    templates compiled, threadpoolctl's scan of the loaded libraries, scikit-learn's
    first call (it looks up its dataframe plugins), and the URLconf loaded with its reverse
    map (the sections link to the disagreement pages with `reverse`, whose first call
    imports every view and compiles every route's pattern). A server does it at start
    (annotation/wsgi.py, asgi.py)."""
    from django.template.loader import get_template
    from django.urls import reverse
    from sklearn.metrics import cohen_kappa_score

    reverse("disagreements", args=[0])
    for name in ("annotation/report_file.html", "annotation/_report_body.html"):
        get_template(name)
    with threadpool_limits(limits=1, user_api="blas"):
        cohen_kappa_score([0, 1], [0, 1])


def build_report(project: Project, options: ReportOptions | None = None, **changes: Any) -> Report:
    """The project's report with `options` (the defaults when None), each field named in
    `changes` replaced (`build_report(project, bootstrap=200)`). `options.gold`: the gold
    method (`gold.METHODS`), by default the project's; `options.sensitivity`: add the
    section comparing the headline figures across gold methods."""
    o = replace(options or ReportOptions(), **changes)
    names = member_names(project, real_names=o.real_names)
    sections: list[Section] = []
    gold_name, method, fit = resolve(project, o.filters, o.gold)
    if fit is not None:
        sections.append(notice_section(fit))
    # numpy's products here are small: BLAS threads would only spin on the other cores
    with collector_paused(), threadpool_limits(limits=1, user_api="blas"):
        data = report_data(
            project,
            filters=o.filters,
            names=names,
            bootstrap=o.bootstrap,
            seed=o.seed,
            k_rule=o.k_rule,
            with_charts=o.with_charts,
            gold=method,
            gold_name=gold_name,
        )
        for slug, (title, build) in SECTIONS.items():
            if slug in OPT_IN and not {"planning": o.plan, "sensitivity": o.sensitivity}[slug]:
                continue
            if slug == "planning":
                build = functools.partial(planning_section, method=o.plan_method)
            sections += isolated(slug, title, lambda build=build: build(data))  # type: ignore[misc]
    return Report(
        project_id=project.pk,
        project_name=project.name,
        generated_at=timezone.now(),
        filters=o.filters,
        filters_text=o.filters.describe(names),
        real_names=o.real_names,
        bootstrap=o.bootstrap,
        seed=o.seed,
        sections=tuple(sections),
        plan=o.plan,
    )


# --------------------------------------------------------------------------- cache

CACHE_SECONDS = 7 * 24 * 3600  # a key names the data version: an entry is never stale
LONG_TABLE = 20_000  # rows: a table this long gets its CSV rendered when the report is built


@dataclass(frozen=True)
class CachedReport:
    """A report as the cache holds it: each table pickled on its own, so that a table
    download unpickles that table only (most of a large report's pickle is a few long
    tables)."""

    report: Report  # its sections without their tables
    layout: tuple[tuple[str, ...], ...]  # each section's table names
    tables: dict[str, bytes]  # table name -> the pickled Table
    waiting: bool = False  # on a model's fit (gold_models.pending): never cached

    @classmethod
    def of(cls, report: Report, *, waiting: bool = False) -> CachedReport:
        return cls(
            replace(report, sections=tuple(replace(s, tables=()) for s in report.sections)),
            tuple(tuple(t.name for t in s.tables) for s in report.sections),
            {t.name: pickle.dumps(t, pickle.HIGHEST_PROTOCOL) for t in report.tables()},
            waiting,
        )

    def table(self, name: str) -> Table:
        """The table called `name` (KeyError when the report has none)."""
        table: Table = pickle.loads(self.tables[name])
        return table

    def whole(self) -> Report:
        return replace(
            self.report,
            sections=tuple(
                replace(s, tables=tuple(self.table(n) for n in names))
                for s, names in zip(self.report.sections, self.layout, strict=True)
            ),
        )


def _key(project: Project, options: ReportOptions) -> str:
    """The cache key of this report. The key holds the project's data version
    (models.bump_data_version, bumped in the same transaction as every write a report
    reads), read before the report's own queries: a write committed meanwhile leaves a
    report at least as new as its key, never an older one under a newer key."""
    version = Project.objects.filter(pk=project.pk).values_list("data_version", flat=True)
    digest = hashlib.sha256(repr(options).encode()).hexdigest()
    return f"report:tables:{project.pk}:{version.get()}:{digest}"


def _cached(
    project: Project, options: ReportOptions, key: str | None = None
) -> tuple[CachedReport, Report | None]:
    """The cache's entry for this report (built and stored on a miss, then also returned
    whole); `key`: its `_key` when the caller has it."""
    key = key or _key(project, options)
    entry: CachedReport | None = cache.get(key)
    if entry is not None:
        return entry, None
    # hit or miss, the same report: without the sections' stats objects (`data`)
    built = build_report(project, options)
    report = built.without_data()
    entry = CachedReport.of(report, waiting=pending(built))
    if entry.waiting:
        return entry, report  # a model still being fitted: built again until it is done
    cache.set(key, entry, CACHE_SECONDS)
    # A long table's CSV rendered now, with the report (a shorter one renders within the
    # download target on demand): its first download is then served as fast as the next
    cache.set_many(
        {
            _text_key(key, t.name, "csv"): table_text(t, "csv")
            for t in report.tables()
            if len(t.rows) > LONG_TABLE
        },
        CACHE_SECONDS,
    )
    return entry, report


def is_cached(project: Project, options: ReportOptions | None = None, **changes: Any) -> bool:
    """Whether `cached_report(project, options, **changes)` would be served from the cache,
    without building anything (the report page shows progress instead of waiting)."""
    return bool(cache.has_key(_key(project, replace(options or ReportOptions(), **changes))))


def cached_report(project: Project, options: ReportOptions | None = None, **changes: Any) -> Report:
    """`build_report`, served from the cache when the project's data has not changed since
    a report with the same options was built. The cached report has no `Section.data`
    (the stats objects): callers that need them build."""
    entry, report = _cached(project, replace(options or ReportOptions(), **changes))
    return report or entry.whole()


def cached_table(
    project: Project, name: str, options: ReportOptions | None = None, **changes: Any
) -> Table:
    """One table of `cached_report(project, options, **changes)`, unpickling only that
    table from the cache (KeyError when the report has no such table)."""
    entry, _ = _cached(project, replace(options or ReportOptions(), **changes))
    return entry.table(name)


def cached_table_text(
    project: Project, name: str, fmt: str, options: ReportOptions | None = None, **changes: Any
) -> str:
    """`table_text(cached_table(project, name, options, **changes), fmt)`, itself kept in
    the cache under the report's key once rendered (a long table's CSV is slow to write):
    a download served again reads it only. KeyError when the report has no such table."""
    full = replace(options or ReportOptions(), **changes)
    report_key = _key(project, full)
    key = _text_key(report_key, name, fmt)
    text: str | None = cache.get(key)
    if text is None:
        entry, _ = _cached(project, full, report_key)
        text = table_text(entry.table(name), fmt)
        if not entry.waiting:
            cache.set(key, text, CACHE_SECONDS)
    return text


def _text_key(key: str, name: str, fmt: str) -> str:
    """The cache key of a table's rendered text under its report's key `key`; the name
    comes from the URL: hashed, so that any name makes a valid, short key."""
    return f"{key}:{hashlib.sha256(f'{name}.{fmt}'.encode()).hexdigest()}"
