"""kappaSize planning on the surfaces (issue 44): `plan_study --method kappasize`, the API's
method=kappasize, the report page's method choice. The figures are kappaSize's printed
outputs (sources in tests/annotation/test_planning_stats.py): CIBinary(0.4, 0.3, 0.5,
props 0.3/0.7) 397; PowerBinary(0.4, 0.7, props 0.5) 73.26 -> 74; FixedNBinary(0.70, n 144,
props 0.5) 0.589 / 0.617 / 0.626 / 0.63 for 2-5 raters."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Item, Project

from .api_helpers import token_client


def _plan(project: Project, *args: str) -> dict[str, object]:
    out = StringIO()
    call_command("plan_study", str(project.pk), *args, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def _binary_rows(body: dict[str, object]) -> list[dict[str, object]]:
    tables = body["tables"]
    assert isinstance(tables, list) and len(tables) == 1
    return [r for r in tables[0]["rows"] if r["field"] == "correct"]


def test_command_ci_family_is_kappasizes_integer(alpha: Project) -> None:
    body = _plan(
        alpha,
        *("--method", "kappasize", "--kappa", "0.4", "--shares", "0.3,0.7"),
        *("--field", "segment.correct", "--target", "0.1", "--seconds", "30"),
    )
    assert body["tables"][0]["name"] == "planning-kappasize-ci"
    rows = _binary_rows(body)
    assert [r["annotators per unit"] for r in rows] == [2, 3, 4, 5]
    two = rows[0]
    assert two["units (n)"] == 397
    assert (two["kappaL"], two["kappaU"]) == pytest.approx((0.3, 0.5))
    assert two["kappaSize call"] == (
        "CIBinary(kappa0=0.4, kappaL=0.3, kappaU=0.5, props=c(0.3, 0.7), raters=2, alpha=0.05)"
    )
    assert two["items planned"] == 397
    assert two["answers incl. checks and training"] == 397 * 2
    units = [r["units (n)"] for r in rows]
    assert units == sorted(units, reverse=True)  # more annotators, fewer units
    assert "kappaSize" in " ".join(body["notes"])


def test_command_ci_one_sided(alpha: Project) -> None:
    body = _plan(
        alpha,
        *("--method", "kappasize", "--kappa", "0.6", "--shares", "0.3,0.7", "--sided", "1"),
        *("--field", "segment.correct", "--target", "0.2"),
    )
    two = _binary_rows(body)[0]
    # kappaSize::CIBinary(kappa0=0.6, kappaL=0.4, kappaU=NA, props=0.3) printed 66
    assert two["units (n)"] == 66 and two["kappaU"] is None
    assert "kappaU=NA" in str(two["kappaSize call"])


def test_command_power_family(alpha: Project) -> None:
    body = _plan(
        alpha,
        *("--method", "kappasize", "--family", "power", "--kappa", "0.4", "--kappa1", "0.7"),
        *("--shares", "0.5,0.5", "--field", "segment.correct"),
    )
    assert body["tables"][0]["name"] == "planning-kappasize-power"
    two = _binary_rows(body)[0]
    assert two["units (n)"] == 74
    assert round(two["kappaSize N"], 2) == 73.26
    assert two["kappaSize call"] == (
        "PowerBinary(kappa0=0.4, kappa1=0.7, props=c(0.5, 0.5), raters=2, alpha=0.05, power=0.8)"
    )


def test_command_fixed_n_family(alpha: Project) -> None:
    body = _plan(
        alpha,
        *("--method", "kappasize", "--family", "fixedn", "--kappa", "0.7", "--n", "144"),
        *("--shares", "0.5,0.5", "--field", "segment.correct"),
    )
    assert body["tables"][0]["name"] == "planning-kappasize-fixedn"
    rows = _binary_rows(body)
    assert [r["expected kappaL"] for r in rows] == [0.589, 0.617, 0.626, 0.63]
    assert rows[0]["items planned"] is None  # nothing to plan: n is given


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--family", "power"), "needs kappa1"),
        (("--family", "fixedn"), "needs n"),
        (("--family", "fixedn", "--n", "5"), "n:"),
    ],
)
def test_command_refuses_incomplete_designs(alpha: Project, args, message) -> None:
    with pytest.raises(CommandError, match=message):
        _plan(alpha, "--method", "kappasize", "--kappa", "0.4", "--shares", "0.5,0.5", *args)


def test_kappasize_options_need_the_method(alpha: Project) -> None:
    with pytest.raises(CommandError, match="options of method=kappasize"):
        _plan(alpha, "--kappa", "0.4", "--shares", "0.5,0.5", "--kappa1", "0.6")


def test_a_design_kappasize_cannot_plan_says_why(alpha: Project) -> None:
    """A kappa0 of 0.05 with a target of 0.1 puts kappaL below 0: kappaSize refuses it; the
    row says so instead of a number."""
    body = _plan(
        alpha,
        *("--method", "kappasize", "--kappa", "0.05", "--shares", "0.5,0.5"),
        *("--field", "segment.correct", "--target", "0.1"),
    )
    row = _binary_rows(body)[0]
    assert row["units (n)"] is None
    assert "kappaL must lie in (0, 1)" in str(row["not planned because"])


def test_pilot_rows_use_the_pilots_kappa(verification: list[Item]) -> None:
    body = _plan(verification[0].project, "--method", "kappasize", "--target", "0.2")
    rows = body["tables"][0]["rows"]
    assert rows and {r["source"] for r in rows} == {"pilot"}
    for r in rows:
        assert r["kappaSize call"] is None or str(r["kappaSize call"]).startswith("CI")
        assert (r["units (n)"] is None) == (r["not planned because"] is not None)


def test_api_method_kappasize(alpha: Project, users: dict[str, User]) -> None:
    client = token_client(users["alice"])
    query = (
        "method=kappasize&family=power&kappa=0.4&kappa1=0.7&shares=0.5,0.5&field=segment.correct"
    )
    response = client.get(f"/api/projects/{alpha.pk}/plan/?{query}")
    assert response.status_code == 200, response.content
    rows = [r for r in response.json()["tables"][0]["rows"] if r["field"] == "correct"]
    assert rows[0]["units (n)"] == 74
    bad = client.get(f"/api/projects/{alpha.pk}/plan/?method=kappasize&family=power&kappa=0.4")
    assert bad.status_code == 400
    other = client.get(f"/api/projects/{alpha.pk}/plan/?method=bayes&kappa=0.4&shares=0.5,0.5")
    assert other.status_code == 400


def test_report_page_and_api_take_the_method(
    verification: list[Item], users: dict[str, User], client
) -> None:
    project = verification[0].project
    client.force_login(users["alice"])
    url = reverse("report", args=[project.pk])
    page = client.get(f"{url}?bootstrap=30").content.decode()
    assert f"{url}?bootstrap=30&amp;plan=1&amp;plan_method=kappasize#planning" in page
    assert 'name="plan_method"' in page
    page = client.get(f"{url}?bootstrap=30&plan=1&plan_method=kappasize").content.decode()
    assert "planning-kappasize-ci" in page and "planning-agreement" not in page
    api = token_client(users["alice"])
    body = api.get(
        f"/api/projects/{project.pk}/report/?bootstrap=30&plan=1&plan_method=kappasize"
    ).json()
    planning_section = next(s for s in body["sections"] if s["slug"] == "planning")
    assert [t["name"] for t in planning_section["tables"]] == ["planning-kappasize-ci"]
    bad = api.get(f"/api/projects/{project.pk}/report/?plan=1&plan_method=guess")
    assert bad.status_code == 400
    out = StringIO()
    call_command(
        "agreement_report",
        str(project.pk),
        *("--bootstrap", "30", "--plan", "--plan-method", "kappasize"),
        stdout=out,
    )
    assert "planning-kappasize-ci" in out.getvalue()
