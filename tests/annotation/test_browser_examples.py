"""Worked examples under the instructions (issue 29 point 7) in a browser, on the demo's
real data at a 390x844 phone and a 1366x900 laptop: one example of each kind shown as
the real item, read-only (keys change nothing), with the explanation; no sideways
scroll; axe-core clean. Screenshots go to the pytest temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.management.commands.load_demo import ANNOTATORS
from annotation.models import Project
from tests.browser import login

from .test_browser_layout import SIZES, serious
from .test_instruction_examples import demo_examples

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width,height", SIZES)
def test_the_examples_show_under_the_instructions(
    page, demo: Project, width: int, height: int, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    marked = demo_examples(demo)
    user = User.objects.get(username=ANNOTATORS[0][0])
    page.set_viewport_size({"width": width, "height": height})
    login(page, user.username, ANNOTATORS[0][1])
    page.goto(reverse("instructions", args=[demo.pk]))
    page.wait_for_load_state("load")
    page.screenshot(path=tmp_path / f"examples-{width}.png", full_page=True)
    titles = page.eval_on_selector_all("article.example h3", "ns => ns.map(n => n.textContent)")
    assert titles == [f"Example {n} · {s.title}" for n, s in enumerate(marked, start=1)]
    for n, spec in enumerate(marked, start=1):
        article = page.locator("article.example").nth(n - 1)
        assert article.locator(".explanation").inner_text().endswith(f"Why {spec.name}.")
        assert article.locator("input:checked").count() >= 1  # the reference answer
        controls = article.locator("input, textarea")
        assert controls.count() > 0
        assert all(controls.nth(i).is_disabled() for i in range(controls.count()))
        assert article.locator("button").count() == 0
    before = page.eval_on_selector_all("article.example input:checked", "ns => ns.length")
    page.keyboard.press("Escape")
    for key in "12jsa":  # the item pages' keys change nothing here
        page.keyboard.press(key)
    after = page.eval_on_selector_all("article.example input:checked", "ns => ns.length")
    assert after == before
    sideways = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert sideways <= 0
    assert serious(page) == []
    # the instructions are still acknowledged from the page's own button
    page.click("text=I have read the instructions")
    page.wait_for_url(lambda u: "/instructions/" not in u)
