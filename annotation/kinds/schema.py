"""The kind names and what the database enforces per kind. Imported by models.py, so it
imports no model: the rest of the registry (forms, views, gold rules) is in the kind
modules next to it."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db.models import BaseConstraint, Q, UniqueConstraint

COMPARISON = "comparison"
VERIFICATION = "verification"
SEGMENT = "segment"
ATOMIC = "atomic"
# The registered kinds, in order: each is the folder of this package of the same name
# (annotation/kinds/<name>/: its spec in __init__.py, its templates/ and tests/).
NAMES = [COMPARISON, VERIFICATION, SEGMENT, ATOMIC]


def validate_kind(value: str) -> None:
    """Item.kind names a registered kind. Checked here rather than by the field's
    choices, which would make every new kind a migration."""
    if value not in NAMES:
        raise ValidationError(
            f"Unknown item kind {value!r}; known: {', '.join(NAMES)}.", code="unknown_kind"
        )


class KindNames:
    """Item.COMPARISON and friends, for tests and the shell; code asks the registry."""

    COMPARISON = COMPARISON
    VERIFICATION = VERIFICATION
    SEGMENT = SEGMENT
    ATOMIC = ATOMIC


def item_constraints() -> list[BaseConstraint]:
    return [
        UniqueConstraint(
            fields=["kind", "list_a", "list_b"],
            condition=Q(kind=COMPARISON),
            name="one_comparison_per_pair",
        ),
        UniqueConstraint(
            fields=["project", "claim"],
            condition=Q(kind=VERIFICATION),
            name="one_verification_per_claim",
        ),
        UniqueConstraint(
            fields=["project", "document"],
            condition=Q(kind=SEGMENT),
            name="one_segment_item_per_document",
        ),
        UniqueConstraint(
            fields=["project", "list_a"], condition=Q(kind=ATOMIC), name="one_atomic_item_per_list"
        ),
    ]
