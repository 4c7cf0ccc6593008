"""Issue 25: the completion code only for the work done, the first training answer
decides, screen-outs with their code, returns past the time limit."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.models import Assignment, Item
from tests.annotation.api_helpers import token_client
from tests.annotation.test_hiring import answer, hire_of, invite, join, set_policy

__all__ = ["invite"]  # the fixture


def _mine(hire: Hire) -> list[Assignment]:
    return list(Assignment.objects.filter(annotator=hire.membership.user).order_by("position"))


def _skip(client: Client, a: Assignment) -> None:
    client.post(reverse("instructions", args=[a.item.project_id]))
    client.post(reverse("assignment", args=[a.pk]), {"action": "skip", "reason": "no"})


def _next(client: Client, invite: Invite) -> str:
    return client.get(reverse("next_item", args=[invite.project_id]), follow=True).content.decode()


@pytest.fixture
def screening(invite: Invite) -> Invite:
    invite.screened_out_code = "SCR-OUT-9"
    invite.save()
    return invite


def test_skipping_everything_gives_no_completion_code(screening: Invite) -> None:
    """Attack 2: skip every assignment (training and real), open the queue."""
    client = Client()
    join(client, screening, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    for a in _mine(hire):
        _skip(client, a)
    hire.refresh_from_db()
    assert not hire.passed_training and hire.failed_training  # skipped training fails it
    page = _next(client, screening)
    assert "C0DE-42" not in page
    assert 'id="screened-out-code">SCR-OUT-9<' in page and "did not reach" in page
    assert hiring.status(hire) == hiring.SCREENED_OUT


def test_skipped_real_items_hold_the_code_back_unless_the_invite_allows_them(
    invite: Invite,
) -> None:
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    training, first, second = _mine(hire_of(client))
    answer(client, training, choice_side="a")
    answer(client, first, choice_side="a")
    _skip(client, second)
    page = _next(client, invite)
    assert "C0DE-42" not in page and 'id="not-complete"' in page
    assert hiring.status(hire_of(client)) == hiring.IN_PROGRESS
    invite.skips_allowed = 1
    invite.save()
    assert 'id="completion-code">C0DE-42<' in _next(client, invite)
    invite.skips_allowed = 0
    invite.save()
    answer(client, second, choice_side="b")  # a skipped item answered after all
    assert 'id="completion-code">C0DE-42<' in _next(client, invite)
    assert hiring.status(hire_of(client)) == hiring.COMPLETED


def test_an_edit_after_the_feedback_does_not_change_the_training_result(
    screening: Invite,
) -> None:
    """Attack 3: fail training, read the reference, resubmit with edit=true."""
    client = Client()
    join(client, screening, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    training, real, _ = _mine(hire)
    answer(client, training, choice_side="b", hard="yes")
    api = token_client(hire.membership.user)
    fb = api.get(reverse("api_assignment_feedback", args=[training.pk])).json()
    body = {
        "edit": True,
        "answers": [
            {"unit": "item", "field": "choice", "value": fb["reference"]["item.choice"]},
            {"unit": "item", "field": "hard", "value": fb["reference"]["item.hard"]},
            {"unit": "item", "field": "justification", "value": "Now I know the answer."},
        ],
    }
    r = api.post(reverse("api_assignment_submit", args=[training.pk]), body, format="json")
    # screened out: the edit is refused (issue 38) and the result stays
    assert r.status_code == 409 and r.json()["code"] == "hiring_screened_out", r.content
    training.refresh_from_db()
    assert training.answers_dict()[("item", "hard")] == "yes"
    hire.refresh_from_db()
    assert hire.failed_training and not hire.passed_training  # ... and decides nothing
    # screened out: their real item went back to the pool (issue 38, H4)
    assert api.get(reverse("api_assignment", args=[real.pk])).status_code == 404
    assert not Assignment.objects.filter(pk=real.pk).exists()
    assert 'id="screened-out-code">SCR-OUT-9<' in _next(client, screening)


def test_the_first_right_answer_passes_and_a_later_edit_keeps_it(invite: Invite) -> None:
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    training = _mine(hire)[0]
    answer(client, training, choice_side="a")
    r = client.post(
        reverse("assignment", args=[training.pk]),
        {
            "choice": hiring.presented(training, "choice", "b"),
            "hard": "yes",
            "justification": "On a second look the second list is better.",
            "editing": "1",
        },
    )
    assert r.status_code == 302, r.content.decode()
    hire.refresh_from_db()
    assert hire.passed_training and not hire.failed_training
    assert hiring.training_score(hire) == hiring.Score(2, 2)
    assert hiring.score(hire.membership.user, invite.project, hiring.TRAINING).matching == 0


def test_a_check_pause_screens_out_with_the_invites_url(
    invite: Invite, alpha_items: list[Item]
) -> None:
    for item in alpha_items[2:]:
        hiring.mark(item, hiring.CHECK, {"item.hard": "no"})
    set_policy(invite.project, check_rate=0.5, pause_below=0.5, pause_after=1)
    invite.items_per_person = 1
    invite.screened_out_url = "https://app.prolific.com/submissions/complete?cc=SCREENED"
    invite.save()
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    training = _mine(hire)[0]
    answer(client, training, choice_side="a")
    check = Assignment.objects.get(annotator=hire.membership.user, item__quality__role="check")
    answer(client, check, hard="yes")
    page = _next(client, invite)
    assert invite.screened_out_url in page and 'id="screened-out-url"' in page
    assert hiring.status(hire_of(client)) == hiring.SCREENED_OUT
    # a researcher's pause is not a screen-out
    hiring.set_state(hire.membership, paused=False)
    hiring.set_state(hire.membership, paused=True)
    assert invite.screened_out_url not in _next(client, invite)


def test_past_the_time_limit_open_items_go_back_to_the_pool(
    invite: Invite, alpha_items: list[Item]
) -> None:
    invite.time_limit_minutes = 30
    invite.save()
    slow = Client()
    join(slow, invite, PROLIFIC_PID="slow")
    hire = hire_of(slow)
    training, first, second = _mine(hire)
    answer(slow, training, choice_side="a")
    answer(slow, first, choice_side="a")
    # time passes: the join was 31 minutes ago
    Hire.objects.filter(pk=hire.pk).update(joined_at=timezone.now() - dt.timedelta(minutes=31))
    fast = Client()
    join(fast, invite, PROLIFIC_PID="next")  # a join returns the overdue first
    hire.refresh_from_db()
    assert hire.returned_at is not None and hiring.status(hire) == hiring.RETURNED
    mine = Assignment.objects.filter(annotator=hire.membership.user)
    assert list(mine.values_list("pk", "status")) == [
        (training.pk, Assignment.SUBMITTED),
        (first.pk, Assignment.SUBMITTED),
    ]
    given = Assignment.objects.filter(
        annotator=hire_of(fast).membership.user, item__quality__isnull=True
    )
    assert second.item_id in set(given.values_list("item_id", flat=True))
    page = _next(slow, invite)
    assert "time for this study has run out" in page and "C0DE-42" not in page


def test_a_finished_person_is_not_returned(invite: Invite) -> None:
    invite.time_limit_minutes = 1
    invite.save()
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    for a in _mine(hire):
        answer(client, a, choice_side="a")
    Hire.objects.filter(pk=hire.pk).update(joined_at=timezone.now() - dt.timedelta(hours=2))
    assert hiring.return_overdue(invite.project) == 0
    assert 'id="completion-code">C0DE-42<' in _next(client, invite)


def test_a_hired_workers_header_shows_the_pseudonym_only(invite: Invite, users) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    join(client, invite, PROLIFIC_PID="w-1")
    hire = hire_of(client)
    page = _next(client, invite)
    assert f'<span class="who">{hire.membership.pseudonym}</span>' in page
    assert hire.membership.user.username not in page and "w-1" not in page
    assert reverse("settings_tokens") not in page
    alice = Client()
    alice.force_login(users["alice"])
    assert reverse("settings_tokens") in alice.get(reverse("home")).content.decode()
