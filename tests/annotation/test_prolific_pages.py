"""Issue 41: the hiring page's Prolific section and the API, against the fake Prolific:
the workspace is picked by name among the operator's; create, publish, pull, approve,
reject only after a confirmation step, pay bonuses once (a replayed post pays nothing);
absurd amounts refused; nobody but the project's researchers reaches any of it (an
annotator, a hired worker, another project's researcher: 404, and nothing reaches
Prolific)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.hiring import HiringPolicy, Invite
from annotation.prolific.fake import FakeProlific, new_id
from annotation.prolific.models import ProlificBonus, ProlificStudy
from tests.annotation.api_helpers import token_client

from .test_prolific import fake, lab, pinvite, take

__all__ = ["fake", "lab", "pinvite"]  # fixtures

REASON = "Your answers to the training items did not match the instructions' examples. " * 2
CREATE = {"name": "Compare lists", "description": "Two lists per text.", "reward_cents": 150}


def researcher(users: dict[str, User]) -> Client:
    c = Client()
    c.force_login(users["alice"])
    return c


def page(invite: Invite) -> str:
    return reverse("hiring_prolific", args=[invite.project_id, invite.pk])


def api(invite: Invite) -> str:
    return reverse("api_prolific_study", args=[invite.project_id, invite.pk])


def test_the_workspace_is_one_the_operator_named(
    pinvite: Invite, users: dict[str, User], settings: object
) -> None:
    alice = researcher(users)
    hiring_page = alice.get(reverse("hiring", args=[pinvite.project_id])).content.decode()
    assert 'id="prolific"' in hiring_page and "lab" in hiring_page
    assert "127.0.0.1" not in hiring_page  # names only: no URL, no token
    url = reverse("hiring_prolific_workspace", args=[pinvite.project_id])
    alice.post(url, {"workspace": "http://evil.example/"})
    policy = HiringPolicy.objects.get(project=pinvite.project)
    assert policy.prolific_workspace == "lab"  # unchanged: not a configured name
    r = token_client(users["alice"]).put(
        reverse("api_prolific_workspace", args=[pinvite.project_id]),
        {"workspace": "other"},
        format="json",
    )
    assert r.status_code == 400 and "unknown Prolific workspace" in r.json()["message"]
    alice.post(url, {"workspace": ""})
    assert HiringPolicy.objects.get(project=pinvite.project).prolific_workspace == ""
    # without a workspace the page says so and offers the manual path's URL
    body = alice.get(page(pinvite)).content.decode()
    assert "uses no Prolific workspace" in body and "{{%PROLIFIC_PID%}}" in body


def test_the_page_flow_with_a_confirmation_before_rejecting(
    pinvite: Invite, lab: FakeProlific, users: dict[str, User]
) -> None:
    alice = researcher(users)
    alice.post(page(pinvite), {"action": "create", **CREATE})
    study = ProlificStudy.objects.get(invite=pinvite)
    assert lab.studies[study.study_id]["reward"] == 150
    alice.post(page(pinvite), {"action": "publish"})
    assert lab.studies[study.study_id]["status"] == "ACTIVE"
    done = take(lab, study, pinvite, passes=True)
    out = take(lab, study, pinvite, passes=False)
    alice.post(page(pinvite), {"action": "pull"})
    alice.post(page(pinvite), {"action": "approve"})
    status = {s["participant_id"]: s["status"] for s in lab.submissions.values()}
    assert status == {done.worker_id: "APPROVED", out.worker_id: "AWAITING REVIEW"}
    out_sub = next(s for s in lab.submissions.values() if s["participant_id"] == out.worker_id)
    ask = {"action": "reject", "submissions": [out_sub["id"]], "category": "FAILED_CHECK"}
    r = alice.post(page(pinvite), {**ask, "message": REASON})
    assert r.status_code == 200 and "Confirm reject" in r.content.decode()
    assert out_sub["status"] == "AWAITING REVIEW"  # nothing sent before the confirmation
    alice.post(page(pinvite), {**ask, "message": REASON, "confirm": "on"})
    assert out_sub["status"] == "REJECTED"
    for _ in range(3):  # a double click and a replayed post pay once
        alice.post(page(pinvite), {"action": "bonus"})
    assert lab.paid == [(done.worker_id, 100)]
    assert ProlificBonus.objects.get().state == ProlificBonus.PAID
    body = alice.get(page(pinvite)).content.decode()
    assert "Bonuses paid through the API" in body and done.worker_id in body
    assert body.count('type="checkbox"') == 2 and " disabled>" in body  # done's: disabled


def test_the_api_flow_replays_and_absurd_amounts(
    pinvite: Invite, lab: FakeProlific, users: dict[str, User]
) -> None:
    alice = token_client(users["alice"])
    r = alice.post(
        api(pinvite), {"action": "create", **CREATE, "reward_cents": 10**7}, format="json"
    )
    assert r.status_code == 400 and r.json()["field"] == "reward_cents"
    r = alice.post(api(pinvite), {"action": "create", **CREATE}, format="json")
    assert r.status_code == 200, r.content
    study_id = r.json()["result"]["study_id"]
    assert (
        alice.post(api(pinvite), {"action": "publish"}, format="json").json()["study"]["status"]
        == "ACTIVE"
    )
    study = ProlificStudy.objects.get(invite=pinvite)
    done = take(lab, study, pinvite, passes=True)
    rows = alice.post(api(pinvite), {"action": "pull"}, format="json").json()["submissions"]
    assert [(s["participant_id"], s["payable"]) for s in rows] == [(done.worker_id, True)]
    assert alice.post(api(pinvite), {"action": "approve"}, format="json").json()["result"][
        "approved"
    ] == [done.worker_id]
    HiringPolicy.objects.filter(project=pinvite.project).update(pay_per_item=Decimal("500"))
    r = alice.post(api(pinvite), {"action": "bonus"}, format="json")
    assert r.status_code == 400 and "above the workspace's limit" in r.json()["message"]
    HiringPolicy.objects.filter(project=pinvite.project).update(pay_per_item=Decimal("0.50"))
    for _ in range(2):
        assert alice.post(api(pinvite), {"action": "bonus"}, format="json").status_code == 200
    assert lab.paid == [(done.worker_id, 100)]
    assert lab.studies[study_id]["status"] == "ACTIVE"


def test_a_wrong_token_is_a_clear_error(
    pinvite: Invite, lab: FakeProlific, users: dict[str, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_PROLIFIC_LAB_TOKEN", "revoked")
    r = token_client(users["alice"]).post(
        api(pinvite), {"action": "create", **CREATE}, format="json"
    )
    assert r.status_code == 502 and r.json()["code"] == "prolific_token"
    assert "token is wrong" in r.json()["message"]
    assert not ProlificStudy.objects.exists()  # the refused draft left no record
    monkeypatch.delenv("TEST_PROLIFIC_LAB_TOKEN")
    r = token_client(users["alice"]).post(
        api(pinvite), {"action": "create", **CREATE}, format="json"
    )
    assert r.status_code == 400 and "TEST_PROLIFIC_LAB_TOKEN" in r.json()["message"]


def test_nobody_else_reaches_any_of_it(
    pinvite: Invite, lab: FakeProlific, users: dict[str, User]
) -> None:
    alice = token_client(users["alice"])
    alice.post(api(pinvite), {"action": "create", **CREATE}, format="json")
    study = ProlificStudy.objects.get(invite=pinvite)
    done = take(lab, study, pinvite, passes=True)
    lab.add_submission(study.study_id, new_id())
    before = len(lab.requests)
    worker = done.membership.user
    for user in (users["bob"], worker, users["erin"]):  # annotator, hired worker, beta's
        web = Client()
        web.force_login(user)
        assert web.get(page(pinvite)).status_code == 404
        for action in ("publish", "pull", "approve", "bonus", "reconcile", "reject"):
            body = {"action": action, "submissions": [], "message": REASON, "confirm": "on"}
            assert web.post(page(pinvite), body).status_code == 404
            r = token_client(user).post(api(pinvite), body, format="json")
            assert r.status_code == 404, (user, action, r.content)
        assert token_client(user).get(api(pinvite)).status_code == 404
        url = reverse("hiring_prolific_workspace", args=[pinvite.project_id])
        assert web.post(url, {"workspace": ""}).status_code == 404
        r = token_client(user).put(
            reverse("api_prolific_workspace", args=[pinvite.project_id]),
            {"workspace": ""},
            format="json",
        )
        assert r.status_code == 404
    assert len(lab.requests) == before  # nothing reached Prolific
    assert HiringPolicy.objects.get(project=pinvite.project).prolific_workspace == "lab"
    assert (
        token_client(None).post(api(pinvite), {"action": "bonus"}, format="json").status_code == 401
    )
    assert lab.paid == []
