"""Issue 38, M1: training answers submitted at once are each kept (one update per
answer: the hire's row is locked while first_answers is read and written), and the
training decision is made once, when every training item has a first answer."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from rest_framework.authtoken.models import Token

from annotation import hiring, operations
from annotation.hiring import Hire, Invite
from annotation.models import Assignment, Item, Membership, Project

TRAINING_ITEMS = 3


@pytest.fixture
def trainer(alpha: Project, alpha_items: list[Item], users: dict[str, User]) -> Invite:
    """Three training items (reference: storage side "a", not hard), one real item each."""
    for item in alpha_items[:TRAINING_ITEMS]:
        hiring.mark(item, hiring.TRAINING, {"item.choice": "a", "item.hard": "no"}, "A.")
    return Invite.objects.create(project=alpha, created_by=users["alice"], items_per_person=1)


def _training(hire: Hire) -> list[Assignment]:
    return list(
        Assignment.objects.filter(
            annotator=hire.membership.user, item__quality__role=hiring.TRAINING
        ).order_by("position")
    )


def _data(a: Assignment, right: bool) -> dict[str, str]:
    side = "a" if right else "b"
    return {
        "choice": hiring.presented(a, "choice", side),
        "hard": "no" if right else "yes",
        "justification": "One list names every fact of the text.",
    }


def _decided_once(hire: Hire, right: bool) -> None:
    hire.refresh_from_db()
    assert sorted(hire.first_answers) == sorted(str(a.item_id) for a in _training(hire))
    assert hire.passed_training != hire.failed_training  # one decision, never both
    assert hire.passed_training is right


@pytest.mark.django_db(transaction=True)
def test_two_training_answers_meeting_inside_the_update_both_count(
    trainer: Invite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forced interleaving: both requests read the hire, meet at a barrier, then write.
    Before the row lock, each saved its own copy of first_answers and one was lost."""
    hire = hiring.join(trainer, {"PROLIFIC_PID": "w-race"})
    hire.membership.acknowledge()
    first, second, third = _training(hire)
    operations.answer(first, hire.membership, _data(first, True))
    barrier = threading.Barrier(2, timeout=120)
    real_hire_of = hiring.services.hire_of

    def meeting_hire_of(membership: Membership) -> Hire | None:
        found = real_hire_of(membership)
        barrier.wait()  # both requests have read the hire here
        return found

    monkeypatch.setattr(hiring.services, "hire_of", meeting_hire_of)
    errors: list[BaseException] = []

    def submit(pk: int) -> None:
        try:
            a = Assignment.objects.select_related("item").get(pk=pk)
            membership = Membership.objects.get(pk=hire.membership_id)
            outcome = operations.answer(a, membership, _data(a, True))
            assert outcome.result == operations.Result.SUBMITTED, outcome
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=(a.pk,)) for a in (second, third)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    _decided_once(hire, right=True)


def _post(url: str, token: str, body: dict[str, Any]) -> int:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_training_answers_against_a_threaded_server(
    trainer: Invite, live_server: Any, settings: Any
) -> None:
    """Eight workers each send their three training answers at once to the live
    (threaded) server; half answer right. Every first answer is kept and each worker is
    decided once, by their answers."""
    settings.API_WRITE_RATE = None
    workers = []
    for n in range(8):
        hire = hiring.join(trainer, {"PROLIFIC_PID": f"w-burst-{n}"})
        hire.membership.acknowledge()
        token = Token.objects.create(user=hire.membership.user).key
        workers.append((hire, token, n % 2 == 0))
    sends = [
        (f"{live_server.url}/api/assignments/{a.pk}/submit/", token, a, right)
        for hire, token, right in workers
        for a in _training(hire)
    ]
    barrier = threading.Barrier(len(sends), timeout=120)
    statuses: list[int] = []

    def send(url: str, token: str, a: Assignment, right: bool) -> None:
        data = _data(a, right)
        body = {"answers": [{"unit": "item", "field": f, "value": v} for f, v in data.items()]}
        barrier.wait()
        statuses.append(_post(url, token, body))

    threads = [threading.Thread(target=send, args=s) for s in sends]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(statuses) == len(sends) and set(statuses) <= {200, 201}, statuses
    for hire, _, right in workers:
        _decided_once(hire, right)
