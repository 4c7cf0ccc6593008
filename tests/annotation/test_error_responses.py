"""Every API error is JSON, a 500 too; a malformed id in a page form is a 400 that says
which field, not a 500."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation.models import Item, Project


@pytest.mark.parametrize("value", ["abc", "", "1.5", "99999999999999999999", "-1"])
def test_a_malformed_item_id_in_the_adjudication_form_is_a_400(  # type: ignore[no-untyped-def]
    client: Client, users: dict[str, User], alpha_items: list[Item], alpha: Project, value: str
) -> None:
    client.force_login(users["alice"])
    response = client.post(
        reverse("adjudication", args=[alpha.pk]),
        {"item": value, "unit": "item", "field": "choice", "value": "a"},
    )
    assert response.status_code == 400
    assert "The field &#x27;item&#x27; must be an id" in response.content.decode()


@pytest.mark.parametrize("value", ["abc", "", "1e3", "99999999999999999999"])
def test_a_malformed_invite_id_in_the_hiring_form_is_a_400(
    client: Client, users: dict[str, User], alpha: Project, value: str
) -> None:
    """Issue 38: `invite=abc` in the hiring page's revoke form was a 500."""
    client = Client(raise_request_exception=False)
    client.force_login(users["alice"])
    response = client.post(
        reverse("hiring", args=[alpha.pk]), {"action": "revoke", "invite": value}
    )
    assert response.status_code == 400
    assert "The field &#x27;invite&#x27; must be an id" in response.content.decode()


def test_an_api_500_is_json(users: dict[str, User], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("annotation.api.projects.paginated", broken)
    token = Token.objects.create(user=users["alice"])
    client = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.get("/api/projects/")
    assert response.status_code == 500 and response["Content-Type"] == "application/json"
    assert response.json()["code"] == "server_error" and "a bug" not in response.json()["message"]
    page = Client(raise_request_exception=False).get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
    missing = client.get("/api/no-such-endpoint/")
    assert missing.status_code == 404 and missing.json() == {
        "code": "not_found",
        "message": "Not found.",
    }
