"""Hostile text (formula prefixes, "$" math, backslashes, braces, markup) goes through
import, report and every export: no 500, no formula in a CSV, no live markup in a page."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from annotation import safecsv
from annotation.ingest import import_file
from annotation.kinds.comparison import comparison_items
from annotation.models import Membership, Project, System, assign
from tests.annotation.api_helpers import token_client
from tests.annotation.conftest import submit

PREFIXES = [
    "=",
    "+",
    "-",
    "@",
    "\t",
    "\r",
    "$",
    "\\",
    "{}",
    "<script>",
    "=cmd|' /C calc'!A0",
    '=HYPERLINK("http://x")',
    "$\\frac{",
    "$x$",
    "_",
]
# no control characters (other than the tab and CR of the prefixes) and no surrogates
TEXT = st.text(st.characters(max_codepoint=0x2FF, exclude_categories=("Cs", "Cc")), max_size=8)
HOSTILE = st.builds(lambda p, s: p + s, st.sampled_from(PREFIXES), TEXT).filter(
    lambda s: s.strip() != ""
)


def csv_cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text)) for c in row]


def assert_no_formula(text: str, where: str) -> None:
    for c in csv_cells(text):
        assert not c.startswith(safecsv.TRIGGERS) or safecsv._NUMBER.fullmatch(c), (where, c)


@pytest.mark.slow  # fuzzing: the slowest test of make test-fast (11 s on 2 loaded cores)
@given(value=st.one_of(HOSTILE, st.text()))
def test_a_neutralised_cell_is_never_a_formula_and_keeps_its_text(value: str) -> None:
    out = safecsv.cell(value)
    assert out == value or out == "'" + value
    assert not out.startswith(safecsv.TRIGGERS) or safecsv._NUMBER.fullmatch(out)
    assert safecsv.cell(-0.25) == -0.25 and safecsv.cell("-0.25") == "-0.25"


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@pytest.mark.slow
@given(sys_a=HOSTILE, sys_b=HOSTILE, domain=HOSTILE, note=HOSTILE)
@example(sys_a="$\\frac{$", sys_b="a $\\alpha_{$ b", domain="$1$ \\ {}", note="=cmd|' /C calc'!A0")
def test_hostile_names_go_through_import_reports_and_every_export(  # type: ignore[no-untyped-def]
    client: Client, users: dict[str, User], sys_a: str, sys_b: str, domain: str, note: str
) -> None:
    if sys_a.strip() == sys_b.strip():
        sys_b += "-b"
    project = Project.objects.create(name=f"hostile {Project.objects.count()}")
    project.add_member(users["alice"], Membership.RESEARCHER)
    project.add_member(users["bob"], Membership.ANNOTATOR)
    project.add_member(users["carol"], Membership.ANNOTATOR)
    lines = [
        json.dumps(
            {
                "id": f"{note}-{i}",
                "response": f"{note} was born.",
                "domain": domain,
                "source_model": sys_a,
                "claim_lists": {sys_a: [note], sys_b: [note, "x"]},
            }
        )
        for i in range(2)
    ]
    import_file(project=project, text="\n".join(lines), file="hostile.jsonl")
    a, b = System.objects.filter(project=project).order_by("id")
    items = comparison_items(project=project, system_a=a, system_b=b)
    assign(items, project=project, k=2, fraction=1.0, seed=0)
    for item, choice in zip(items, ("1", "2"), strict=True):
        for person in ("bob", "carol"):
            submit(
                item,
                users[person],
                {
                    ("item", "choice"): choice,
                    ("item", "hard"): "no",
                    ("item", "justification"): note,
                },
            )
    client.force_login(users["alice"])
    q = {"bootstrap": "5"}
    report = client.get(reverse("report_json", args=[project.pk]), q)
    assert report.status_code == 200
    tables = [t["name"] for s in report.json()["sections"] for t in s["tables"]]
    assert tables
    for url in (reverse("report", args=[project.pk]), reverse("report_html", args=[project.pk])):
        page = client.get(url, q)
        assert page.status_code == 200, url
        assert b"<script>" not in page.content.split(b"<main>")[-1], url
    csvs = {
        name: client.get(reverse("report_table", args=[project.pk, name, "csv"]), q)
        for name in tables
    }
    for name in tables[:2]:
        assert (
            client.get(reverse("report_table", args=[project.pk, name, "tex"]), q).status_code
            == 200
        )
    csvs["diagnosis"] = client.get(reverse("report_wide", args=[project.pk]), q)
    csvs["answers"] = client.get(reverse("project_export", args=[project.pk, "csv"]))
    api = token_client(users["alice"])
    for name in ("answers.csv", "wide.csv"):
        csvs["api " + name] = api.get(f"/api/projects/{project.pk}/exports/{name}")
    for where, response in csvs.items():
        assert response.status_code == 200, where
        assert_no_formula(response.content.decode(), where)
    answers = csv_cells(csvs["answers"].content.decode())
    assert safecsv.cell(note) in answers  # kept, only neutralised
