"""The atomic-fact kind's report section (its report_sections): the fact labels'
distribution."""

from __future__ import annotations

from ...answers import Answers
from ...gold import Gold
from ...models import Project
from ...reports.labels import label_distribution
from ...reports.tables import Section
from ..protocols import ReportKind


def fact_labels(
    project: Project, spec: ReportKind, answers: Answers, golds: list[Gold], *, with_charts: bool
) -> Section | None:
    return label_distribution(
        spec,
        golds,
        "fact-labels",
        "Atomic fact labels (FActScore)",
        "facts",
        "A tie with no adjudication has no gold label and is left out.",
    )
