from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Answer, Assignment, Item, Project

GOOD = {
    "action": "submit",
    "choice": "2",
    "hard": "yes",
    "justification": "List 2 keeps every verifiable fact and drops the opinions.",
}


@pytest.fixture
def bob(client: Client, users: dict[str, User], alpha_items: list[Item]) -> Client:
    client.force_login(users["bob"])
    return client


def first_of(user: User) -> Assignment:
    a = Assignment.objects.filter(annotator=user).first()
    assert a is not None
    return a


def test_the_instructions_must_be_acknowledged_first(
    client: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    alpha.set_instructions("New rules.")  # version 2: nobody has acknowledged it
    client.force_login(users["bob"])
    mine = first_of(users["bob"])
    for url in (reverse("next_item", args=[alpha.pk]), reverse("assignment", args=[mine.pk])):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"] == reverse("instructions", args=[alpha.pk])
    response = client.post(reverse("instructions", args=[alpha.pk]))
    assert response["Location"] == reverse("next_item", args=[alpha.pk])
    assert client.get(reverse("assignment", args=[mine.pk])).status_code == 200
    client.post(reverse("assignment", args=[mine.pk]), GOOD)
    mine.refresh_from_db()
    assert mine.guideline_version == 2


def test_the_page_shows_the_lists_in_the_stored_order(bob: Client, users: dict[str, User]) -> None:
    for a in Assignment.objects.filter(annotator=users["bob"]):
        body = bob.get(reverse("assignment", args=[a.pk])).content.decode()
        list1, list2 = a.presented_lists()
        first = list1.claims.first()
        second = list2.claims.first()
        assert first is not None and second is not None
        # List 1 is rendered before List 2, with the claims of the presented order
        assert (
            body.index("List 1")
            < body.index(f"<li>{first.text}</li>")
            < body.index("List 2")
            < body.index(f"<li>{second.text}</li>")
        )
        assert a.item.document.question in body


def test_a_draft_is_saved_on_change_and_restored_on_reload(
    bob: Client, users: dict[str, User]
) -> None:
    a = first_of(users["bob"])
    url = reverse("assignment", args=[a.pk])
    response = bob.post(
        url,
        {"action": "draft", "choice": "1", "justification": "Half a thought"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert (
        'id="draft-status"' in response.content.decode()
        and "Draft saved" in response.content.decode()
    )
    a.refresh_from_db()
    assert a.status == Assignment.DRAFT
    assert a.answers_dict() == {
        ("item", "choice"): "1",
        ("item", "justification"): "Half a thought",
    }
    page = bob.get(url).content.decode()
    assert 'value="1" data-key="1" required\n        checked' in page
    assert "Half a thought</textarea>" in page


def test_a_draft_drops_invalid_values(bob: Client, users: dict[str, User]) -> None:
    a = first_of(users["bob"])
    bob.post(reverse("assignment", args=[a.pk]), {"action": "draft", "choice": "7", "hard": "no"})
    assert first_of(users["bob"]).answers_dict() == {("item", "hard"): "no"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"action": "submit", "hard": "no", "justification": GOOD["justification"]},
            "This field is required.",
        ),
        (
            {"action": "submit", "choice": "1", "justification": GOOD["justification"]},
            "This field is required.",
        ),
        (
            {"action": "submit", "choice": "1", "hard": "no", "justification": "ok"},
            "at least one sentence",
        ),
    ],
)
def test_every_question_is_required(
    bob: Client, users: dict[str, User], data: dict[str, str], message: str
) -> None:
    a = first_of(users["bob"])
    response = bob.post(reverse("assignment", args=[a.pk]), data, headers={"HX-Request": "true"})
    assert response.status_code == 200 and message in response.content.decode()
    a.refresh_from_db()
    assert a.status != Assignment.SUBMITTED


def test_submitting_stores_the_answers_and_moves_to_the_next_item(
    bob: Client, users: dict[str, User], alpha: Project
) -> None:
    a = first_of(users["bob"])
    response = bob.post(reverse("assignment", args=[a.pk]), GOOD, headers={"HX-Request": "true"})
    assert response["HX-Redirect"] == reverse("next_item", args=[alpha.pk])
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED and a.submitted_at is not None
    assert a.answers_dict() == {
        ("item", "choice"): "2",
        ("item", "hard"): "yes",
        ("item", "justification"): GOOD["justification"],
    }
    nxt = bob.get(reverse("next_item", args=[alpha.pk]))
    assert nxt["Location"] != reverse("assignment", args=[a.pk])
    # plain form posts redirect (PRG)
    b = Assignment.objects.filter(annotator=users["bob"]).open().first()
    assert b is not None
    response = bob.post(reverse("assignment", args=[b.pk]), GOOD)
    assert response.status_code == 302 and response["Location"] == reverse(
        "next_item", args=[alpha.pk]
    )


def test_a_submission_can_be_edited(bob: Client, users: dict[str, User]) -> None:
    a = first_of(users["bob"])
    url = reverse("assignment", args=[a.pk])
    bob.post(url, GOOD)
    page = bob.get(url).content.decode()
    assert 'name="editing" value="1"' in page and "Save changes" in page
    # an autosaved draft does not quietly overwrite a submission
    bob.post(url, {"action": "draft", "choice": "1"}, headers={"HX-Request": "true"})
    assert first_of(users["bob"]).answers_dict()[("item", "choice")] == "2"
    bob.post(url, {**GOOD, "choice": "1", "editing": "1"})
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    assert a.answers_dict()[("item", "choice")] == "1"
    assert Answer.objects.filter(assignment=a).count() == 3


def test_skipping_needs_a_reason_and_keeps_the_item_reachable(
    bob: Client, users: dict[str, User], alpha: Project
) -> None:
    a = first_of(users["bob"])
    url = reverse("assignment", args=[a.pk])
    bob.post(url, {"action": "skip", "reason": ""})
    a.refresh_from_db()
    assert a.status == Assignment.PENDING
    response = bob.post(url, {"action": "skip", "reason": "The text is not in English."})
    assert response["Location"] == reverse("next_item", args=[alpha.pk])
    a.refresh_from_db()
    assert a.status == Assignment.SKIPPED and a.skip_reason == "The text is not in English."
    assert "You skipped this item" in bob.get(url).content.decode()
    bob.post(url, GOOD)
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED and a.skip_reason == ""


def test_the_queue_shows_progress(bob: Client, users: dict[str, User], alpha: Project) -> None:
    bob.post(reverse("assignment", args=[first_of(users["bob"]).pk]), GOOD)
    body = bob.get(reverse("queue", args=[alpha.pk])).content.decode()
    assert "1 / 4 done" in body and 'aria-valuenow="1"' in body


def test_the_last_submission_returns_to_the_finished_queue(
    bob: Client, users: dict[str, User], alpha: Project
) -> None:
    for a in Assignment.objects.filter(annotator=users["bob"]):
        bob.post(reverse("assignment", args=[a.pk]), GOOD)
    response = bob.get(reverse("next_item", args=[alpha.pk]), follow=True)
    assert "Your queue is finished" in response.content.decode()


def test_active_time_excludes_idle_gaps(
    users: dict[str, User], alpha_items: list[Item], settings
) -> None:  # type: ignore[no-untyped-def]
    a = first_of(users["bob"])
    t0 = timezone.now()
    for offset in (0, 10, 40, 100, 250, 260):  # gaps: 10, 30, 60, 150 (idle), 10
        a.touch(t0 + timedelta(seconds=offset))
    assert a.active_seconds == 110
    assert a.started_at == t0


@pytest.mark.django_db(transaction=True)
def test_two_simultaneous_submissions_leave_one_set_of_answers(
    alpha_items: list[Item], users: dict[str, User]
) -> None:
    a = first_of(users["bob"])
    url = reverse("assignment", args=[a.pk])
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def submit(choice: str) -> None:
        client = Client()
        client.force_login(users["bob"])
        barrier.wait()
        data = {
            **GOOD,
            "choice": choice,
            "justification": f"Request {choice} thinks list {choice} is better.",
        }
        statuses.append(client.post(url, data).status_code)
        connection.close()

    threads = [threading.Thread(target=submit, args=(c,)) for c in ("1", "2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # The later one is refused, not dropped silently (issue 13, defect 10).
    assert sorted(statuses) == [302, 409]
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    answers = list(Answer.objects.filter(assignment=a).values_list("field", "value"))
    assert len(answers) == 3
    # one request won whole: its choice with its own justification, not a mix
    choice = dict(answers)["choice"]
    assert dict(answers)["justification"] == f"Request {choice} thinks list {choice} is better."
    assert sorted(f for f, _ in answers) == ["choice", "hard", "justification"]
