"""A busy SQLite database: a second connection holds the write lock, and a request that
needs to write answers 503 with Retry-After (nothing half-written), then succeeds once
the lock is released."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation.models import Assignment, Item

pytestmark = pytest.mark.database("sqlite")  # SQLite's write lock only


@contextmanager
def write_lock_held_elsewhere() -> Iterator[None]:
    """Another process's connection in the middle of a write transaction."""
    other = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    connection.ensure_connection()
    connection.cursor().execute("PRAGMA busy_timeout = 200")  # wait 0.2 s, not SQLITE_TIMEOUT
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


@pytest.fixture
def bob_assignment(
    transactional_db: None, alpha_items: list[Item], users: dict[str, User]
) -> Assignment:
    a = Assignment.objects.filter(annotator=users["bob"]).order_by("id").first()
    assert a is not None
    return a


def test_a_page_write_answers_503_with_retry_after_then_works(
    bob_assignment: Assignment, users: dict[str, User], client: Client
) -> None:
    client.force_login(users["bob"])
    url = reverse("assignment", args=[bob_assignment.pk])
    form = {"action": "draft", "choice": "1", "justification": "Half a thought"}
    with write_lock_held_elsewhere():
        busy = client.post(url, form)
    assert busy.status_code == 503 and busy["Retry-After"] == "2"
    assert "Try again" in busy.content.decode()
    assert not bob_assignment.answers.exists()
    retried = client.post(url, form)
    assert retried.status_code == 302
    assert bob_assignment.answers_dict()[("item", "choice")] == "1"


def test_an_api_write_answers_503_json_with_retry_after_then_works(
    bob_assignment: Assignment, users: dict[str, User]
) -> None:
    token = Token.objects.create(user=users["bob"])
    client = Client(headers={"Authorization": f"Token {token.key}"})
    url = reverse("api_assignment_submit", args=[bob_assignment.pk])
    answers = {
        "answers": [
            {"unit": "item", "field": "choice", "value": "2"},
            {"unit": "item", "field": "hard", "value": "no"},
            {"unit": "item", "field": "justification", "value": "List 2 misses nothing important."},
        ]
    }
    with write_lock_held_elsewhere():
        busy = client.post(url, answers, content_type="application/json")
    assert busy.status_code == 503 and busy["Retry-After"] == "2"
    assert busy.json()["code"] == "database_busy"
    bob_assignment.refresh_from_db()
    assert bob_assignment.status == Assignment.PENDING and not bob_assignment.answers.exists()
    done = client.post(url, answers, content_type="application/json")
    assert done.status_code == 200
    bob_assignment.refresh_from_db()
    assert bob_assignment.status == Assignment.SUBMITTED


def test_a_reader_is_not_blocked_by_a_writer(
    bob_assignment: Assignment, users: dict[str, User], client: Client
) -> None:
    client.force_login(users["bob"])
    with write_lock_held_elsewhere():
        queue = client.get(reverse("queue", args=[bob_assignment.item.project_id]))
    assert queue.status_code == 200  # WAL: pages that only read keep working
