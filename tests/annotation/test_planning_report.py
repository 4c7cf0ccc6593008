"""The "Planning the study" report section and `manage.py plan_study` (issue 30)."""

from __future__ import annotations

import json
from io import StringIO
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import hiring, reports
from annotation.models import Item, Project
from annotation.reports.planning import PlanOptions, PlanOptionsForm, plan_project
from annotation.stats import planning
from tests.conftest import peer_file

from .api_helpers import token_client


def _rows(section: reports.Section, name: str) -> list[dict[str, object]]:
    return next(t for t in section.tables if t.name == name).as_dicts()


def test_section_plans_each_agreement_field_from_the_pilot(verification: list[Item]) -> None:
    report = reports.build_report(verification[0].project, bootstrap=50, plan=True)
    section = report.section("planning")
    assert section is not None and section.title == "Planning the study"
    rows = _rows(section, "planning-agreement")
    label = [r for r in rows if r["field"] == "label"]
    # the pilot resampled at its own 2 annotators, then the model for 2-5
    assert [(r["source"], r["annotators per unit"]) for r in label] == [
        ("pilot", 2),
        ("model", 2),
        ("model", 3),
        ("model", 4),
        ("model", 5),
    ]
    for r in label:
        assert r["pilot units"] == 4
        assert r["median active s per item"] == 30.0  # the fixture's active time
        if r["units planned"] is not None:
            assert r["units planned"] == max(
                r["units for Fleiss' kappa"],
                r["units for Krippendorff's alpha"],
                r["units for Gwet's AC1"],
            )
            assert r["annotator-hours"] == pytest.approx(
                r["units planned"] * r["annotators per unit"] * 30 / 3600
            )
            assert r["cost"] is None  # no rate given


def test_fields_on_evidence_count_items_for_the_budget(verification: list[Item]) -> None:
    section = plan_project(verification[0].project, PlanOptions(target=0.3, studies=30))
    assert section is not None
    stance = [r for r in _rows(section, "planning-agreement") if r["field"] == "stance"]
    assert stance and all(r["pilot units"] == 8 for r in stance)  # 2 evidence per item
    for r in stance:
        assert r["items planned"] == -(-r["units planned"] // 2)
        assert (
            r["answers incl. checks and training"] == r["items planned"] * r["annotators per unit"]
        )


def test_no_section_without_bootstrap(verification: list[Item]) -> None:
    report = reports.build_report(verification[0].project, bootstrap=0, plan=True)
    assert report.section("planning") is None


def test_the_section_is_off_by_default_with_a_link_to_ask(
    verification: list[Item], users: dict[str, User], client
) -> None:
    """Planning takes seconds on a large project (issue 27: a report < 1 s): the report
    leaves it out unless asked (plan=1 on the page, the API and agreement_report --plan)."""
    project = verification[0].project
    assert reports.build_report(project, bootstrap=30).section("planning") is None
    client.force_login(users["alice"])
    url = reverse("report", args=[project.pk])
    page = client.get(f"{url}?bootstrap=30").content.decode()
    assert f'<a href="{url}?bootstrap=30&amp;plan=1#planning">Plan the study</a>' in page
    assert "planning-agreement" not in page
    page = client.get(f"{url}?bootstrap=30&plan=1").content.decode()
    assert "planning-agreement" in page and "Plan the study</a>" not in page

    api = token_client(users["alice"])
    url = f"/api/projects/{project.pk}/report/?bootstrap=30"
    slugs = [s["slug"] for s in api.get(url).json()["sections"]]
    assert slugs and "planning" not in slugs
    slugs = [s["slug"] for s in api.get(url + "&plan=1").json()["sections"]]
    assert "planning" in slugs
    # asked again, it is served from the report cache, not planned again (flooding)
    with mock.patch.object(reports, "build_report", wraps=reports.build_report) as spy:
        for _ in range(3):
            assert api.get(url + "&plan=1").status_code == 200
    assert spy.call_count == 0

    out = StringIO()
    call_command(
        "agreement_report", str(project.pk), "--bootstrap", "30", "--list-tables", stdout=out
    )
    assert "planning-agreement" not in out.getvalue()
    out = StringIO()
    call_command(
        "agreement_report",
        str(project.pk),
        "--bootstrap",
        "30",
        "--plan",
        "--list-tables",
        stdout=out,
    )
    assert "planning-agreement" in out.getvalue()


def test_budget_adds_the_hiring_overhead(verification: list[Item]) -> None:
    project = verification[0].project
    hiring.HiringPolicy.objects.create(project=project, check_rate=0.2)
    section = plan_project(project, PlanOptions(target=0.2, hourly_rate=20.0, studies=50))
    assert section is not None
    row = next(
        r
        for r in _rows(section, "planning-agreement")
        if r["field"] == "label" and r["source"] == "model" and r["annotators per unit"] == 3
    )
    answers = row["items planned"] * 3
    assert row["answers incl. checks and training"] == answers + -(-answers * 2 // 8)
    assert row["cost"] == pytest.approx(row["annotator-hours"] * 20.0)
    assert any("check rate 0.2" in n for n in section.notes)


def test_preference_per_domain(judged_comparisons: list[Item]) -> None:
    section = plan_project(judged_comparisons[0].project, PlanOptions(studies=30, bootstrap=30))
    assert section is not None
    rows = _rows(section, "planning-preference")
    assert rows and all(r["needed for 0.6"] == 194 for r in rows)
    for r in rows:
        assert r["still to collect"] == max(0, 194 - r["pilot judgements"])


def test_command_with_a_rate(verification: list[Item]) -> None:
    out = StringIO()
    call_command(
        "plan_study",
        str(verification[0].project.pk),
        "--rate",
        "15",
        "--target",
        "0.25",
        "--studies",
        "40",
        "--format",
        "json",
        stdout=out,
    )
    tables = json.loads(out.getvalue())["tables"]
    rows = tables[0]["rows"]
    assert rows and all(r["cost"] is None or r["cost"] > 0 for r in rows)
    assert any(r["cost"] for r in rows)


def test_command_without_a_pilot_uses_assumed_values(alpha: Project) -> None:
    with pytest.raises(CommandError, match="no answers to plan from"):
        call_command("plan_study", str(alpha.pk), stdout=StringIO())
    out = StringIO()
    call_command(
        "plan_study",
        str(alpha.pk),
        "--kappa",
        "0.6",
        "--shares",
        "0.5,0.5",
        "--seconds",
        "40",
        "--target",
        "0.2",
        "--studies",
        "30",
        stdout=out,
    )
    text = out.getvalue()
    assert "assumed" in text and "planning-agreement" in text
    assert "Not planned" in text and "verification.stance" in text
    # a field with other categories names the mismatch
    with pytest.raises(CommandError, match="verification.label has 4 categories"):
        call_command(
            "plan_study",
            str(alpha.pk),
            "--kappa",
            "0.6",
            "--shares",
            "0.2,0.3,0.5",
            "--field",
            "verification.label",
            "--target",
            "0.3",
            "--studies",
            "20",
            "--bootstrap",
            "20",
            stdout=StringIO(),
        )


@pytest.mark.parametrize(
    "bad",
    [
        {"target": "0"},
        {"target": "5"},
        {"share": "0.5"},
        {"rate": "-3"},
        {"rate": "1e12"},
        {"studies": "100000000"},
        {"kappa": "0.5"},  # without shares
        {"kappa": "0.5", "shares": "0.5,0.6"},
        {"kappa": "0.5", "shares": "a,b"},
        {"kappa": "1.5", "shares": "0.5,0.5"},
        {"seconds": "0"},
    ],
)
def test_absurd_options_are_refused(bad: dict[str, str]) -> None:
    form = PlanOptionsForm(bad)
    assert not form.is_valid()
    assert form.problems()


def test_command_refuses_absurd_values(alpha: Project) -> None:
    with pytest.raises(CommandError, match="target"):
        call_command("plan_study", str(alpha.pk), "--target", "2", stdout=StringIO())


# --------------------------------------------------------------------------- API


def test_api_plans_from_the_pilot(verification: list[Item], users: dict[str, User]) -> None:
    project = verification[0].project
    response = token_client(users["alice"]).get(
        f"/api/projects/{project.pk}/plan/?target=0.3&rate=10&studies=30&bootstrap=30"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    rows = body["tables"][0]["rows"]
    assert {r["source"] for r in rows} == {"pilot", "model"}
    assert any(r["cost"] for r in rows)


@pytest.mark.parametrize(
    "query",
    ["target=9", "studies=100000", "bootstrap=5000", "share=0.5", "rate=-1", "shares=0.5,0.5"],
)
def test_api_refuses_absurd_values(
    verification: list[Item], users: dict[str, User], query: str
) -> None:
    project = verification[0].project
    response = token_client(users["alice"]).get(f"/api/projects/{project.pk}/plan/?{query}")
    assert response.status_code == 400
    assert response.json()["code"]


def test_api_without_a_pilot(alpha: Project, users: dict[str, User]) -> None:
    client = token_client(users["alice"])
    response = client.get(f"/api/projects/{alpha.pk}/plan/")
    assert response.status_code == 400 and response.json()["code"] == "nothing_to_plan"
    response = client.get(
        f"/api/projects/{alpha.pk}/plan/?kappa=0.6&shares=0.2,0.3,0.5&field=verification.label"
        "&studies=20&bootstrap=20"
    )
    assert response.status_code == 400
    assert "verification.label has 4 categories" in response.json()["message"]


def test_api_plan_is_the_researchers_only(verification: list[Item], users: dict[str, User]):
    project = verification[0].project
    url = f"/api/projects/{project.pk}/plan/?target=0.4&studies=20&bootstrap=20"
    assert token_client(None).get(url).status_code == 401
    assert token_client(users["bob"]).get(url).status_code == 404  # an annotator of it
    assert token_client(users["erin"]).get(url).status_code == 404  # another researcher


def test_plan_from_the_category_shares_of_factscore_labels(alpha: Project) -> None:
    """Assumed values from real data: the S / NS / IR shares of FActScore's human labels
    (ChatGPT.jsonl) for the atomic kind's fact label; at 2 annotators the model is the
    kappaSize model, so the planned units stay within 30 % of Rotondi-Donner's."""
    counts = {"S": 0, "NS": 0, "IR": 0}
    for line in peer_file("factscore_labeled/ChatGPT.jsonl").read_text().splitlines():
        for annotation in json.loads(line).get("annotations") or []:
            for fact in annotation.get("human-atomic-facts") or []:
                counts[fact["label"]] += 1
    assert sum(counts.values()) == 5426  # as the peer-data README says
    shares = [counts[k] / 5426 for k in ("S", "NS", "IR")]  # supported, not-supported, irrelevant
    options = PlanOptions(
        target=0.1, kappa=0.6, shares=tuple(shares), field="atomic.label", seconds_per_item=20
    )
    section = plan_project(alpha, options)
    assert section is not None
    rows = [r for r in _rows(section, "planning-agreement") if r["task"] == "atomic"]
    assert [(r["source"], r["annotators per unit"]) for r in rows] == [
        ("assumed", m) for m in (2, 3, 4, 5)
    ]
    published = planning.kappasize_ci(0.6, 0.5, 0.7, shares, raters=2)
    assert rows[0]["units for Fleiss' kappa"] == pytest.approx(published, rel=0.3)
    # more annotators per unit need fewer units
    units = [r["units for Fleiss' kappa"] for r in rows]
    assert units == sorted(units, reverse=True)
