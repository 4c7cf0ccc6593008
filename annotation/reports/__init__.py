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
import secrets
from collections.abc import Callable, Mapping
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
    """A report's entry in the cache: its sections without their tables, and each section's
    table names. Each table is stored under a key of its own (`_table_key`), so that a table
    download reads and unpickles that table only: most of a large report is a few long
    tables, and the entry is small. Each table is stored
    with `build`, which names the build that made it: two processes building the same report
    at once write the same keys, and a report may hold data newer than its key (`_key`), so
    an entry only takes the tables of its own build (`_read`)."""

    report: Report  # its sections without their tables
    layout: tuple[tuple[str, ...], ...]  # each section's table names
    build: str  # a random token: this build's tables are stored as (build, Table)

    @classmethod
    def of(cls, report: Report) -> CachedReport:
        return cls(
            replace(report, sections=tuple(replace(s, tables=()) for s in report.sections)),
            tuple(tuple(t.name for t in s.tables) for s in report.sections),
            secrets.token_hex(16),
        )

    def names(self) -> list[str]:
        return [name for names in self.layout for name in names]

    def whole(self, tables: Mapping[str, Table]) -> Report:
        """The report with its tables found in `tables` (by name), in their places."""
        return replace(
            self.report,
            sections=tuple(
                replace(s, tables=tuple(tables[n] for n in names if n in tables))
                for s, names in zip(self.report.sections, self.layout, strict=True)
            ),
        )


def _key(project: Project, options: ReportOptions) -> str:
    """The cache key of this report. The key holds the project's data version
    (models.bump_data_version, bumped in the same transaction as every write a report
    reads), read before the report's own queries: a write committed meanwhile leaves a
    report at least as new as its key, never an older one under a newer key. Its prefix
    names the entry's format (`CachedReport`): a process of an earlier version sharing the
    cache during an upgrade reads none of this version's entries, nor this one its."""
    version = Project.objects.filter(pk=project.pk).values_list("data_version", flat=True)
    digest = hashlib.sha256(repr(options).encode()).hexdigest()
    return f"report:entry:{project.pk}:{version.get()}:{digest}"


def _cached(
    project: Project, options: ReportOptions, key: str | None = None, name: str | None = None
) -> tuple[Report, bool]:
    """This report from the cache, built and stored on a miss, and whether it waits on a
    model's fit (gold_models.pending: then it is not stored, and is built again until the fit
    is done). `key`: its `_key` when the caller has it; `name`: only that table is wanted,
    and a report read from the cache holds no other (none when it has no such table)."""
    key = key or _key(project, options)
    report = _read(key, name)
    if report is not None:
        return report, False
    # hit or miss, the same report: without the sections' stats objects (`data`)
    built = build_report(project, options)
    report = built.without_data()
    waiting = pending(built)
    if not waiting:
        _store(key, report)
    return report, waiting


def _store(key: str, report: Report) -> None:
    """Store `report` under `key`: its tables first, each under its own key, then its entry,
    so that a reader who finds the entry finds the tables too, unless one was evicted since
    (`_read`: a miss). The database cache culls the entries whose keys sort first, and the
    entry's key is a prefix of its tables': a cull that takes a table takes the entry too,
    except the cull made just before the entry's own insert."""
    entry = CachedReport.of(report)
    tables = {_table_key(key, t.name): (entry.build, t) for t in report.tables()}
    cache.set_many(tables, CACHE_SECONDS)
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


def _read(key: str, name: str | None = None) -> Report | None:
    """The report stored under `key`; None when it is not there whole: its entry missing, or
    one of its tables (evicted on its own, or its write failed: the database cache fails
    silently), or a table of another build of it (stored at the same time), which must never
    give a partial or mixed report. `name`: that table only is read (one query: the entry
    and it), the report returned holds no other."""
    if name is None:
        entry: CachedReport | None = cache.get(key)
        if entry is None:
            return None
        names = entry.names()
        found = cache.get_many([_table_key(key, n) for n in names])
    else:
        found = cache.get_many([key, _table_key(key, name)])
        entry = found.get(key)
        if entry is None:
            return None
        names = [name] if name in entry.names() else []
    tables: dict[str, Table] = {}
    for n in names:
        build, table = found.get(_table_key(key, n), (None, None))
        if build != entry.build:
            return None
        tables[n] = table
    return entry.whole(tables)


def is_cached(project: Project, options: ReportOptions | None = None, **changes: Any) -> bool:
    """Whether `cached_report(project, options, **changes)` would be served from the cache,
    without building anything (the report page shows progress instead of waiting): its entry
    is there (a table evicted apart from it, rare, makes that request build)."""
    return bool(cache.has_key(_key(project, replace(options or ReportOptions(), **changes))))


def cached_report(project: Project, options: ReportOptions | None = None, **changes: Any) -> Report:
    """`build_report`, served from the cache when the project's data has not changed since
    a report with the same options was built. The cached report has no `Section.data`
    (the stats objects): callers that need them build."""
    return _cached(project, replace(options or ReportOptions(), **changes))[0]


def cached_table(
    project: Project, name: str, options: ReportOptions | None = None, **changes: Any
) -> Table:
    """One table of `cached_report(project, options, **changes)`, reading only that table
    from the cache (KeyError when the report has no such table)."""
    full = replace(options or ReportOptions(), **changes)
    return _cached(project, full, name=name)[0].table(name)


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
        report, waiting = _cached(project, full, report_key, name)
        text = table_text(report.table(name), fmt)
        if not waiting:
            cache.set(key, text, CACHE_SECONDS)
    return text


def _text_key(key: str, name: str, fmt: str) -> str:
    """The cache key of a table's rendered text under its report's key `key`; the name
    comes from the URL: hashed, so that any name makes a valid, short key."""
    return f"{key}:{hashlib.sha256(f'{name}.{fmt}'.encode()).hexdigest()}"


def _table_key(key: str, name: str) -> str:
    """The cache key of a table (pickled) under its report's key `key`: the key, a prefix of
    it (`_store`), then the name hashed as in `_text_key`."""
    return f"{key}:table:{hashlib.sha256(name.encode()).hexdigest()}"
