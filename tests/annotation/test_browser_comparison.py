from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.models import Assignment, Item, Project
from tests.browser import page  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_annotator_completes_two_comparisons_from_the_keyboard(page, alpha: Project, alpha_items: list[Item], users: dict[str, User]) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    bob = users["bob"]
    alpha.memberships.filter(user=bob).update(acknowledged_version=0)

    page.goto("/login/")
    page.keyboard.type("bob")
    page.keyboard.press("Tab")
    page.keyboard.type("pw-bob")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Your projects")  # logged in
    page.goto(f"/p/{alpha.pk}/queue/")
    page.keyboard.press("Enter")  # "Next item"
    page.wait_for_url("**/instructions/")
    page.keyboard.press("Enter")  # the acknowledge button has the focus
    for n, (choice, hard) in enumerate([("1", "n"), ("2", "y")], start=1):
        page.wait_for_selector("#answer-form")
        url = page.url
        page.keyboard.press(choice)
        page.keyboard.press(hard)
        page.keyboard.press("j")
        page.keyboard.type(f"List {choice} covers more of the verifiable facts in item {n}.")
        page.keyboard.press("Control+Enter")
        page.wait_for_url(lambda u, url=url: u != url)

    done = Assignment.objects.filter(annotator=bob, status=Assignment.SUBMITTED).order_by("submitted_at")
    assert done.count() == 2
    answers = [a.answers_dict() for a in done]
    assert [(x[("item", "choice")], x[("item", "hard")]) for x in answers] == [("1", "no"), ("2", "yes")]
    assert answers[1][("item", "justification")] == "List 2 covers more of the verifiable facts in item 2."
    assert all(a.guideline_version == alpha.instructions_version for a in done)
