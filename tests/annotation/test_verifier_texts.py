"""The texts of the verifier section's disagreement rows."""

from __future__ import annotations

import pytest

from annotation import reports
from annotation.models import Item
from annotation.reports import verifiers


def test_disagreement_texts_of_many_units_read_through_the_project(
    verification: list[Item], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above MANY_IDS claims the texts come from the project's claims (a join), not an id
    list: the same rows."""
    project = verification[0].project
    by_ids = reports.build_report(project, bootstrap=0).table("verifier-disagreements").rows
    monkeypatch.setattr(verifiers, "MANY_IDS", 0)
    by_project = reports.build_report(project, bootstrap=0).table("verifier-disagreements").rows
    assert by_ids and by_project == by_ids
    assert all(str(row[-1]).startswith("Claim number") for row in by_ids)
