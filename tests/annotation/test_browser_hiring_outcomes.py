"""Issue 25: a hired worker's two ends in a real browser, at a 390 px phone and a
1366 px laptop: join -> training failed -> the screened-out code, and join -> training
passed -> the real item -> the completion code. No page scrolls sideways."""

from __future__ import annotations

import pytest

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.models import Assignment, Item, Project
from tests.annotation.test_browser_hiring import _answer
from tests.browser import autofocused

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(390, 844), (1366, 900)]


def _fits(page, problems: list[str]) -> None:  # type: ignore[no-untyped-def]
    wide = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    if wide > 0:
        problems.append(f"{page.url} scrolls sideways by {wide}px")


def _join_and_train(page, invite: Invite, worker: str, side: str, problems: list[str]):  # type: ignore[no-untyped-def]
    """Join through the link, acknowledge, answer the training item with list `side`;
    returns the Hire, on the feedback page."""
    page.goto(f"/join/{invite.key}/?PROLIFIC_PID={worker}")
    autofocused(page)
    _fits(page, problems)
    page.keyboard.press("Enter")  # Start
    page.wait_for_selector("#personal-url")
    _fits(page, problems)
    page.click("#next")  # Begin
    page.wait_for_url("**/instructions/")
    autofocused(page)
    page.keyboard.press("Enter")  # acknowledge
    hire = Hire.objects.get(worker_id=worker)
    training = Assignment.objects.get(
        annotator=hire.membership.user, item__quality__role=hiring.TRAINING
    )
    page.wait_for_url(f"**/a/{training.pk}/")
    _fits(page, problems)
    _answer(page, hiring.presented(training, "choice", side), "The list names the facts.")
    page.wait_for_selector("#feedback")
    _fits(page, problems)
    return hire


@pytest.mark.parametrize("size", SIZES, ids=["390px", "1366px"])
def test_failed_training_ends_with_the_screened_out_code(
    page, alpha: Project, alpha_items: list[Item], size: tuple[int, int]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page.set_viewport_size({"width": size[0], "height": size[1]})
    hiring.mark(alpha_items[0], hiring.TRAINING, {"item.choice": "a", "item.hard": "no"}, "")
    invite = Invite.objects.create(
        project=alpha, items_per_person=1, completion_code="DONE-7", screened_out_code="OUT-3"
    )
    problems: list[str] = []
    hire = _join_and_train(page, invite, "w-fail", "b", problems)
    assert "✗ wrong" in page.inner_text("#feedback")
    page.click("#next")  # Continue
    page.wait_for_selector("#screened-out-code")
    _fits(page, problems)
    assert page.inner_text("#screened-out-code") == "OUT-3"
    assert "DONE-7" not in page.content()
    assert hire.membership.pseudonym in page.inner_text("header")
    assert problems == []


@pytest.mark.parametrize("size", SIZES, ids=["390px", "1366px"])
def test_passed_training_then_the_real_item_ends_with_the_completion_code(
    page, alpha: Project, alpha_items: list[Item], size: tuple[int, int]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page.set_viewport_size({"width": size[0], "height": size[1]})
    hiring.mark(alpha_items[0], hiring.TRAINING, {"item.choice": "a", "item.hard": "no"}, "")
    invite = Invite.objects.create(
        project=alpha, items_per_person=1, completion_code="DONE-7", screened_out_code="OUT-3"
    )
    problems: list[str] = []
    hire = _join_and_train(page, invite, "w-pass", "a", problems)
    assert "✗ wrong" not in page.inner_text("#feedback")
    page.click("#next")  # Continue
    real = Assignment.objects.get(annotator=hire.membership.user, item__quality__isnull=True)
    page.wait_for_url(f"**/a/{real.pk}/")
    _fits(page, problems)
    _answer(page, "1", "The first list covers more of the facts.")
    page.wait_for_selector("#completion-code")
    _fits(page, problems)
    assert page.inner_text("#completion-code") == "DONE-7"
    assert "OUT-3" not in page.content()
    assert problems == []
