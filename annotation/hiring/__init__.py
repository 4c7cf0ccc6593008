"""Hiring annotators (issue 18): training items, known-answer checks and invite links.

`models.py` holds the four models (registered with the `annotation` app), `services.py`
the invite flow, scoring and the pause rule, `forms.py` the policy and invite forms the
hiring page and API share. The report's "Annotator quality" section is
`reports/quality.py`. The names below are the package's public interface.
"""

from __future__ import annotations

from .models import CHECK, REGULAR, TRAINING, Hire, HiringPolicy, Invite, QualityItem, new_key
from .services import (
    JoinRefused,
    Score,
    after_submit,
    blocked,
    fill_queue,
    hire_of,
    join,
    known,
    mark,
    mark_imported,
    next_training,
    presented,
    quality_rows,
    reference_from,
    score,
    set_state,
)

__all__ = [
    "CHECK",
    "REGULAR",
    "TRAINING",
    "Hire",
    "HiringPolicy",
    "Invite",
    "JoinRefused",
    "QualityItem",
    "Score",
    "after_submit",
    "blocked",
    "fill_queue",
    "hire_of",
    "join",
    "known",
    "mark",
    "mark_imported",
    "new_key",
    "next_training",
    "presented",
    "quality_rows",
    "reference_from",
    "score",
    "set_state",
]
