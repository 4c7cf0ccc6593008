"""Issue 38, M4: deeply nested JSON was a 500 (RecursionError) on every JSON endpoint,
the anonymous join included; it is refused with 400 in one place (a middleware), for
JSON bodies and for form values alike."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.hiring import Invite
from annotation.middleware import too_deep
from annotation.models import Project

DEEP = "[" * 100_000 + "]" * 100_000


def test_the_depth_counts_brackets_outside_strings() -> None:
    assert too_deep("[" * 101 + "]" * 101, 100)
    assert not too_deep("[" * 100 + "]" * 100, 100)
    assert not too_deep(json.dumps({"a": "[" * 500, "b": '\\"[[[' * 200}), 100)
    assert not too_deep(json.dumps([{"x": [1, {"y": "]}"}]}] * 1000), 4)
    assert too_deep('{"a": "\\\\", "b": ' + "[" * 5 + "]" * 5 + "}", 4)  # an escaped backslash


@pytest.mark.parametrize("anonymous", [False, True])
def test_a_deep_json_body_is_400(alpha: Project, users: dict[str, User], anonymous: bool) -> None:
    client = Client(raise_request_exception=False)
    if anonymous:
        invite = Invite.objects.create(project=alpha)
        url = reverse("api_join", args=[invite.key])
        body = '{"PROLIFIC_PID": ' + DEEP + "}"
        response = client.post(url, body, content_type="application/json")
    else:
        client.force_login(users["alice"])
        url = f"/api/projects/{alpha.pk}/hiring-policy/"
        response = client.put(url, DEEP, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["message"] == "The data is nested deeper than 100 levels."


def test_a_deep_form_value_is_400(alpha: Project, users: dict[str, User]) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(users["alice"])
    body = {"action": "invite", "worker_param": "PROLIFIC_PID", "extra_params": DEEP}
    response = client.post(reverse("hiring", args=[alpha.pk]), body)
    assert response.status_code == 400
    assert "nested deeper than 100 levels" in response.content.decode()
    assert not Invite.objects.exists()
    # shallow JSON is untouched
    body["extra_params"] = '["STUDY_ID"]'
    body |= {"items_per_person": 1, "skips_allowed": 0}
    assert client.post(reverse("hiring", args=[alpha.pk]), body).status_code == 302
    assert Invite.objects.get().extra_params == ["STUDY_ID"]
