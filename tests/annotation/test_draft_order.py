"""The order of drafts (issue 29, point 1): the page numbers its drafts; the server
ignores one older than the draft it holds, refuses one written on top of an older one
(another tab's), and refuses numbers the page cannot have sent."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Item, Project

pytestmark = pytest.mark.django_db

KEY = ("item", "justification")


def mine(users: dict[str, User]) -> Assignment:
    a = Assignment.objects.filter(annotator=users["bob"], item__kind=Item.COMPARISON).first()
    assert a is not None
    return a


def draft(client: Client, a: Assignment, text: str, **order: object) -> tuple[int, str]:
    response = client.post(
        reverse("assignment", args=[a.pk]),
        {"action": "draft", "justification": text, **order},
        headers={"HX-Request": "true"},
    )
    return response.status_code, response.content.decode()


@pytest.fixture
def bob(users: dict[str, User]) -> Client:
    client = Client()
    client.force_login(users["bob"])
    return client


def test_drafts_are_kept_in_the_order_the_page_numbered_them(
    bob: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    a = mine(users)
    assert draft(bob, a, "second", draft_seq=5, draft_base=0)[0] == 200
    # the keepalive of an earlier draft arriving late: ignored, the newer one stays
    status, body = draft(bob, a, "first", draft_seq=3, draft_base=0)
    assert status == 409 and "NOT saved" in body
    a.refresh_from_db()
    assert (a.answers_dict()[KEY], a.draft_seq) == ("second", 5)
    # the same draft twice (a repeat after a reload): fine, nothing changes
    assert draft(bob, a, "second", draft_seq=5, draft_base=0)[0] == 200
    assert draft(bob, a, "third", draft_seq=6, draft_base=5)[0] == 200
    a.refresh_from_db()
    assert (a.answers_dict()[KEY], a.draft_seq) == ("third", 6)


def test_a_tab_writing_on_top_of_an_older_draft_is_told(
    bob: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    a = mine(users)
    assert draft(bob, a, "tab one", draft_seq=2, draft_base=0)[0] == 200
    # the second tab loaded before tab one saved: its number is higher, its base older
    status, body = draft(bob, a, "tab two", draft_seq=3, draft_base=0)
    assert status == 409
    assert "newer draft of this item was saved in another tab" in body
    assert a.answers_dict()[KEY] == "tab one"


def test_a_draft_without_numbers_counts_one_up(
    bob: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    """The API and a page without its script send no numbers: stored, and a tab that
    numbered its drafts before is then the older one."""
    a = mine(users)
    assert draft(bob, a, "numbered", draft_seq=4, draft_base=0)[0] == 200
    assert draft(bob, a, "plain")[0] == 200
    a.refresh_from_db()
    assert (a.answers_dict()[KEY], a.draft_seq) == ("plain", 5)
    assert draft(bob, a, "stale tab", draft_seq=5, draft_base=4)[0] == 409


@pytest.mark.parametrize(
    "seq,base",
    [
        ("-1", "0"),
        ("1e3", "0"),
        ("x", "0"),
        (str(2**53), "0"),
        (str(10**30), "0"),
        ("٣", "0"),  # a digit, but not an ASCII one
        ("3", "3"),  # a draft is newer than its base
        ("3", "9"),
        ("3", ""),
    ],
)
def test_absurd_numbers_are_refused_with_a_reason(
    bob: Client,
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    seq: str,
    base: str,
) -> None:
    a = mine(users)
    status, body = draft(bob, a, "text", draft_seq=seq, draft_base=base)
    assert status == 400
    assert "draft_" in body
    a.refresh_from_db()
    assert a.draft_seq == 0 and a.answers_dict() == {}


def test_someone_elses_assignment_takes_no_draft(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    a = mine(users)
    other = Assignment.objects.exclude(annotator=users["bob"]).first()
    assert other is not None
    client = Client()
    client.force_login(other.annotator)
    response = client.post(
        reverse("assignment", args=[a.pk]),
        {"action": "draft", "justification": "not mine", "draft_seq": 99, "draft_base": 0},
    )
    assert response.status_code == 404
    a.refresh_from_db()
    assert a.draft_seq == 0 and a.answers_dict() == {}
