"""The report page and every export: researchers only; the others get 404."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Item, Project


def urls(project: Project) -> list[str]:
    pk = project.pk
    return [
        reverse("report", args=[pk]),
        reverse("report_html", args=[pk]),
        reverse("report_json", args=[pk]),
        reverse("report_wide", args=[pk]),
        reverse("report_table", args=[pk, "agreement-overview", "csv"]),
        reverse("report_table", args=[pk, "agreement-overview", "json"]),
        reverse("report_table", args=[pk, "agreement-overview", "tex"]),
    ]


def test_anonymous_users_are_sent_to_login(
    client: Client, verification: list[Item], alpha: Project
) -> None:
    for url in urls(alpha):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"], url


@pytest.mark.parametrize("person", ["bob", "carol", "dave", "erin"])
def test_everyone_but_the_projects_researcher_gets_404(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project, person: str
) -> None:
    client.force_login(users[person])
    for url in urls(alpha):
        assert client.get(url).status_code == 404, (person, url)


@pytest.mark.slow
def test_the_researcher_sees_every_page_and_export(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    for url in urls(alpha):
        assert client.get(url).status_code == 200, url


def test_the_page_shows_sections_charts_and_export_links(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    page = client.get(reverse("report", args=[alpha.pk]), {"bootstrap": "50"}).content.decode()
    for title in (
        "Inter-annotator agreement",
        "Claim labels (VeriScore Table 2)",
        "Verifiers against human labels",
        "Pipeline scores (VERIScore)",
        "Annotator effort",
    ):
        assert title in page
    assert "<svg" in page
    assert reverse("report_table", args=[alpha.pk, "verifier-scores", "tex"]) in page
    assert "Extraction-method preference" not in page  # no comparison judgements
    assert "bob" not in page.split("<main>")[1]  # pseudonyms in the report
    project_page = client.get(reverse("project", args=[alpha.pk])).content.decode()
    assert reverse("report", args=[alpha.pk]) in project_page


def test_the_page_says_when_there_is_no_data(
    client: Client, users: dict[str, User], beta: Project
) -> None:
    client.force_login(users["erin"])
    page = client.get(reverse("report", args=[beta.pk])).content.decode()
    assert "No data for a report yet" in page
    assert "Verifiers against human labels" not in page


@pytest.mark.slow
def test_filters_and_names_reach_the_exports(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    url = reverse(
        "report_table", args=[alpha.pk, "agreement-verification-label-coefficients", "csv"]
    )
    rows = list(
        csv.DictReader(
            io.StringIO(
                client.get(url, {"domains": "Biography", "bootstrap": "0"}).content.decode()
            )
        )
    )
    percent = next(r for r in rows if r["coefficient"] == "Percent agreement")
    assert float(percent["value"]) == pytest.approx(0.5)
    table = json.loads(
        client.get(
            reverse("report_table", args=[alpha.pk, "effort", "json"]), {"names": "1"}
        ).content
    )
    assert {r["annotator"] for r in table["rows"]} == {"bob", "carol"}
    latex = client.get(reverse("report_table", args=[alpha.pk, "effort", "tex"])).content
    assert b"\\begin{tabular}" in latex and b"A1 & all" in latex
    assert client.get(reverse("report_table", args=[alpha.pk, "nope", "csv"])).status_code == 404
    assert client.get(reverse("report_table", args=[alpha.pk, "effort", "xls"])).status_code == 404


@pytest.mark.slow
def test_downloads_are_self_contained(
    client: Client, users: dict[str, User], verification: list[Item], alpha: Project
) -> None:
    client.force_login(users["alice"])
    response = client.get(reverse("report_html", args=[alpha.pk]), {"bootstrap": "0"})
    assert "attachment" in response["Content-Disposition"]
    html = response.content.decode()
    assert "<svg" in html and "<style>" in html
    assert "<script" not in html and 'href="/' not in html and 'src="/' not in html
    data = json.loads(
        client.get(reverse("report_json", args=[alpha.pk]), {"bootstrap": "0"}).content
    )
    assert data["project"]["name"] == "alpha" and data["sections"]
    wide = list(
        csv.reader(
            io.StringIO(client.get(reverse("report_wide", args=[alpha.pk])).content.decode())
        )
    )
    assert wide[0][6:] == ["A1", "A2"] and len(wide) == 1 + 4 * 3


def test_a_bad_filter_is_a_404(client: Client, users: dict[str, User], alpha: Project) -> None:
    client.force_login(users["alice"])
    assert client.get(reverse("report", args=[alpha.pk]), {"date_from": "nope"}).status_code == 404
