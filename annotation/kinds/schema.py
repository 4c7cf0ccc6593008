"""The kind names and what the database enforces per kind. Imported by models.py, so it
imports no model: the rest of the registry (forms, views, gold rules) is in the kind
modules next to it."""

from __future__ import annotations

from django.db.models import BaseConstraint, Q, UniqueConstraint

COMPARISON = "comparison"
VERIFICATION = "verification"
SEGMENT = "segment"
ATOMIC = "atomic"
KIND_CHOICES = [
    (COMPARISON, "Comparison"),
    (VERIFICATION, "Verification"),
    (SEGMENT, "Segments"),
    (ATOMIC, "Atomic facts"),
]


class KindNames:
    """Item.COMPARISON and friends, for tests and the shell; code asks the registry."""

    COMPARISON = COMPARISON
    VERIFICATION = VERIFICATION
    SEGMENT = SEGMENT
    ATOMIC = ATOMIC
    KINDS = KIND_CHOICES


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
