"""Drafts that cannot lose keystrokes (issue 29, point 1): a copy in the browser, the
newer of the two restored on load, two tabs told instead of overwriting each other, the
copy forgotten on submit and on logout. At a phone and a laptop size, axe-core clean."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User

from annotation.models import Assignment, Item, Project
from tests.browser import login

from .test_browser_layout import SIZES, serious

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT = "Every character typed before the reload, up to this last one!"


def first(users: dict[str, User]) -> Assignment:
    a = Assignment.objects.filter(annotator=users["bob"], item__kind=Item.COMPARISON).first()
    assert a is not None
    return a


def open_item(page, a: Assignment) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page.goto(f"/a/{a.pk}/")
    page.wait_for_selector("#answer-form")
    page.wait_for_load_state("load")  # deferred scripts have run: keys work


def stored(a: Assignment, text: str) -> None:
    """Wait until the server holds `text` as the justification (a state, not a time)."""
    deadline = time.monotonic() + 60
    while a.answers_dict().get(("item", "justification")) != text:
        assert time.monotonic() < deadline, f"the server never held {text!r}"
        time.sleep(0.05)


@pytest.mark.parametrize("delay_ms", [0, 100, 500])
@pytest.mark.parametrize("width,height", SIZES)
def test_a_reload_right_after_typing_keeps_every_character(
    page,
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    delay_ms: int,
    width: int,
    height: int,
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    a = first(users)
    page.set_viewport_size({"width": width, "height": height})
    login(page, "bob")
    open_item(page, a)
    page.keyboard.press("1")
    page.keyboard.press("w")
    page.keyboard.type(TEXT)
    if delay_ms:
        page.wait_for_timeout(delay_ms)  # the delay under test, not a wait for a state
    page.reload()
    page.wait_for_selector("#answer-form")
    page.wait_for_load_state("load")
    assert page.input_value("#justification") == TEXT
    assert page.is_checked("input[name=choice][value='1']")
    assert "Draft restored." in page.inner_text("#draft-status")
    stored(a, TEXT)  # and the server catches up
    assert serious(page) == []


@pytest.mark.parametrize("width,height", SIZES)
def test_two_tabs_on_one_item_are_told_and_do_not_overwrite_silently(
    page,
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    width: int,
    height: int,
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    a = first(users)
    page.set_viewport_size({"width": width, "height": height})
    login(page, "bob")
    open_item(page, a)
    older = page.context.new_page()  # the same browser: the same localStorage
    older.set_viewport_size({"width": width, "height": height})
    open_item(older, a)

    page.keyboard.press("w")
    page.keyboard.type("Typed in the newer tab.")
    older.wait_for_selector("#draft-other:not([hidden])")  # told at once by the browser
    assert "another tab" in older.inner_text("#draft-other")
    stored(a, "Typed in the newer tab.")

    # The older tab types on: its draft is refused, and it says so.
    older.click("#justification")
    older.keyboard.type("Stale.")
    older.wait_for_selector("#draft-status:has-text('NOT saved')")
    assert "another tab" in older.inner_text("#draft-status")
    assert a.answers_dict()[("item", "justification")] == "Typed in the newer tab."
    assert serious(older) == []  # the warnings too

    # Reloading the older tab continues from the newest text typed in this browser.
    older.reload()
    older.wait_for_load_state("load")
    assert older.input_value("#justification") == "Stale."
    stored(a, "Stale.")


def test_the_browser_copy_is_forgotten_on_submit_and_on_logout(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    a = first(users)
    key = f"draft:{a.pk}"
    login(page, "bob")
    open_item(page, a)
    page.keyboard.press("1")
    page.keyboard.press("n")
    page.keyboard.press("w")
    page.keyboard.type("List 1 covers more of the verifiable facts.")
    assert page.evaluate(f"localStorage.getItem('{key}')") is not None
    url = page.url
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda u: u != url)
    assert page.evaluate(f"localStorage.getItem('{key}')") is None
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED

    other = Assignment.objects.filter(annotator=users["bob"]).exclude(pk=a.pk).first()
    assert other is not None
    open_item(page, other)
    page.keyboard.press("w")
    page.keyboard.type("Left on a shared machine.")
    assert page.evaluate(f"localStorage.getItem('draft:{other.pk}')") is not None
    with page.expect_navigation():
        page.click("text=Log out")
    assert page.is_hidden("text=Log out")
    assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('draft:'))") == []
