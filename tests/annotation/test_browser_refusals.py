"""Item pages under real use (issue 13): active time, refusals in view and focused,
drafts that survive a reload. Each test fails on the pages before the change."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from annotation.models import Assignment, Item, Project
from tests.browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ACTIVE = "document.activeElement && document.activeElement.id"


def open_item(page, a: Assignment) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    page.goto(f"/a/{a.pk}/")
    page.wait_for_selector("#answer-form")
    page.wait_for_load_state("load")  # deferred scripts have run: keys work


def in_viewport(page, selector: str) -> bool:  # type: ignore[no-untyped-def]  # noqa: F811
    return page.eval_on_selector(
        selector,
        """n => { const r = n.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0; }""",
    )


def test_active_time_is_what_the_page_measured(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Defect 1: reopening an item added the time since it was last touched."""
    bob = users["bob"]
    a = Assignment.objects.filter(annotator=bob).order_by("position", "pk").first()
    assert a is not None
    # The item was last worked on 50 s ago (then the annotator was on other items).
    Assignment.objects.filter(pk=a.pk).update(
        last_activity_at=timezone.now() - timedelta(seconds=50),
        started_at=timezone.now() - timedelta(seconds=55),
    )
    login(page, "bob")
    t0 = time.monotonic()
    open_item(page, a)
    page.keyboard.press("1")
    page.keyboard.press("n")
    page.keyboard.press("w")
    page.keyboard.type("List 1 covers more.")
    url = page.url
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda u: u != url)
    wall = time.monotonic() - t0
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    assert 0 < a.active_seconds <= wall


def test_a_refused_skip_keeps_focus_in_the_reason_box(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Defect 2: after "Say why you skip", the reason typed was read as shortcuts."""
    a = Assignment.objects.filter(annotator=users["bob"]).order_by("position", "pk").first()
    assert a is not None
    login(page, "bob")
    open_item(page, a)
    page.focus("details.skip summary")
    page.keyboard.press("Enter")  # opens the skip box
    page.keyboard.press("Tab")
    assert page.evaluate(ACTIVE) == "skip-reason"
    page.keyboard.press("Enter")  # no reason
    page.wait_for_selector("#skip-error:not([hidden])")
    assert "Say why" in page.inner_text("#skip-error")
    assert page.evaluate(ACTIVE) == "skip-reason"
    assert page.eval_on_selector("#skip", "n => n.open")
    page.keyboard.type("nj unreadable")
    assert page.input_value("#skip-reason") == "nj unreadable"
    assert page.input_value("#justification") == ""
    assert not page.is_checked("input[name=hard][value=no]")
    assert "Say why" in page.inner_text("#announce")
    url = page.url
    page.keyboard.press("Enter")
    page.wait_for_url(lambda u: u != url)
    a.refresh_from_db()
    assert (a.status, a.skip_reason) == (Assignment.SKIPPED, "nj unreadable")


def test_validation_errors_focus_the_field_and_w_types_after_the_text(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Defect 4: the justification key put the cursor before an existing justification;
    "Draft restored."
    beside validation errors and focus on no field."""
    a = Assignment.objects.filter(annotator=users["bob"]).order_by("position", "pk").first()
    assert a is not None
    a.save_draft(
        {("item", "justification"): "Existing text."}, guideline_version=alpha.instructions_version
    )
    login(page, "bob")
    open_item(page, a)
    assert "Draft restored." in page.inner_text("#draft-status")
    page.keyboard.press("w")
    page.keyboard.type(" More.")
    assert page.input_value("#justification") == "Existing text. More."
    page.keyboard.press("Escape")
    page.keyboard.press("2")  # "hard" left unanswered
    # The browser's own check would stop an incomplete form; the server's refusal is tested.
    page.eval_on_selector("#answer-form", "f => f.noValidate = true")
    with page.expect_response(
        lambda r: (
            r.url.endswith(f"/a/{a.pk}/")
            and r.request.method == "POST"
            and "action=draft" not in (r.request.post_data or "")
        )
    ):
        page.keyboard.press("Control+Enter")
    page.wait_for_selector("#answer-form p.error")
    # The error is swapped in first; focus and announcement follow when htmx settles.
    page.wait_for_function("() => document.activeElement.name === 'hard'")
    assert "Draft restored." not in page.inner_text("#answer-form")
    assert in_viewport(page, "#answer-form p.error")
    page.keyboard.press("y")
    assert page.is_checked("input[name=hard][value=yes]")


def test_server_refusals_are_shown_focused_and_answers_kept(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Defect 10: a 500 ("database is locked") left "Draft saved." and nothing else; a
    second tab's submit of a submitted item was dropped without a word."""
    a = Assignment.objects.filter(annotator=users["bob"]).order_by("position", "pk").first()
    assert a is not None
    login(page, "bob")

    def busy(route) -> None:  # type: ignore[no-untyped-def]
        route.fulfill(status=500, body="database is locked")

    page.route(
        f"**/a/{a.pk}/",
        lambda route: busy(route) if route.request.method == "POST" else route.continue_(),
    )
    open_item(page, a)
    page.keyboard.press("1")
    page.wait_for_selector("#draft-status:has-text('NOT saved')")
    page.keyboard.press("n")
    page.keyboard.press("w")
    page.keyboard.type("List 1 covers more.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#submit-error:not([hidden])")
    assert "500" in page.inner_text("#submit-error")
    assert page.evaluate(ACTIVE) == "submit-error"
    assert in_viewport(page, "#submit-error")
    assert "Draft saved." not in page.inner_text("#answer-form")
    assert page.input_value("#justification") == "List 1 covers more."
    page.unroute(f"**/a/{a.pk}/")

    # Another tab submits first; this tab's submit is refused, its answers stay.
    a.submit(
        {("item", "choice"): "2", ("item", "hard"): "yes", ("item", "justification"): "Other tab."},
        guideline_version=alpha.instructions_version,
    )
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#answer-form .errors:has-text('already submitted')")
    # The error is swapped in first; focus and announcement follow when htmx settles.
    page.wait_for_function("() => document.activeElement.classList.contains('errors')")
    assert page.evaluate("document.activeElement.textContent").count("already submitted") == 1
    assert page.is_hidden("#submit-error")
    assert page.input_value("#justification") == "List 1 covers more."
    a.refresh_from_db()
    assert a.answers_dict()[("item", "justification")] == "Other tab."


def test_a_reload_keeps_the_last_keystrokes(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Defect 6: typing less than a second before a reload was lost."""
    a = Assignment.objects.filter(annotator=users["bob"]).order_by("position", "pk").first()
    assert a is not None
    login(page, "bob")
    open_item(page, a)
    page.keyboard.press("w")
    page.keyboard.type("Typed just before the reload.")
    page.reload()
    page.wait_for_selector("#answer-form")
    deadline = time.monotonic() + 60  # waits for the stored state, not for a delay
    while a.answers_dict().get(("item", "justification")) != "Typed just before the reload.":
        assert time.monotonic() < deadline, "the draft was not saved when the page was left"
        time.sleep(0.1)


def test_table5_check_is_in_view_and_the_active_result_stays(
    page, alpha: Project, alpha_verification: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Defect 3: the Table 5 check appeared above the viewport and no result stayed active."""
    a = Assignment.objects.filter(annotator=users["bob"], item__kind=Item.VERIFICATION).first()
    assert a is not None
    login(page, "bob")
    page.set_viewport_size({"width": 1366, "height": 900})
    open_item(page, a)
    for key in ["s", "j", "s", "j", "s"]:  # all three support
        page.keyboard.press(key)
    page.keyboard.press("3")  # "not enough information" while results support: a Table 5 hint
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#answer-form .errors")
    # The error is swapped in first; focus and announcement follow when htmx settles.
    page.wait_for_function("() => document.activeElement.classList.contains('errors')")
    assert "check your label" in page.inner_text("#answer-form .errors")
    assert in_viewport(page, "#answer-form .errors")
    assert page.get_attribute("[data-key-scope].active", "id") == "result-3"
    page.keyboard.press("c")  # acts on result 3
    assert page.is_checked("#result-3 input[value=contradicts]")
    page.keyboard.press("k")
    assert page.get_attribute("[data-key-scope].active", "id") == "result-2"


def test_segment_errors_are_in_view_and_the_segment_stays_active(
    page, alpha: Project, alpha_segments: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Defect 3 on segment pages: the error appeared out of view, no segment stayed active."""
    a = Assignment.objects.filter(annotator=users["bob"], item__kind=Item.SEGMENT).first()
    assert a is not None
    login(page, "bob")
    page.set_viewport_size({"width": 390, "height": 844})
    open_item(page, a)
    second = "#" + page.eval_on_selector_all("[data-key-scope]", "ns => ns.map(n => n.id)")[1]
    page.keyboard.press("t")  # segment 1 correct
    page.keyboard.press("j")
    page.keyboard.press("f")  # segment 2 incorrect, with no error type, reason or link
    page.keyboard.press("a")
    page.eval_on_selector("#answer-form", "f => f.noValidate = true")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(second + " p.error")
    # The error is swapped in first; focus and announcement follow when htmx settles.
    page.wait_for_function(
        "() => document.getElementById('announce').textContent.includes('choose an error type')"
    )
    assert in_viewport(page, second + " p.error")
    assert "#" + page.get_attribute("[data-key-scope].active", "id") == second
    assert page.evaluate(f"document.activeElement.closest('{second}') !== null")
    page.keyboard.press("1")  # an error type of the active segment 2
    assert page.is_checked(second + " .if-incorrect input[data-key='1']")
    page.keyboard.press("r")
    page.keyboard.type("Invented.")
    assert page.input_value(second + " textarea[data-key=r]") == "Invented."
