from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Item
from tests.conftest import SYSTEM_A

GOOD = {
    "correct__segment:0": "true",
    "correct__segment:1": "false",
    "error_type__segment:1": "knowledge error",
    "reason__segment:1": "The count of pictures is made up.",
    "links__segment:1": "https://en.wikipedia.org/wiki/Person_0\n https://example.org/catalogue ",
    "keep": "keep",
}


@pytest.fixture
def bob(client: Client, users: dict[str, User], alpha_segments: list[Item]) -> Client:
    client.force_login(users["bob"])
    return client


def mine(user: User) -> Assignment:
    a = Assignment.objects.filter(annotator=user, item__kind=Item.SEGMENT).first()
    assert a is not None
    return a


def test_the_page_shows_the_segments(bob: Client, users: dict[str, User]) -> None:
    a = mine(users["bob"])
    body = bob.get(reverse("assignment", args=[a.pk])).content.decode()
    for seg in a.item.document.segments.all():
        assert seg.text in body
    for error_type in a.item.project.error_types:
        assert error_type in body
    assert SYSTEM_A not in body


def test_a_valid_answer_is_stored_per_segment(bob: Client, users: dict[str, User]) -> None:
    a = mine(users["bob"])
    bob.post(reverse("assignment", args=[a.pk]), GOOD)
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    assert a.answers_dict() == {
        ("segment:0", "correct"): "true",
        ("segment:1", "correct"): "false",
        ("segment:1", "error_type"): "knowledge error",
        ("segment:1", "reason"): "The count of pictures is made up.",
        (
            "segment:1",
            "links",
        ): "https://en.wikipedia.org/wiki/Person_0\nhttps://example.org/catalogue",
        ("item", "keep"): "keep",
    }


def test_details_of_a_correct_segment_are_dropped(bob: Client, users: dict[str, User]) -> None:
    a = mine(users["bob"])
    bob.post(reverse("assignment", args=[a.pk]), {**GOOD, "reason__segment:0": "leftover text"})
    a.refresh_from_db()
    assert ("segment:0", "reason") not in a.answers_dict()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"error_type__segment:1": ""}, "Segment 2 is incorrect: choose an error type."),
        ({"reason__segment:1": "  "}, "Segment 2 is incorrect: say why."),
        ({"links__segment:1": ""}, "Segment 2 is incorrect: give at least one reference link."),
        ({"links__segment:1": "not-a-url"}, "Segment 2: “not-a-url” is not a valid http(s) link."),
        ({"links__segment:1": "ftp://example.org/x"}, "is not a valid http(s) link"),
        ({"error_type__segment:1": "typo"}, "Select a valid choice."),
        ({"keep": ""}, "This field is required."),
    ],
)
def test_an_incorrect_segment_needs_type_reason_and_link(
    bob: Client, users: dict[str, User], change: dict[str, str], message: str
) -> None:
    a = mine(users["bob"])
    response = bob.post(
        reverse("assignment", args=[a.pk]), {**GOOD, **change}, headers={"HX-Request": "true"}
    )
    assert message in response.content.decode()
    a.refresh_from_db()
    assert a.status != Assignment.SUBMITTED and not a.answers.exists()


def test_error_types_are_a_project_setting(bob: Client, users: dict[str, User]) -> None:
    a = mine(users["bob"])
    project = a.item.project
    project.error_types = ["fabrication", "outdated"]
    project.save()
    assert "outdated" in bob.get(reverse("assignment", args=[a.pk])).content.decode()
    response = bob.post(reverse("assignment", args=[a.pk]), GOOD, headers={"HX-Request": "true"})
    assert "Select a valid choice." in response.content.decode()
    bob.post(reverse("assignment", args=[a.pk]), {**GOOD, "error_type__segment:1": "fabrication"})
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
