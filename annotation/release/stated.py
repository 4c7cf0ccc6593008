"""study.json: what a release states of its study beyond its tables, so that a project
imported from it (load.py) releases the same card and croissant.json again.

It holds the instructions (verbatim, with their version), the gold method, the training
and check design and the pay from the hiring policy, the counts of people hired by
outcome (no person: counts only), the card's options (licence, languages, task
categories, the free-text parts as the researcher left them, the source data's licence
files, the resamples) and, for readers, the aggregates the card states (annotators, per
item, median active time). Nothing personal: the free text is checked as the card's is.

An imported project keeps it (`ImportedStudy`): its instructions, design, pay and gold
method become the project's own (the next lab extends the study under them); the hires
stay stated facts, added to the project's own hires; the card's options are its release
defaults.
"""

from __future__ import annotations

from typing import Any

from .options import ReleaseOptions, options_json
from .study import Study

FILE = "study.json"
FORMAT = "llm-factuality-release-study"
VERSION = 1


def study_json(study: Study, options: ReleaseOptions, method: str) -> dict[str, Any]:
    """The content of study.json (no date: a second release of the same study states the
    same)."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "instructions": {"version": study.instructions_version, "text": study.instructions},
        "gold_method": method,
        "design": {
            "pass_mark": study.pass_mark,
            "check_rate": study.check_rate,
            "pause_below": study.pause_below,
            "careless_action": study.careless_action,
        },
        "pay": {
            "per_item": str(study.pay_per_item),
            "per_correct_check": str(study.pay_per_check),
        },
        "hired": dict(sorted(study.hired.items())),
        "card": options_json(options),
        # stated for readers; recomputed from the tables by a project imported from it
        "aggregates": {
            "annotators": study.annotators,
            "annotators_per_item": list(study.per_item) if study.per_item else None,
            "median_active_seconds": study.median_seconds,
            "items_by_kind": dict(sorted(study.kinds.items())),
            "items_by_role": dict(sorted(study.roles.items())),
            "hourly_pay": None if study.hourly_pay is None else str(study.hourly_pay),
        },
    }
