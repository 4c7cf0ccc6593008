"""The sensitivity section (issue 39): each headline figure under majority vote and under
each annotator model side by side, with the share of units whose gold differs, the
models fitted by the real task worker (computing until then, never a blank wait); CSV
and JSON like every table; researchers only."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Item, Project
from tests.annotation.api_helpers import token_client

from .test_import_scale import background, drain  # noqa: F401  (a fixture)


def sections(project: Project, user: User, **params: Any) -> dict[str, dict]:
    r = token_client(user).get(f"/api/projects/{project.pk}/report/", {"bootstrap": 0, **params})
    assert r.status_code == 200, r.content
    return {s["slug"]: s for s in r.json()["sections"]}


def rows_of(section: dict) -> list[dict]:
    [table] = section["tables"]
    return list(table["rows"])


@pytest.mark.django_db(transaction=True)
def test_the_figures_under_each_method_side_by_side(
    background: Any,  # noqa: F811
    alpha: Project,
    verification: list[Item],
    judged_comparisons: list[Item],
    users: dict[str, User],
) -> None:
    alice = users["alice"]
    assert "sensitivity" not in sections(alpha, alice)  # on request only
    first = sections(alpha, alice, sensitivity=1)
    notes = " ".join(first["sensitivity"]["notes"])
    for title in ("Dawid-Skene", "MACE", "GLAD"):
        assert f"{title}: queued for the task worker; its column is empty until then" in notes
    rows = rows_of(first["sensitivity"])
    f1 = [r for r in rows if r["figure"] == "verifier macro F1"]
    assert f1 and all(r["Majority vote"] is not None and r["MACE"] is None for r in f1)
    # the majority column is the report's own figure
    table = next(t for t in first["verifiers"]["tables"] if t["name"] == "verifier-scores")
    own = {
        f"{row['system']} / {row['level']} / {row['mode']}": row["overall F1 (macro)"]
        for row in table["rows"]
    }
    assert {r["of"]: r["Majority vote"] for r in f1} == pytest.approx(own)
    assert any(r["figure"] == "gold share preferring A" for r in rows)
    drain()
    after = sections(alpha, alice, sensitivity=1)
    assert "queued" not in " ".join(after["sensitivity"]["notes"])
    rows = rows_of(after["sensitivity"])
    changed = {r["of"]: r for r in rows if r["figure"] == "units whose gold differs from majority"}
    assert changed["verification.label"]["Majority vote"] == 0.0
    for r in rows:
        assert all(r[m] is not None for m in ("Dawid-Skene", "MACE", "GLAD")), r
        assert all(0 <= r[m] <= 1 for m in ("Majority vote", "Dawid-Skene", "MACE", "GLAD")), r
    # a download like every table, from the cached report
    page = Client()
    page.force_login(alice)
    url = reverse("report_table", args=[alpha.pk, "sensitivity", "csv"])
    text = page.get(url, {"bootstrap": 0, "sensitivity": 1}).content.decode()
    header = next(csv.reader(io.StringIO(text)))
    assert header == ["figure", "of", "Majority vote", "Dawid-Skene", "MACE", "GLAD"]
    url = reverse("report_table", args=[alpha.pk, "sensitivity", "json"])
    assert page.get(url, {"bootstrap": 0, "sensitivity": 1}).status_code == 200


@pytest.mark.parametrize("who", ["bob", "dave"])
def test_only_researchers_see_the_sensitivity_section(
    alpha: Project, verification: list[Item], users: dict[str, User], who: str
) -> None:
    api = token_client(users[who])
    r = api.get(f"/api/projects/{alpha.pk}/report/", {"sensitivity": 1})
    assert r.status_code in (403, 404)
    page = Client()
    page.force_login(users[who])
    url = reverse("report_table", args=[alpha.pk, "sensitivity", "csv"])
    assert page.get(url, {"sensitivity": 1}).status_code in (403, 404)
