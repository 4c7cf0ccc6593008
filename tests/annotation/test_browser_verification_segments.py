from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.models import Assignment, Item, Project
from tests.browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def submit_and_wait(page) -> None:  # type: ignore[no-untyped-def]
    url = page.url
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda u: u != url)


def test_one_verification_and_one_segment_item_from_the_keyboard(
    page,
    alpha: Project,
    alpha_verification: list[Item],
    alpha_segments: list[Item],
    users: dict[str, User],
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    bob = users["bob"]
    login(page, "bob")

    verification = Assignment.objects.filter(annotator=bob, item__kind=Item.VERIFICATION).first()
    assert verification is not None
    page.goto(f"/a/{verification.pk}/")
    page.wait_for_selector("#answer-form")
    for key in ["s", "j", "c", "j", "i", "k", "k", "s"]:  # result 1 ends as supports
        page.keyboard.press(key)
    page.keyboard.press("4")  # inconclusive: conflicting evidence
    submit_and_wait(page)
    verification.refresh_from_db()
    assert verification.status == Assignment.SUBMITTED
    assert verification.answers_dict() == {
        ("evidence:1", "stance"): "supports",
        ("evidence:2", "stance"): "contradicts",
        ("evidence:3", "stance"): "inconclusive",
        ("item", "label"): "inconclusive-conflicting",
    }

    segment = Assignment.objects.filter(annotator=bob, item__kind=Item.SEGMENT).first()
    assert segment is not None
    page.goto(f"/a/{segment.pk}/")
    page.wait_for_selector("#answer-form")
    page.keyboard.press("t")  # segment 1 correct
    page.keyboard.press("j")
    page.keyboard.press("f")  # segment 2 incorrect
    page.keyboard.press("1")  # knowledge error
    page.keyboard.press("r")
    page.keyboard.type("The number of pictures is invented.")
    page.keyboard.press("Escape")
    page.keyboard.press("l")
    page.keyboard.type("https://en.wikipedia.org/wiki/Person_0")
    page.keyboard.press("Escape")
    page.keyboard.press("a")  # keep
    submit_and_wait(page)
    segment.refresh_from_db()
    assert segment.status == Assignment.SUBMITTED
    assert segment.answers_dict() == {
        ("segment:0", "correct"): "true",
        ("segment:1", "correct"): "false",
        ("segment:1", "error_type"): "knowledge error",
        ("segment:1", "reason"): "The number of pictures is invented.",
        ("segment:1", "links"): "https://en.wikipedia.org/wiki/Person_0",
        ("item", "keep"): "keep",
    }
