"""The shared fixtures of tests/ for each kind's own tests (annotation/kinds/<name>/tests/,
collected through pyproject's `testpaths`): a conftest applies to the folders under it
only, so the ones the kinds' tests use are imported here. A fixture added to
tests/conftest.py or tests/annotation/conftest.py that a kind's test needs is added here."""

from __future__ import annotations

from tests.annotation.conftest import alpha_atomic, demo, judged_comparisons, verification
from tests.browser import page
from tests.conftest import (
    alpha,
    alpha_items,
    alpha_segments,
    alpha_verification,
    beta,
    fast_passwords,
    users,
)

__all__ = [
    "alpha",
    "alpha_atomic",
    "alpha_items",
    "alpha_segments",
    "alpha_verification",
    "beta",
    "demo",
    "fast_passwords",
    "judged_comparisons",
    "page",
    "users",
    "verification",
]
