"""Issue 43: the invite table's Copy button copies the study URL from the keyboard (Tab
to it from the URL field, Enter), and says so (defect 9); the manage pages, the hiring
page and the deleted projects fit both widths and pass axe."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation import hiring, manage
from annotation.hiring import Invite
from annotation.models import Item, Membership, Project
from tests.browser import login

from .test_browser_demo import check
from .test_browser_layout import SIZES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_study_url_is_copied_from_the_keyboard(
    page, alpha: Project, users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]
    invite = Invite.objects.create(project=alpha, market="prolific", items_per_person=1)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    login(page, "alice")
    page.goto(f"/p/{alpha.pk}/hiring/")
    page.wait_for_load_state("load")  # copy.js is deferred
    field = f"#invite-url-{invite.pk}"
    url = page.input_value(field)
    assert url.endswith(
        "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert url == hiring.study_url(invite, url.split("?")[0])
    page.focus(field)
    page.keyboard.press("Tab")  # the Copy button is next
    assert page.evaluate("document.activeElement.dataset.copy") == f"invite-url-{invite.pk}"
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#invite-url-{invite.pk}-copied:has-text('Copied.')")
    assert page.evaluate("navigator.clipboard.readText()") == url


@pytest.mark.parametrize("width,height", SIZES)
def test_the_manage_pages_fit_and_pass_axe(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User], width: int, height: int
) -> None:  # type: ignore[no-untyped-def]
    manage.delete_items(alpha, [alpha_items[3].pk], users["alice"])
    carol = Membership.objects.get(project=alpha, user=users["carol"])
    manage.remove_member(carol, users["alice"])
    Invite.objects.create(project=alpha, market="prolific", items_per_person=2, note="pilot")
    page.set_viewport_size({"width": width, "height": height})
    login(page, "alice")
    problems: list[str] = []
    p = alpha.pk
    for url in (
        f"/p/{p}/manage/",
        f"/p/{p}/manage/delete/?items={alpha_items[0].pk},{alpha_items[1].pk}",
        f"/p/{p}/manage/delete/?whole=1",
        f"/p/{p}/hiring/",
        "/deleted/",
    ):
        check(page, url, problems, axe=True)
    assert problems == [], "\n".join(problems)
