"""Who may do what: creating projects needs annotation.add_project (the "researchers"
group, superusers); adding an existing account needs it too; new accounts go through
Django's username and password validators. Pages and API alike."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Membership, Project
from tests.annotation.api_helpers import token_client
from tests.conftest import login


def test_an_annotator_cannot_create_a_project(client: Client, users: dict[str, User]) -> None:
    login(client, users["bob"])
    assert client.get(reverse("project_new")).status_code == 403
    assert client.post(reverse("project_new"), {"name": "mine"}).status_code == 403
    assert "Create a project" not in client.get(reverse("home")).content.decode()
    response = token_client(users["bob"]).post("/api/projects/", {"name": "mine"}, format="json")
    assert response.status_code == 403 and response.json()["code"] == "permission_denied"
    assert not Project.objects.filter(name="mine").exists()


def test_researchers_and_superusers_create_projects(client: Client, users: dict[str, User]) -> None:
    root = User.objects.create_superuser("root", password="pw-root")
    assert "Create a project" in login(client, users["alice"]).get(reverse("home")).content.decode()
    assert (
        token_client(root).post("/api/projects/", {"name": "r"}, format="json").status_code == 201
    )
    assert (
        token_client(users["erin"]).post("/api/projects/", {"name": "e"}, format="json").status_code
        == 201
    )


@pytest.fixture
def frank(alpha: Project) -> User:
    """A researcher of alpha who may not create projects."""
    frank = User.objects.create_user("frank", password="pw-frank")
    alpha.add_member(frank, Membership.RESEARCHER)
    return frank


def test_only_users_who_may_create_projects_add_existing_accounts(  # type: ignore[no-untyped-def]
    client: Client, alpha: Project, users: dict[str, User], frank: User
) -> None:
    url = reverse("project_members", args=[alpha.pk])
    login(client, frank)
    existing = client.post(url, {"username": "erin", "role": "researcher"}, follow=True)
    missing = client.post(url, {"username": "ghost", "role": "researcher"}, follow=True)
    assert alpha.role_of(users["erin"]) is None
    # the same answer whether the account exists or not
    said = [[str(m) for m in r.context["messages"]] for r in (existing, missing)]
    assert said[0] == said[1] and "give a password to create a new account" in said[0][0]
    api = token_client(frank)
    for name in ("erin", "ghost"):
        response = api.post(f"/api/projects/{alpha.pk}/members/", {"username": name}, format="json")
        assert response.status_code == 403 and "ghost" not in response.json()["message"]
    assert alpha.role_of(users["erin"]) is None
    # a new account is fine
    created = api.post(
        f"/api/projects/{alpha.pk}/members/",
        {"username": "newbie", "password": "correct-horse-battery"},
        format="json",
    )
    assert created.status_code == 201 and alpha.role_of(User.objects.get(username="newbie"))
    # alice may add existing accounts, and learns when there is none
    alice = token_client(users["alice"])
    response = alice.post(f"/api/projects/{alpha.pk}/members/", {"username": "erin"}, format="json")
    assert response.status_code == 201 and alpha.role_of(users["erin"]) == Membership.ANNOTATOR
    response = alice.post(
        f"/api/projects/{alpha.pk}/members/", {"username": "ghost"}, format="json"
    )
    assert response.status_code == 400 and response.json()["code"] == "unknown_user"


@pytest.mark.parametrize(
    ("username", "password", "code", "field"),
    [
        ("bad name!", "correct-horse-battery", "invalid_username", "username"),
        ("<script>", "correct-horse-battery", "invalid_username", "username"),
        ("bob", "correct-horse-battery", "invalid_username", "username"),  # taken
        ("newbie", "short", "invalid_password", "password"),
        ("newbie", "password123", "invalid_password", "password"),  # too common
        ("newbie", "12345678901", "invalid_password", "password"),  # all digits
    ],
)
def test_new_accounts_go_through_djangos_validators(  # type: ignore[no-untyped-def]
    client: Client,
    alpha: Project,
    users: dict[str, User],
    frank: User,
    username: str,
    password: str,
    code: str,
    field: str,
) -> None:
    before = User.objects.count()
    response = token_client(frank).post(
        f"/api/projects/{alpha.pk}/members/",
        {"username": username, "password": password},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert (response.json()["code"], response.json()["field"]) == (code, field)
    page = login(client, frank).post(
        reverse("project_members", args=[alpha.pk]),
        {"username": username, "password": password, "role": "annotator"},
        follow=True,
    )
    assert page.status_code == 200 and b'class="error"' in page.content
    assert User.objects.count() == before
    assert users["bob"].check_password("pw-bob")  # an existing account is never changed
