"""Who may see what: every page and fragment, for every role."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation import kinds
from annotation.models import Assignment, Item, Project
from tests.conftest import SYSTEM_A, SYSTEM_B

CAROL_SECRET = "Carol thinks the second list is far more complete than the first one."


@pytest.fixture
def carol_answered(alpha_items: list[Item], users: dict[str, User]) -> None:
    for a in Assignment.objects.filter(annotator=users["carol"]):
        a.submit(
            {
                ("item", "choice"): "2",
                ("item", "hard"): "no",
                ("item", "justification"): CAROL_SECRET,
            },
            guideline_version=1,
        )


def researcher_urls(project: Project) -> list[tuple[str, str]]:
    p = project.pk
    return [
        ("get", reverse("project", args=[p])),
        ("get", reverse("project_import", args=[p])),
        ("post", reverse("project_members", args=[p])),
        ("post", reverse("project_instructions", args=[p])),
        *[("post", reverse("project_items", args=[p, kind])) for kind in kinds.names()],
        ("get", reverse("project_export", args=[p, "csv"])),
        ("get", reverse("project_export", args=[p, "json"])),
        ("get", reverse("hiring", args=[p])),
        ("post", reverse("hiring", args=[p])),
        (
            "post",
            reverse(
                "hiring_member", args=[p, project.memberships.get(role="annotator", number=2).pk]
            ),
        ),
    ]


def annotator_urls(project: Project, assignment: Assignment) -> list[tuple[str, str]]:
    p = project.pk
    return [
        ("get", reverse("queue", args=[p])),
        ("get", reverse("instructions", args=[p])),
        ("get", reverse("next_item", args=[p])),
        ("get", reverse("assignment", args=[assignment.pk])),
        ("post", reverse("heartbeat", args=[assignment.pk])),
    ]


def call(client: Client, method: str, url: str, htmx: bool = False):  # type: ignore[no-untyped-def]
    headers = {"HX-Request": "true"} if htmx else {}
    return getattr(client, method)(url, headers=headers)


@pytest.mark.parametrize("htmx", [False, True])
def test_anonymous_users_are_sent_to_the_login_page(
    client: Client, alpha: Project, alpha_items: list[Item], htmx: bool
) -> None:
    assignment = Assignment.objects.first()
    assert assignment is not None
    for method, url in researcher_urls(alpha) + annotator_urls(alpha, assignment):
        response = call(client, method, url, htmx)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url


@pytest.mark.parametrize("who", ["bob", "dave", "erin"])
def test_researcher_pages_are_for_the_projects_researchers_only(
    client: Client,
    alpha: Project,
    beta: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    who: str,
) -> None:
    client.force_login(users[who])
    for method, url in researcher_urls(alpha):
        assert call(client, method, url).status_code == 404, (who, url)


def test_researchers_reach_their_pages(
    client: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    client.force_login(users["alice"])
    for method, url in researcher_urls(alpha):
        assert call(client, method, url).status_code in (200, 302), url


@pytest.mark.parametrize("who", ["alice", "dave", "erin"])
def test_annotator_pages_are_for_the_projects_annotators(
    client: Client,
    alpha: Project,
    beta: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    who: str,
) -> None:
    client.force_login(users[who])
    assignment = Assignment.objects.filter(annotator=users["bob"]).first()
    assert assignment is not None
    for method, url in annotator_urls(alpha, assignment):
        assert call(client, method, url).status_code == 404, (who, url)


@pytest.mark.parametrize("htmx", [False, True])
def test_an_annotator_cannot_open_or_change_someone_elses_assignment(
    client: Client, alpha_items: list[Item], users: dict[str, User], htmx: bool
) -> None:
    client.force_login(users["bob"])
    carols = Assignment.objects.filter(annotator=users["carol"]).first()
    assert carols is not None
    url = reverse("assignment", args=[carols.pk])
    assert call(client, "get", url, htmx).status_code == 404
    data = {
        "action": "submit",
        "choice": "1",
        "hard": "no",
        "justification": "Bob writes into carol's item.",
    }
    headers = {"HX-Request": "true"} if htmx else {}
    assert client.post(url, data, headers=headers).status_code == 404
    assert client.post(url, {"action": "skip", "reason": "x"}).status_code == 404
    assert client.post(reverse("heartbeat", args=[carols.pk])).status_code == 404
    carols.refresh_from_db()
    assert carols.status == Assignment.PENDING and not carols.answers.exists()


def test_an_annotator_removed_from_the_project_loses_access(
    client: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    bobs = Assignment.objects.filter(annotator=users["bob"]).first()
    assert bobs is not None
    alpha.memberships.filter(user=users["bob"]).delete()
    client.force_login(users["bob"])
    assert client.get(reverse("assignment", args=[bobs.pk])).status_code == 404


def test_annotators_never_see_system_names_or_other_answers(
    client: Client,
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    carol_answered: None,
) -> None:
    client.force_login(users["bob"])
    bobs = list(Assignment.objects.filter(annotator=users["bob"]))
    responses = [client.get(reverse("home"))]
    for method, url in annotator_urls(alpha, bobs[0]):
        responses.append(call(client, method, url))
        responses.append(call(client, method, url, htmx=True))
    for a in bobs:
        url = reverse("assignment", args=[a.pk])
        responses.append(client.get(url))
        # fragments: a draft save, a refused submission (form errors), a good one
        responses.append(
            client.post(url, {"action": "draft", "choice": "1"}, headers={"HX-Request": "true"})
        )
        responses.append(
            client.post(url, {"action": "submit", "choice": "1"}, headers={"HX-Request": "true"})
        )
        responses.append(client.post(url, {"action": "submit", "choice": "1"}))
    responses.append(client.get(reverse("queue", args=[alpha.pk])))
    for response in responses:
        body = response.content.decode()
        assert SYSTEM_A not in body and SYSTEM_B not in body
        assert "zz-secret" not in body
        assert CAROL_SECRET not in body
    # the queue and next pages reached real content, so the checks above saw something
    assert any("List 1" in r.content.decode() for r in responses)
    assert any(r.content.decode().lstrip().startswith('<form id="answer-form"') for r in responses)
