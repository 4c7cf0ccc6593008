from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.models import Assignment, Item
from tests.annotation.test_browser_verification_segments import submit_and_wait
from tests.browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_atomic_facts_are_labelled_from_the_keyboard(
    page, alpha_atomic: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    bob = users["bob"]
    login(page, "bob")
    a = (
        Assignment.objects.filter(annotator=bob, item__kind=Item.ATOMIC)
        .order_by("position")
        .first()
    )
    assert a is not None
    page.goto(f"/a/{a.pk}/")
    page.wait_for_selector("#answer-form")
    assert page.locator("aside.keys").get_by_text("next / previous fact").is_visible()
    page.keyboard.press("n")  # fact 1 (active first): not supported
    page.keyboard.press("j")
    page.keyboard.press("s")  # fact 2 supported
    page.keyboard.press("j")
    page.keyboard.press("i")  # fact 3 irrelevant
    page.keyboard.press("k")
    page.keyboard.press("k")
    page.keyboard.press("s")  # back on fact 1: supported after all
    # every change saves a draft: wait until the stored draft holds all three, then a
    # reload restores it
    draft = {
        ("fact:0", "label"): "supported",
        ("fact:1", "label"): "supported",
        ("fact:2", "label"): "irrelevant",
    }
    for _ in range(600):  # a bound on polling the state, not a timing assumption
        if a.answers_dict() == draft:
            break
        page.wait_for_timeout(50)
    assert a.answers_dict() == draft
    page.reload()
    page.wait_for_selector("#answer-form")
    assert page.locator('input[name="label__fact:2"][value="irrelevant"]').is_checked()
    submit_and_wait(page)
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    assert a.answers_dict() == draft
