"""Issue 25: the hiring pages and endpoints attacked (someone else's identity, replay,
absurd values) and what a hired worker may see (no other annotator's labels, no method
names, no verifier answers)."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.models import Assignment, Item, Project
from tests.annotation.api_helpers import submit_body, token_client
from tests.annotation.test_hiring import answer, hire_of, invite, join
from tests.conftest import SYSTEM_A, SYSTEM_B

__all__ = ["invite"]  # the fixture


def _two(invite: Invite) -> tuple[Client, Client]:
    a, b = Client(), Client()
    join(a, invite, PROLIFIC_PID="w-a")
    join(b, invite, PROLIFIC_PID="w-b")
    return a, b


def test_a_worker_cannot_use_another_workers_items_feedback_or_data(invite: Invite) -> None:
    a, b = _two(invite)
    ha, hb = hire_of(a), hire_of(b)
    training = Assignment.objects.get(annotator=ha.membership.user, item__quality__isnull=False)
    answer(a, training, choice_side="a")
    b.post(reverse("instructions", args=[invite.project_id]))
    assert b.get(reverse("assignment", args=[training.pk])).status_code == 404
    assert b.get(reverse("training_feedback", args=[training.pk])).status_code == 404
    b_api = token_client(hb.membership.user)
    assert b_api.get(reverse("api_assignment_feedback", args=[training.pk])).status_code == 404
    r = b_api.post(
        reverse("api_assignment_submit", args=[training.pk]), submit_body(), format="json"
    )
    assert r.status_code == 404
    url = reverse("api_worker_data", args=[invite.project_id, ha.membership_id])
    assert b_api.get(url).status_code == 404 and b_api.delete(url).status_code == 404
    for action in ("erase", "return", "let_through", "resume"):
        r = b.post(
            reverse("hiring_member", args=[invite.project_id, ha.membership_id]),
            {"action": action},
        )
        assert r.status_code == 404
    ha.refresh_from_db()
    assert ha.worker_id == "w-a" and ha.returned_at is None


def test_replayed_joins_make_no_second_account(invite: Invite) -> None:
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    url = reverse("join", args=[invite.key])
    again = client.post(url, {"PROLIFIC_PID": "w-1"})  # the Start form sent twice
    assert again.status_code == 302 and again["Location"] == reverse(
        "next_item", args=[invite.project_id]
    )
    api = token_client(None)
    first = api.post(reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "p-1"}, format="json")
    replay = api.post(
        reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "p-1"}, format="json"
    )
    assert first.status_code == 201 and replay.status_code == 409
    assert Hire.objects.count() == 2


def test_absurd_invite_settings_are_refused(alpha: Project, users: dict[str, User]) -> None:
    api = token_client(users["alice"])
    url = reverse("api_invites", args=[alpha.pk])
    for bad in (
        {"time_limit_minutes": 0},
        {"time_limit_minutes": 10**9},
        {"skips_allowed": -1},
        {"worker_param": "a b"},
        {"worker_param": "x" * 51},
        {"extra_params": ["STUDY ID"]},
        {"screened_out_url": "javascript:alert(1)"},
        {"completion_url": "not a url"},
    ):
        r = api.post(url, bad, format="json")
        assert r.status_code == 400, bad
    assert not Invite.objects.exists()
    r = api.post(
        url,
        {"time_limit_minutes": 45, "skips_allowed": 2, "screened_out_code": "SO-1"},
        format="json",
    )
    assert r.status_code == 201
    row = r.json()
    assert (row["time_limit_minutes"], row["skips_allowed"], row["screened_out_code"]) == (
        45,
        2,
        "SO-1",
    )


def test_a_returned_worker_is_refused_through_the_api(invite: Invite) -> None:
    invite.time_limit_minutes = 5
    invite.save()
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    api = token_client(hire.membership.user)
    api.post(reverse("api_acknowledge", args=[invite.project_id]))
    training = Assignment.objects.get(annotator=hire.membership.user, item__quality__isnull=False)
    Hire.objects.filter(pk=hire.pk).update(joined_at=timezone.now() - dt.timedelta(minutes=6))
    r = api.post(reverse("api_assignment_submit", args=[training.pk]), submit_body(), format="json")
    assert r.status_code == 409 and r.json()["code"] == "hiring_returned"
    assert not Assignment.objects.filter(pk=training.pk).exists()  # back to the pool


def test_a_workers_feedback_shows_no_method_names_or_other_answers(
    invite: Invite, alpha_items: list[Item], users: dict[str, User]
) -> None:
    bob_a = Assignment.objects.get(annotator=users["bob"], item=alpha_items[0])
    bob_a.submit(
        {("item", "choice"): "2", ("item", "hard"): "yes", ("item", "justification"): "BOBSAYS"},
        guideline_version=1,
    )
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    training = Assignment.objects.get(annotator=hire.membership.user, item=alpha_items[0])
    answer(client, training, choice_side="b")
    pages = [
        client.get(reverse("training_feedback", args=[training.pk])).content.decode(),
        token_client(hire.membership.user)
        .get(reverse("api_assignment_feedback", args=[training.pk]))
        .content.decode(),
        client.get(reverse("next_item", args=[invite.project_id]), follow=True).content.decode(),
    ]
    for text in pages:
        for secret in (SYSTEM_A, SYSTEM_B, "BOBSAYS", "w-1", hire.membership.user.username):
            assert secret not in text
    assert hiring.status(hire) == hiring.SCREENED_OUT or not invite.screened_out_code
