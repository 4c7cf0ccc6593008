from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.kinds.verification import consistency_hints
from annotation.models import Assignment, Item
from tests.conftest import EVIDENCE, SYSTEM_A, VERIFIER

ALL_SUPPORT = {
    "stance__evidence:1": "supports",
    "stance__evidence:2": "supports",
    "stance__evidence:3": "inconclusive",
}


@pytest.fixture
def bob(client: Client, users: dict[str, User], alpha_verification: list[Item]) -> Client:
    client.force_login(users["bob"])
    return client


def mine(user: User) -> Assignment:
    a = Assignment.objects.filter(annotator=user, item__kind=Item.VERIFICATION).first()
    assert a is not None
    return a


def test_the_page_shows_the_claim_and_results_in_rank_order(
    bob: Client, users: dict[str, User]
) -> None:
    a = mine(users["bob"])
    body = bob.get(reverse("assignment", args=[a.pk])).content.decode()
    assert a.item.claim.text in body  # type: ignore[union-attr]
    positions = [body.index(e["title"]) for e in EVIDENCE]
    assert positions == sorted(positions)
    for e in EVIDENCE:
        assert f'<a href="{e["link"]}" target="_blank" rel="noopener noreferrer">' in body
    # never the verifier's answer or name, nor the extractor's
    assert VERIFIER not in body and "unsupported" not in body.lower() and SYSTEM_A not in body


@pytest.mark.parametrize(
    ("label", "stances", "expected"),
    [
        (
            "supported",
            ["inconclusive", "inconclusive"],
            ["no search result is marked as supporting"],
        ),
        ("supported", ["supports", "contradicts"], ["while a search result contradicts"]),
        (
            "contradicted",
            ["supports", "inconclusive"],
            ["no search result is marked as contradicting"],
        ),
        (
            "inconclusive-conflicting",
            ["supports", "inconclusive"],
            ["needs a result that supports and one that contradicts"],
        ),
        (
            "inconclusive-not-enough",
            ["supports", "inconclusive"],
            ["while a result supports the claim"],
        ),
        ("supported", ["supports", "inconclusive"], []),
        ("contradicted", ["contradicts", "inconclusive"], []),
        ("inconclusive-conflicting", ["supports", "contradicts"], []),
        ("inconclusive-not-enough", ["inconclusive", "inconclusive"], []),
    ],
)
def test_consistency_hints_follow_table_5(
    label: str, stances: list[str], expected: list[str]
) -> None:
    hints = consistency_hints(label, stances)
    assert len(hints) == len(expected)
    for hint, fragment in zip(hints, expected, strict=True):
        assert fragment in hint


def test_a_consistent_answer_is_stored_per_result(bob: Client, users: dict[str, User]) -> None:
    a = mine(users["bob"])
    bob.post(reverse("assignment", args=[a.pk]), {**ALL_SUPPORT, "label": "supported"})
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    assert a.answers_dict() == {
        ("evidence:1", "stance"): "supports",
        ("evidence:2", "stance"): "supports",
        ("evidence:3", "stance"): "inconclusive",
        ("item", "label"): "supported",
    }


def test_a_hint_asks_for_confirmation_and_the_confirmation_is_stored(
    bob: Client, users: dict[str, User]
) -> None:
    a = mine(users["bob"])
    url = reverse("assignment", args=[a.pk])
    data = {**ALL_SUPPORT, "stance__evidence:2": "contradicts", "label": "supported"}
    response = bob.post(url, data, headers={"HX-Request": "true"})
    body = response.content.decode()
    assert "while a search result contradicts" in body and 'name="confirm"' in body
    a.refresh_from_db()
    assert a.status != Assignment.SUBMITTED
    bob.post(url, {**data, "confirm": "on"})
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    answers = a.answers_dict()
    assert (
        answers[("item", "label")] == "supported" and answers[("item", "hint_confirmed")] == "yes"
    )
    assert "while a search result contradicts" in answers[("item", "hints")]


def test_every_result_needs_a_stance(bob: Client, users: dict[str, User]) -> None:
    a = mine(users["bob"])
    data = {"stance__evidence:1": "supports", "label": "supported"}
    body = bob.post(
        reverse("assignment", args=[a.pk]), data, headers={"HX-Request": "true"}
    ).content.decode()
    assert body.count("This field is required.") == 2


def test_drafts_keep_stances(bob: Client, users: dict[str, User]) -> None:
    a = mine(users["bob"])
    url = reverse("assignment", args=[a.pk])
    bob.post(
        url,
        {"action": "draft", "stance__evidence:2": "contradicts", "stance__evidence:3": "bogus"},
        headers={"HX-Request": "true"},
    )
    assert mine(users["bob"]).answers_dict() == {("evidence:2", "stance"): "contradicts"}
    assert 'value="contradicts" data-key="c" required checked' in bob.get(url).content.decode()


def test_another_annotators_verification_is_out_of_reach(
    client: Client, users: dict[str, User], alpha_verification: list[Item]
) -> None:
    client.force_login(users["dave"])
    assert client.get(reverse("assignment", args=[mine(users["bob"]).pk])).status_code == 404
    client.force_login(users["carol"])
    assert client.get(reverse("assignment", args=[mine(users["bob"]).pk])).status_code == 404
