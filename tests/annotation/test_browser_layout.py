"""Every annotator page fits a 390 px phone and a 1366 px laptop without sideways
scrolling, and axe-core finds no violation of any impact on the annotator and
researcher pages (issue 13: defect 5, accessibility). One browser per test."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.models import Assignment, Item, Project
from tests.browser import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(390, 844), (1366, 900)]
LONG = "https://example.org/" + "a-very-long-path-segment-without-spaces-" * 6


def serious(page) -> list[str]:  # type: ignore[no-untyped-def]  # noqa: F811
    """axe-core's violations of any impact on the page (its bundled, pinned version);
    issue 43: minor and moderate ones count too."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
    ]


def annotator_urls(project: Project, user: User) -> list[str]:
    urls = [reverse("queue", args=[project.pk]), reverse("instructions", args=[project.pk])]
    for kind in (Item.COMPARISON, Item.VERIFICATION, Item.SEGMENT, Item.ATOMIC):
        a = Assignment.objects.filter(annotator=user, item__kind=kind).first()
        assert a is not None, kind
        urls.append(reverse("assignment", args=[a.pk]))
    return urls


@pytest.fixture
def every_kind(
    alpha: Project,
    alpha_items: list[Item],
    alpha_verification: list[Item],
    alpha_segments: list[Item],
    alpha_atomic: list[Item],
) -> Project:
    # a search result with a long unbroken link and title, as real results have
    from annotation.models import Evidence

    Evidence.objects.filter(claim=alpha_verification[0].claim).update(link=LONG, title=LONG)
    return alpha


def test_annotator_pages_fit_both_widths_and_pass_axe(
    page, every_kind: Project, users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    login(page, "bob")
    page.context.set_extra_http_headers({})
    problems = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        for url in annotator_urls(every_kind, users["bob"]):
            page.goto(url)
            page.wait_for_load_state("load")
            wide = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            if wide > 0:
                problems.append(f"{url} at {width}px scrolls sideways by {wide}px")
            if width == 390:
                problems += [f"{url}: {v}" for v in serious(page)]
    assert problems == []


def test_the_verification_page_keeps_claim_and_label_row_in_view(
    page, every_kind: Project, users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    a = Assignment.objects.filter(annotator=users["bob"], item__kind=Item.VERIFICATION).first()
    assert a is not None
    login(page, "bob")
    page.set_viewport_size({"width": 1366, "height": 500})
    page.goto(f"/a/{a.pk}/")
    page.wait_for_load_state("load")
    for key in ["j", "j"]:
        page.keyboard.press(key)
    page.evaluate("document.getElementById('result-3').scrollIntoView()")
    inside = """s => { const r = document.querySelector(s).getBoundingClientRect();
        return r.bottom > 0 && r.top < window.innerHeight; }"""
    assert page.evaluate(f"({inside})('section.claim')")
    assert page.evaluate(f"({inside})('fieldset.claim-label')")


def test_researcher_pages_pass_axe(page, every_kind: Project, users: dict[str, User]) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    login(page, "alice")
    p = every_kind.pk
    problems = []
    for url in [
        "/",
        reverse("project", args=[p]),
        reverse("project_import", args=[p]),
        reverse("adjudication", args=[p]),
        reverse("pipeline_runs", args=[p]),
        reverse("report", args=[p]) + "?bootstrap=5",
        reverse("settings_tokens"),
        reverse("project_new"),
    ]:
        page.goto(url)
        page.wait_for_load_state("load")
        problems += [f"{url}: {v}" for v in serious(page)]
    assert problems == []


def test_keys_on_a_long_comparison_item_show_what_they_changed(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Defect 5: 1/2/y/n changed radios 1,000 px below the viewport without a trace."""
    from annotation.models import Claim

    a = Assignment.objects.filter(annotator=users["bob"], item__kind=Item.COMPARISON).first()
    assert a is not None
    Claim.objects.bulk_create(
        Claim(claim_list=a.item.list_a, position=100 + i, text=f"Claim number {i} of a long list.")
        for i in range(80)
    )
    login(page, "bob")
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"/a/{a.pk}/")
    page.wait_for_load_state("load")
    for key, selector in [
        ("1", "input[name=choice][value='1']"),
        ("n", "input[name=hard][value=no]"),
    ]:
        page.evaluate("window.scrollTo(0, 0)")
        page.keyboard.press(key)
        assert page.is_checked(selector)
        assert page.eval_on_selector(
            selector,
            """n => { const r = n.getBoundingClientRect();
            return r.top >= 0 && r.bottom <= window.innerHeight; }""",
        ), key
