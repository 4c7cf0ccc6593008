"""A project's answer length limit (`answer_max_chars`, issue 38) could be changed only
in the admin. The project settings page and the API set it, validated 1 to 1,000,000;
only the project's researchers may, and an absurd value is refused and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Item, Project
from tests.annotation.api_helpers import token_client

ABSURD: list[Any] = [0, -1, 1_000_001, 10**30, "many", 1.5, True, None]


def test_the_settings_page_sets_the_answer_length_limit(
    alpha: Project, users: dict[str, User]
) -> None:
    page = Client()
    page.force_login(users["alice"])
    url = reverse("project_settings", args=[alpha.pk])
    project_page = page.get(reverse("project", args=[alpha.pk])).content.decode()
    assert f'href="{url}"' in project_page  # the project page links to its settings
    assert 'name="answer_max_chars" value="10000"' in page.get(url).content.decode()
    form = {"name": "alpha", "description": "", "answer_max_chars": "500"}
    saved = page.post(url, form, follow=True)
    assert "Project settings saved." in saved.content.decode()
    alpha.refresh_from_db()
    assert alpha.answer_max_chars == 500
    for value in ("0", "1000001", "-5", "many", ""):
        refused = page.post(url, {**form, "answer_max_chars": value})
        assert refused.status_code == 200 and "errorlist" in refused.content.decode(), value
        alpha.refresh_from_db()
        assert alpha.answer_max_chars == 500
    page.post(url, {**form, "answer_max_chars": "1000000"})
    alpha.refresh_from_db()
    assert alpha.answer_max_chars == 1_000_000


@pytest.mark.parametrize("who", ["bob", "dave"])  # an annotator of the project; an outsider
def test_only_the_projects_researchers_see_or_change_its_settings(
    alpha: Project, users: dict[str, User], who: str
) -> None:
    page = Client()
    page.force_login(users[who])
    url = reverse("project_settings", args=[alpha.pk])
    assert page.get(url).status_code in (403, 404)
    form = {"name": "mine", "description": "", "answer_max_chars": "1"}
    assert page.post(url, form).status_code in (403, 404)
    api = token_client(users[who])
    assert api.get(f"/api/projects/{alpha.pk}/settings/").status_code in (403, 404)
    r = api.put(f"/api/projects/{alpha.pk}/settings/", {"answer_max_chars": 1}, format="json")
    assert r.status_code in (403, 404)
    alpha.refresh_from_db()
    assert (alpha.name, alpha.answer_max_chars) == ("alpha", 10_000)


def test_the_api_reads_and_changes_the_answer_length_limit(
    alpha: Project, users: dict[str, User]
) -> None:
    api = token_client(users["alice"])
    url = f"/api/projects/{alpha.pk}/settings/"
    assert api.get(url).json() == {
        "id": alpha.pk,
        "name": "alpha",
        "description": "",
        "answer_max_chars": 10_000,
        "gold_method": "majority",
    }
    r = api.put(url, {"answer_max_chars": 2_000}, format="json")
    assert r.status_code == 200, r.content
    assert r.json()["answer_max_chars"] == 2_000 and r.json()["name"] == "alpha"
    alpha.refresh_from_db()
    assert alpha.answer_max_chars == 2_000
    for value in ABSURD:
        r = api.put(url, {"answer_max_chars": value}, format="json")
        assert r.status_code == 400, (value, r.content)
        alpha.refresh_from_db()
        assert alpha.answer_max_chars == 2_000, value
    r = api.put(url, {"answer_max_chars": 0}, format="json")
    assert r.json()["field"] == "answer_max_chars"
    assert "greater than or equal to 1" in r.json()["message"]
    listed = api.get("/api/projects/").json()["results"]
    assert [p["answer_max_chars"] for p in listed if p["id"] == alpha.pk] == [2_000]


def test_a_new_project_may_set_its_answer_length_limit(users: dict[str, User]) -> None:
    api = token_client(users["alice"])
    made = api.post("/api/projects/", {"name": "short", "answer_max_chars": 80}, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["answer_max_chars"] == 80
    assert Project.objects.get(name="short").answer_max_chars == 80
    plain = api.post("/api/projects/", {"name": "plain"}, format="json").json()
    assert plain["answer_max_chars"] == 10_000
    refused = api.post("/api/projects/", {"name": "absurd", "answer_max_chars": 0}, format="json")
    assert refused.status_code == 400 and not Project.objects.filter(name="absurd").exists()
    page = Client()
    page.force_login(users["alice"])
    form = {"name": "from the page", "description": "", "instructions": ""}
    page.post(reverse("project_new"), {**form, "answer_max_chars": "300"})
    assert Project.objects.get(name="from the page").answer_max_chars == 300
    page.post(reverse("project_new"), {**form, "name": "default"})
    assert Project.objects.get(name="default").answer_max_chars == 10_000


def test_the_limit_set_on_the_settings_page_is_the_one_answers_meet(
    alpha_items: list[Item], users: dict[str, User]
) -> None:
    project = alpha_items[0].project
    page = Client()
    page.force_login(users["alice"])
    form = {"name": project.name, "description": "", "answer_max_chars": "30"}
    page.post(reverse("project_settings", args=[project.pk]), form)
    assignment = Assignment.objects.filter(annotator=users["bob"]).order_by("pk")[0]
    body = {
        "answers": [
            {"unit": "item", "field": "choice", "value": "1"},
            {"unit": "item", "field": "hard", "value": "no"},
            {
                "unit": "item",
                "field": "justification",
                "value": "List 1 covers every fact, all of it.",
            },
        ]
    }
    r = token_client(users["bob"]).post(
        f"/api/assignments/{assignment.pk}/submit/", body, format="json"
    )
    assert r.status_code == 400 and "at most 30 characters" in r.content.decode(), r.content
