"""The report's "Annotator quality" section: training and known-answer check scores."""

from __future__ import annotations

from ..hiring import QualityItem, annotator_quality
from ..models import Membership
from .queries import ReportData
from .tables import Section, Table


def quality_section(data: ReportData) -> Section | None:
    """The report's "Annotator quality" section: the training table (per annotator:
    training items, share matching the reference) and known-answer accuracy with its
    95% Wilson interval. None when the project has no training or check items."""
    project, names = data.project, data.names
    if not QualityItem.objects.filter(item__project=project).exists():
        return None
    training, checks = [], []
    for m in project.memberships.filter(role=Membership.ANNOTATOR).order_by("number"):
        name = names.get(m.user_id, m.pseudonym)
        training_items, t, c = annotator_quality(m.user_id, project)
        if t.units:
            training.append((name, training_items, t.units, t.share))
        if c.units:
            low, high = c.wilson() or (None, None)
            checks.append((name, c.units, c.matching, c.share, low, high))
    return Section(
        "quality",
        "Annotator quality",
        (
            "Training and known-answer items are left out of agreement, gold values and every "
            "other section.",
            "Check accuracy: share of known-answer units answered like the gold value, with its "
            "95% Wilson score interval.",
        ),
        (
            Table(
                "training",
                "Training",
                ("annotator", "training items", "units", "share like the reference"),
                tuple(training),
            ),
            Table(
                "checks",
                "Known-answer checks",
                ("annotator", "units", "correct", "accuracy", "ci low", "ci high"),
                tuple(checks),
            ),
        ),
    )
