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

from collections import defaultdict
from collections.abc import Callable

from django.utils import timezone

from .. import kinds
from ..gold import Gold, LabelRow, label_rows
from ..models import Project
from .agreement import _agreement_sections
from .effort import _effort_section
from .options import DEFAULT_BOOTSTRAP
from .pipeline_scores import _factscore_section, _pipeline_section
from .preference import _preference_section
from .quality import quality_section
from .queries import (
    _assignment_filter,
    _gold,
    _grouped,
    annotator_choices,
    domains_of,
    member_names,
)
from .tables import (
    DISPLAY_LIMIT,
    Cell,
    Chart,
    Filters,
    Report,
    Section,
    Table,
    _failed,
    all_tables_csv,
    latex_escape,
    report_json,
    table_csv,
    table_json,
    table_latex,
)
from .verification import _claim_labels, _evidence_ranks, _fact_labels
from .verifiers import _verifier_sections

__all__ = [
    "DISPLAY_LIMIT",
    "KIND_SECTIONS",
    "Cell",
    "Chart",
    "Filters",
    "Report",
    "Section",
    "Table",
    "all_tables_csv",
    "annotator_choices",
    "build_report",
    "domains_of",
    "latex_escape",
    "member_names",
    "report_json",
    "table_csv",
    "table_json",
    "table_latex",
]

# --------------------------------------------------------------------------- report


def build_report(
    project: Project,
    *,
    filters: Filters | None = None,
    real_names: bool = False,
    bootstrap: int = DEFAULT_BOOTSTRAP,
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
                lambda slug=slug, spec=spec: KIND_SECTIONS[slug](  # type: ignore[misc]
                    project, spec, rows_of[spec.name], golds_of[spec.name], with_charts=with_charts
                ),
            )
    sections += _isolated(
        "verifiers",
        "Verifiers against human labels",
        lambda: _verifier_sections(project, golds_of),
    )
    sections += _isolated(
        "pipeline", "Pipeline scores", lambda: _pipeline_section(project, filters, k_rule=k_rule)
    )
    sections += _isolated(
        "factscore",
        "FActScore from verdicts on atomic facts",
        lambda: _factscore_section(project, filters),
    )
    from ..metric_reports import metric_sections  # it builds on this module's tables

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
        "annotator-quality", "Annotator quality", lambda: quality_section(project, names)
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


KIND_SECTIONS = {  # the sections a kind may ask for (KindSpec.report_sections)
    "claim-labels": _claim_labels,
    "evidence-ranks": _evidence_ranks,
    "fact-labels": _fact_labels,
    "preference": _preference_section,
}
