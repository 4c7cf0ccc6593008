"""Pages, second pass (issue 29, points 2-4) on the demo's real data at a 390x844 phone
and a 1366x900 laptop, axe-core clean: the verification page keeps the claim and the
label row in view on an opaque panel with at least half the screen for the results; the
queue wraps at word boundaries; an empty justification gets the page's own message.
Screenshots go to the pytest temporary directory for a look."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db.models import Count
from django.urls import reverse

from annotation.management.commands.load_demo import ANNOTATORS
from annotation.models import Assignment, Item, Project
from tests.browser import login

from .test_browser_layout import SIZES, serious

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# the box of a selector in the viewport
BOX = """s => { const r = document.querySelector(s).getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, height: r.height}; }"""
# the background painted behind a node is opaque: its own, or that of the nearest
# ancestor with one when the node lies inside that ancestor's box (a fieldset's legend
# sits half above the fieldset's box: it needs its own)
OPAQUE = """s => { const node = document.querySelector(s), box = node.getBoundingClientRect();
    let n = node;
    while (n) { const r = n.getBoundingClientRect();
      if (r.top > box.top + 0.5 || r.bottom < box.bottom - 0.5) return false;
      const c = getComputedStyle(n).backgroundColor;
      if (c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return !c.startsWith('rgba');
      n = n.parentElement; }
    return false; }"""


def annotator(demo: Project) -> User:
    return User.objects.get(username=ANNOTATORS[0][0])


def longest_verification(demo: Project, user: User) -> Assignment:
    """The demo verification item with the most search results, given to `user`."""
    item = (
        demo.items.filter(kind=Item.VERIFICATION)
        .annotate(n=Count("claim__evidence"))
        .order_by("-n", "pk")
        .first()
    )
    assert item is not None and item.n >= 5  # type: ignore[attr-defined]
    a, _ = Assignment.objects.get_or_create(item=item, annotator=user, defaults={"position": 0})
    return a


@pytest.mark.parametrize("width,height", SIZES)
def test_the_verification_page_keeps_claim_and_labels_on_an_opaque_panel(
    page, demo: Project, width: int, height: int, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    user = annotator(demo)
    a = longest_verification(demo, user)
    page.set_viewport_size({"width": width, "height": height})
    login(page, user.username, ANNOTATORS[0][1])
    page.goto(reverse("assignment", args=[a.pk]))
    page.wait_for_load_state("load")
    for key in "jjjj":  # down the results from the keyboard
        page.keyboard.press(key)
    page.evaluate("window.scrollTo(0, document.body.scrollHeight / 2)")
    page.screenshot(path=tmp_path / f"verification-{width}.png")
    claim = page.evaluate(f"({BOX})('section.claim')")
    labels = page.evaluate(f"({BOX})('fieldset.claim-label')")
    assert claim["top"] >= 0 and claim["bottom"] <= height, claim
    assert labels["top"] >= 0 and labels["bottom"] <= height + 1, labels
    # the panels are opaque, their headings included (the legend printed over results)
    for selector in [
        "section.claim",
        "section.claim h2",
        "fieldset.claim-label",
        "fieldset.claim-label legend",
    ]:
        assert page.evaluate(f"({OPAQUE})('{selector}')"), selector
    # at least half of the screen is left to the results between the two panels
    assert labels["top"] - claim["bottom"] >= height / 2, (claim, labels)
    assert serious(page) == []


@pytest.mark.parametrize("width,height", SIZES)
def test_the_queue_wraps_at_word_boundaries(
    page, demo: Project, width: int, height: int, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    user = annotator(demo)
    page.set_viewport_size({"width": width, "height": height})
    login(page, user.username, ANNOTATORS[0][1])
    page.goto(reverse("queue", args=[demo.pk]))
    page.wait_for_load_state("load")
    page.screenshot(path=tmp_path / f"queue-{width}.png", full_page=True)
    # every word of the kind and status columns sits on one line: a word broken in the
    # middle ("Com/pari/son") makes its cell taller than one line holding it
    broken = page.evaluate(
        """() => [...document.querySelectorAll('.queue td.kind, .queue td.status')]
        .filter(td => { const r = document.createRange(); r.selectNodeContents(td);
          const lines = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
          return td.textContent.trim().split(/\\s+/).length < lines.size; })
        .map(td => td.textContent.trim())"""
    )
    assert broken == []
    sideways = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert sideways <= 0
    assert serious(page) == []


@pytest.mark.parametrize("width,height", SIZES)
def test_an_empty_justification_gets_the_pages_own_message(
    page,
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    width: int,
    height: int,
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """It was refused by the browser's own bubble, which screen readers and the tests of
    the page's refusals never saw."""
    a = Assignment.objects.filter(annotator=users["bob"], item__kind=Item.COMPARISON).first()
    assert a is not None
    page.set_viewport_size({"width": width, "height": height})
    login(page, "bob")
    page.goto(f"/a/{a.pk}/")
    page.wait_for_load_state("load")
    page.keyboard.press("1")
    page.keyboard.press("n")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#answer-form p.error:has-text('justify')")
    page.wait_for_function("() => document.activeElement.id === 'justification'")
    assert serious(page) == []


def longest_atomic(demo: Project, user: User) -> Assignment:
    item = (
        demo.items.filter(kind=Item.ATOMIC)
        .annotate(n=Count("list_a__claims"))
        .order_by("-n", "pk")
        .first()
    )
    assert item is not None and item.n >= 10  # type: ignore[attr-defined]
    a, _ = Assignment.objects.get_or_create(item=item, annotator=user, defaults={"position": 0})
    return a


@pytest.mark.parametrize("width,height", SIZES)
def test_atomic_facts_are_compact_rows_beside_their_marked_sentence(
    page, demo: Project, width: int, height: int, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    user = annotator(demo)
    a = longest_atomic(demo, user)
    facts = list(a.item.list_a.claims.order_by("position"))  # type: ignore[union-attr]
    page.set_viewport_size({"width": width, "height": height})
    login(page, user.username, ANNOTATORS[0][1])
    page.goto(reverse("assignment", args=[a.pk]))
    page.wait_for_load_state("load")
    # a compact row per fact: a line or two of text and the three keys, the reason closed
    rows = page.eval_on_selector_all("fieldset.fact", "ns => ns.map(n => n.offsetHeight)")
    assert len(rows) == len(facts)
    assert max(rows) <= (130 if width < 600 else 110), rows
    assert page.eval_on_selector_all("details.reason[open]", "ns => ns.length") == 0
    # no knowledge passages in FActScore's files: the page says so and names the topic
    topic = a.item.document.metadata["topic"]
    assert f"No knowledge source was given for this response (its topic: {topic})" in (
        page.inner_text("section.knowledge")
    )
    for n in range(3):  # j moves to the next fact; its sentence is marked, in view
        if n:
            page.keyboard.press("j")
        fact = facts[n]
        page.wait_for_function(
            """s => { const m = document.querySelector('.sentence.current');
            return !!m && m.textContent.trim() === s; }""",
            arg=fact.sentence.strip(),
        )
        assert page.eval_on_selector(
            ".sentence.current",
            """m => { const r = m.getBoundingClientRect(), b = m.closest('.response')
              .getBoundingClientRect();
            return r.bottom > Math.max(b.top, 0) && r.top < Math.min(b.bottom, innerHeight); }""",
        )
        page.keyboard.press("s")
    page.screenshot(path=tmp_path / f"atomic-{width}.png")
    # the reason box opens on demand; what is typed there is kept with the label
    page.click("#fact-1 details.reason summary")
    page.fill("#fact-1 details.reason textarea", "The sentence says so.")
    page.keyboard.press("Escape")  # out of the box: keys are keys again
    assert serious(page) == []
    for f in facts[3:]:
        page.check(f"#fact-{f.position} input[value=irrelevant]")
    url = page.url
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda u: u != url)
    answers = a.answers_dict()
    assert answers[("fact:1", "reason")] == "The sentence says so."
    assert [answers[(f"fact:{f.position}", "label")] for f in facts[:3]] == ["supported"] * 3
