from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.models import Assignment, Item, Project
from tests.browser import autofocused, login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_annotator_completes_two_comparisons_from_the_keyboard(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    bob = users["bob"]
    alpha.memberships.filter(user=bob).update(acknowledged_version=0)

    login(page, "bob")
    page.goto(f"/p/{alpha.pk}/queue/")
    page.keyboard.press("Enter")  # "Next item"
    page.wait_for_url("**/instructions/")
    autofocused(page)
    page.keyboard.press("Enter")  # the acknowledge button has the focus
    for n, (choice, hard) in enumerate([("1", "n"), ("2", "y")], start=1):
        # The form appears while the page is still parsing; keys work once its deferred
        # scripts have run, which the load event marks.
        page.wait_for_selector("#answer-form")
        page.wait_for_load_state("load")
        url = page.url
        page.keyboard.press(choice)
        page.keyboard.press(hard)
        page.keyboard.press("w")
        page.keyboard.type(f"List {choice} covers more of the verifiable facts in item {n}.")
        page.keyboard.press("Control+Enter")
        page.wait_for_url(lambda u, url=url: u != url)

    done = Assignment.objects.filter(annotator=bob, status=Assignment.SUBMITTED).order_by(
        "submitted_at"
    )
    assert done.count() == 2
    answers = [a.answers_dict() for a in done]
    assert [(x[("item", "choice")], x[("item", "hard")]) for x in answers] == [
        ("1", "no"),
        ("2", "yes"),
    ]
    assert (
        answers[1][("item", "justification")]
        == "List 2 covers more of the verifiable facts in item 2."
    )
    assert all(a.guideline_version == alpha.instructions_version for a in done)


def test_a_submit_is_not_lost_behind_a_draft_that_is_still_saving(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """A draft save that is slow to answer (a busy server) must not swallow the submit
    pressed meanwhile, even when another draft save is triggered after it."""
    bob = users["bob"]
    assignment = Assignment.objects.filter(annotator=bob).order_by("pk").first()
    assert assignment is not None
    login(page, "bob")

    held = []

    def hold_first_draft(route) -> None:  # type: ignore[no-untyped-def]
        if "action=draft" in (route.request.post_data or "") and not held:
            held.append(route)  # answered below, once the submit has been pressed
        else:
            route.continue_()

    page.route(f"**/a/{assignment.pk}/", hold_first_draft)
    page.goto(f"/a/{assignment.pk}/")
    url = page.url
    with page.expect_request(lambda r: "action=draft" in (r.post_data or "")):
        page.keyboard.press("1")  # a change: the first draft save starts and hangs
    page.keyboard.press("n")
    page.keyboard.press("w")
    page.keyboard.type("List 1 has more.")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    page.dispatch_event("#answer-form", "change")  # one more draft save after the submit
    assert len(held) == 1
    held[0].continue_()
    page.wait_for_url(lambda u: u != url)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.SUBMITTED
    assert assignment.answers_dict()[("item", "choice")] == "1"
