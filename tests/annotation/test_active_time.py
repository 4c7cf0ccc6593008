"""Active time on the item pages: what each page instance measured, nothing else
(issue 13, defect 1). The browser side is in test_browser_refusals.py."""

from __future__ import annotations

import re
from datetime import timedelta

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Item, PageVisit

GOOD = {
    "action": "submit",
    "choice": "2",
    "hard": "yes",
    "justification": "List 2 keeps every verifiable fact and drops the opinions.",
}


def _open(client: Client, a: Assignment) -> str:
    html = client.get(reverse("assignment", args=[a.pk])).content.decode()
    token = re.search(r'data-page="([0-9a-f]{32})"', html)
    assert token, "the page carries its instance token"
    return token.group(1)


def _age(token: str, seconds: float) -> None:
    PageVisit.objects.filter(token=token).update(
        opened_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_opening_and_reopening_an_item_adds_no_time(
    client: Client, users: dict[str, User], alpha_items: list[Item]
) -> None:
    client.force_login(users["bob"])
    a, b = Assignment.objects.filter(annotator=users["bob"])[:2]
    token = _open(client, a)
    _age(token, 10)
    assert (
        client.post(
            reverse("heartbeat", args=[a.pk]), {"page": token, "seconds": "3.8"}
        ).status_code
        == 204
    )
    # 30 s on another item, then back: the gap is not this item's time.
    Assignment.objects.filter(pk=a.pk).update(
        last_activity_at=timezone.now() - timedelta(seconds=30)
    )
    _open(client, b)
    _open(client, a)
    a.refresh_from_db()
    assert a.active_seconds == 3.8
    assert a.started_at is not None


def test_reports_count_once_per_page_instance_and_never_beyond_wall_time(
    client: Client, users: dict[str, User], alpha_items: list[Item]
) -> None:
    client.force_login(users["bob"])
    a = Assignment.objects.filter(annotator=users["bob"]).first()
    assert a is not None
    url = reverse("heartbeat", args=[a.pk])
    tab1, tab2 = _open(client, a), _open(client, a)
    _age(tab1, 100)
    _age(tab2, 100)
    for token, seconds in [
        (tab1, 10),
        (tab2, 5),
        (tab1, 12),
        (tab2, 5),
        (tab1, 11),
    ]:  # running totals per tab
        assert client.post(url, {"page": token, "seconds": seconds}).status_code == 204
    a.refresh_from_db()
    assert (
        a.active_seconds == 17
    )  # 12 + 5: neither tab counted twice, a lower total changes nothing
    _age(tab1, 20)  # opened 20 s ago: it cannot have been active for 500 s
    client.post(url, {"page": tab1, "seconds": 500})
    a.refresh_from_db()
    assert 12 + 5 < a.active_seconds <= 20 + 5 + 1


def test_another_items_page_token_or_bad_seconds_are_refused(
    client: Client, users: dict[str, User], alpha_items: list[Item]
) -> None:
    client.force_login(users["bob"])
    a, b = Assignment.objects.filter(annotator=users["bob"])[:2]
    token_b = _open(client, b)
    _age(token_b, 100)
    for data in (
        {"page": token_b, "seconds": 5},
        {"page": "", "seconds": 5},
        {"page": _open(client, a), "seconds": "nan"},
        {"page": "x", "seconds": "abc"},
    ):
        assert client.post(reverse("heartbeat", args=[a.pk]), data).status_code == 400
    a.refresh_from_db()
    assert a.active_seconds == 0


def test_a_submit_carries_the_pages_final_time(
    client: Client, users: dict[str, User], alpha_items: list[Item]
) -> None:
    client.force_login(users["bob"])
    a = Assignment.objects.filter(annotator=users["bob"]).first()
    assert a is not None
    token = _open(client, a)
    _age(token, 60)
    Assignment.objects.filter(pk=a.pk).update(
        last_activity_at=timezone.now() - timedelta(seconds=50)
    )
    client.post(reverse("assignment", args=[a.pk]), {**GOOD, "page": token, "seconds": "7.5"})
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    assert a.active_seconds == 7.5
