"""Issue 43 in the browser: defect 13 (keys for Skip and the atomic facts' Why? box) and
defect 6 (a stale tab's drafts stay refused)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.models import Assignment, Item, Project
from tests.browser import login

from .test_browser_drafts import open_item, stored

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_w_opens_the_active_facts_why_box_and_q_the_skip_reason(
    page, alpha_atomic: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    a = Assignment.objects.filter(annotator=users["bob"], item__kind=Item.ATOMIC).first()
    assert a is not None
    login(page, "bob")
    page.goto(f"/a/{a.pk}/")
    page.wait_for_selector("#answer-form")
    page.wait_for_load_state("load")  # deferred scripts have run: keys work
    page.keyboard.press("j")  # the second fact
    page.keyboard.press("w")
    focused = page.evaluate(
        """() => { const t = document.activeElement;
        const active = document.querySelector('[data-key-scope].active');
        const scope = t.closest('[data-key-scope]');
        return [t.tagName, t.closest('details').open, scope === active]; }"""
    )
    assert focused == ["TEXTAREA", True, True]
    page.keyboard.type("Because")
    page.keyboard.press("Escape")
    page.keyboard.press("q")
    assert page.evaluate("document.activeElement.id") == "skip-reason"
    assert page.evaluate("document.getElementById('skip').open")


def test_a_stale_tab_stays_refused_after_its_first_refusal(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Defect 6: after its first refusal, `edited()` took the other tab's sequence number
    as its base, and the stale tab's next draft overwrote the newer tab's on the server."""
    a = Assignment.objects.filter(annotator=users["bob"], item__kind=Item.COMPARISON).first()
    assert a is not None
    login(page, "bob")
    open_item(page, a)
    older = page.context.new_page()  # the same browser: the same localStorage
    open_item(older, a)
    page.keyboard.press("w")
    page.keyboard.type("Typed in the newer tab.")
    older.wait_for_selector("#draft-other:not([hidden])")
    stored(a, "Typed in the newer tab.")
    for text in ("Stale.", " Still stale."):
        older.evaluate("document.getElementById('draft-status').textContent = ''")
        older.click("#justification")
        older.keyboard.type(text)
        older.wait_for_selector("#draft-status:has-text('NOT saved')")
        assert a.answers_dict()[("item", "justification")] == "Typed in the newer tab."
