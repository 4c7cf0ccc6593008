"""Every annotator page satisfies the Content-Security-Policy in a real browser: no
violation is reported while the pages load, keys are pressed and htmx saves a draft."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.models import Assignment, Item, Project
from tests.browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WATCH = """
window.__csp = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));
"""


def test_no_csp_violation_on_any_annotator_page(  # type: ignore[no-untyped-def]
    page,
    alpha: Project,
    alpha_items: list[Item],
    alpha_verification: list[Item],  # noqa: F811
    alpha_segments: list[Item],
    users: dict[str, User],
) -> None:
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    page.add_init_script(WATCH)
    login(page, "bob")
    header = page.request.get("/").headers.get("content-security-policy", "")
    assert "script-src 'self'" in header
    urls = ["/", f"/p/{alpha.pk}/queue/", f"/p/{alpha.pk}/instructions/"]
    mine = Assignment.objects.filter(annotator=users["bob"]).select_related("item")
    for kind in (Item.COMPARISON, Item.VERIFICATION, Item.SEGMENT):
        urls.append(f"/a/{mine.filter(item__kind=kind).first().pk}/")  # type: ignore[union-attr]
    seen = []
    for url in urls:
        page.goto(url)
        page.wait_for_load_state("load")
        if url.startswith("/a/"):
            page.wait_for_selector("#answer-form")
            page.locator("#answer-form input[type=radio]").first.check()
            page.wait_for_selector("#draft-status:has-text('Draft saved.')")  # htmx ran
        seen += page.evaluate("window.__csp")
    assert seen == []
    assert not [m for m in console if "Content Security Policy" in m or "Refused to" in m]
    # the progress bar got its width from the static script (no style attribute)
    page.goto(f"/p/{alpha.pk}/queue/")
    width = page.evaluate("getComputedStyle(document.querySelector('.bar')).width")
    assert width and width != "auto"


def test_the_report_and_the_api_docs_work_under_their_csp(  # type: ignore[no-untyped-def]
    page,
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],  # noqa: F811
) -> None:
    page.add_init_script(WATCH)
    login(page, "alice")
    seen = []
    page.goto(f"/p/{alpha.pk}/report/?bootstrap=5")
    page.wait_for_selector("h1")
    seen += page.evaluate("window.__csp")
    page.goto("/api/docs/")
    page.wait_for_selector("text=Factuality annotation API")  # Swagger UI rendered the schema
    seen += page.evaluate("window.__csp")
    page.goto("/api/redoc/")
    page.wait_for_selector("text=Factuality annotation API")  # so did Redoc
    seen += page.evaluate("window.__csp")
    # Redoc's CDN logo is refused (no CDN); no link to Google Fonts is even made
    # (templates/drf_spectacular/redoc.html); nothing inline, no eval, nothing of our own
    external = ("https://cdn.redoc.ly/",)
    assert [v for v in seen if not v.split(" ", 1)[1].startswith(external)] == []
