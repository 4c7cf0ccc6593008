"""What each kind of item asks: its categorical fields and their label sets.

Answers are stored per (unit, field): unit "item" for the whole item, "evidence:<rank>"
for one search result, "segment:<position>" for one segment. Free-text fields
(justification, reason, links) have no label set and get no gold value.
"""

from __future__ import annotations

from .models import DEFAULT_ERROR_TYPES, Item, Project

STANCES = ["supports", "contradicts", "inconclusive"]
CLAIM_LABELS = ["supported", "contradicted", "inconclusive-not-enough", "inconclusive-conflicting"]
CLAIM_LABEL_NAMES = {
    "supported": "Supported",
    "contradicted": "Contradicted",
    "inconclusive-not-enough": "Inconclusive (not enough information)",
    "inconclusive-conflicting": "Inconclusive (conflicting evidence)",
}
# Comparison choices are stored as the presented list ("1"/"2") and compared across
# annotators as the storage side ("a"/"b") behind it, since the order differs per person.
COMPARISON_SIDES = ["a", "b"]


def categorical_fields(kind: str, project: Project | None = None) -> dict[str, list[str]]:
    """field -> declared label set, for the fields statistics and gold values use."""
    if kind == Item.COMPARISON:
        return {"choice": COMPARISON_SIDES, "hard": ["yes", "no"]}
    if kind == Item.VERIFICATION:
        return {"stance": STANCES, "label": CLAIM_LABELS}
    if kind == Item.SEGMENT:
        error_types = list(project.error_types) if project else DEFAULT_ERROR_TYPES
        return {"correct": ["true", "false"], "error_type": error_types, "keep": ["keep", "remove"]}
    raise ValueError(f"unknown item kind {kind!r}")


def unit_kind(unit: str) -> str:
    """'evidence:3' -> 'evidence'; 'item' -> 'item'."""
    return unit.split(":", 1)[0]
