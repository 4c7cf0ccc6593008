"""Every documented key on every item page (issue 13): the keys the instructions page
lists for each kind (the kind registry's `keys`) plus Esc, Ctrl+Enter and [ / ], pressed
on the demo's real items at 1366x900 and 390x844. After every key the test checks where
the focus is (never in a text box unless the key opened one) and that the control the key
changed is on screen and not covered by the sticky claim or label row."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db.models import Count
from django.urls import reverse

from annotation import kinds
from annotation.management.commands.load_demo import ANNOTATORS
from annotation.models import Assignment, Item, Project
from tests.browser import login

from .test_browser_layout import SIZES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FOCUS = """() => { const a = document.activeElement;
  const s = document.querySelector('[data-key-scope].active');
  return {id: a.id, tag: a.tagName.toLowerCase(), key: (a.dataset && a.dataset.key) || '',
          scope: s ? s.id : null, onScope: !!s && a === s,
          inScope: !!s && s.contains(a),
          typing: a.matches('textarea, select, input:not([type=radio]):not([type=checkbox])')}; }"""
# on screen and the topmost thing at its centre (not under a sticky claim or label row)
SEEN = """sel => { const n = document.querySelector(sel); const l = n.closest('label') || n;
  const r = l.getBoundingClientRect();
  if (r.top < 0 || r.bottom > window.innerHeight || r.height === 0) return false;
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return !!hit && (l === hit || l.contains(hit)); }"""


@pytest.fixture
def annotator1(demo: Project) -> User:
    return User.objects.get(username=ANNOTATORS[0][0])


def pick(user: User, kind: str, size: str) -> Assignment:
    """The user's item of this kind with the most parts, not first or last in the queue."""
    mine = list(Assignment.objects.filter(annotator=user).order_by("position", "pk"))
    inner = [a.pk for a in mine[1:-1] if a.item.kind == kind]
    a = (
        Assignment.objects.filter(pk__in=inner)
        .annotate(n=Count(size, distinct=True))
        .order_by("-n", "pk")
        .first()
    )
    assert a is not None, kind
    return a


def start(page, a: Assignment, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    page.set_viewport_size({"width": width, "height": height})
    login(page, ANNOTATORS[0][0], ANNOTATORS[0][1])
    page.goto(reverse("assignment", args=[a.pk]))
    page.wait_for_selector("#answer-form")
    page.wait_for_load_state("load")  # deferred scripts have run: keys work


def focus(page) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return page.evaluate(FOCUS)


def press(page, key: str, checked: str = "") -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Press a key outside any text box; the radio or box it sets is checked and seen."""
    before = focus(page)
    assert not before["typing"], (key, before)
    page.keyboard.press(key)
    if checked:
        assert page.is_checked(checked), key
        assert page.evaluate(f"({SEEN})({checked!r})"), f"{key}: {checked} is not in view"
    after = focus(page)
    assert not after["typing"], (key, after)  # the next key is a shortcut again
    return after


def write(page, key: str, box: str, text: str) -> None:  # type: ignore[no-untyped-def]
    """A text key focuses its box with the caret after the text; Esc leaves it."""
    old = page.input_value(box)
    page.keyboard.press(key)
    assert page.evaluate(f"document.activeElement === document.querySelector({box!r})"), key
    page.keyboard.type(text)
    assert page.input_value(box) == old + text
    assert page.evaluate(f"({SEEN})({box!r})"), f"{key}: {box} is not in view"
    page.keyboard.press("Escape")
    assert not focus(page)["typing"]


def prev_and_next(page) -> None:  # type: ignore[no-untyped-def]
    here = page.url
    for key in ("]", "["):
        url = page.url
        page.keyboard.press(key)
        page.wait_for_url(lambda u, url=url: u != url)
        page.wait_for_selector("#answer-form")
        page.wait_for_load_state("load")
    assert page.url == here


def submit(page) -> None:  # type: ignore[no-untyped-def]
    url = page.url
    page.keyboard.press("Control+Enter")
    page.wait_for_url(lambda u: u != url)


def documented(kind: str) -> set[str]:
    keys = {k for ks, _ in kinds.get(kind).keys for k in ks if k not in ("/", "–")}
    return keys | {"Control+Enter", "[", "]"}


@pytest.mark.parametrize("width,height", SIZES)
def test_comparison_keys(page, annotator1: User, width: int, height: int) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    user = annotator1
    a = pick(user, Item.COMPARISON, "item__list_a__claims")
    used = {"[", "]", "1", "2", "y", "n", "w", "Control+Enter"}
    assert used == documented(Item.COMPARISON)
    start(page, a, width, height)
    prev_and_next(page)
    for key, value in [("2", "2"), ("1", "1")]:
        press(page, key, f"input[name=choice][value='{value}']")
    press(page, "y", "input[name=hard][value=yes]")
    press(page, "n", "input[name=hard][value=no]")
    write(page, "w", "#justification", "List 1 has the birth date.")
    write(page, "w", "#justification", " And the work.")  # again: typed after the text
    press(page, "2", "input[name=choice][value='2']")  # a key after Esc is a key again
    submit(page)
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    assert a.answers_dict() == {
        ("item", "choice"): "2",
        ("item", "hard"): "no",
        ("item", "justification"): "List 1 has the birth date. And the work.",
    }


@pytest.mark.parametrize("width,height", SIZES)
def test_verification_keys(page, annotator1: User, width: int, height: int) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    user = annotator1
    a = pick(user, Item.VERIFICATION, "item__claim__evidence")
    ranks = sorted(a.item.claim.evidence.values_list("rank", flat=True))
    assert len(ranks) >= 3
    assert documented(Item.VERIFICATION) == {
        *"jksci14x",  # 1-4: the four claim labels
        "[",
        "]",
        "Control+Enter",
    }
    start(page, a, width, height)
    prev_and_next(page)
    assert focus(page)["scope"] == f"result-{ranks[0]}"
    for i, rank in enumerate(ranks):  # every result: j moves on, s / c / i set the stance
        if i:
            now = press(page, "j")
            assert now["scope"] == f"result-{rank}" and now["onScope"], now
        for key, value in [("c", "contradicts"), ("i", "inconclusive"), ("s", "supports")]:
            now = press(page, key, f"#result-{rank} input[value={value}]")
            assert now["scope"] == f"result-{rank}", now
    assert press(page, "j")["scope"] == f"result-{ranks[-1]}"  # stays on the last
    now = press(page, "k")
    assert now["scope"] == f"result-{ranks[-2]}" and now["onScope"], now
    for n in "1234":
        press(page, n, f"input[name=label][data-key='{n}']")
    press(page, "3", "input[name=label][data-key='3']")  # not enough info while all support
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#answer-form .errors")
    page.wait_for_function("() => document.activeElement.classList.contains('errors')")
    assert page.evaluate(f"({SEEN})('#answer-form .errors')")
    assert focus(page)["scope"] == f"result-{ranks[-2]}"  # the active result stays
    press(page, "x", "input[name=confirm]")  # keep the label: confirmed
    submit(page)
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    answers = a.answers_dict()
    assert answers[("item", "label")] == "inconclusive-not-enough"
    assert {answers[(f"evidence:{r}", "stance")] for r in ranks} == {"supports"}


@pytest.mark.parametrize("width,height", SIZES)
def test_segment_keys(page, demo: Project, annotator1: User, width: int, height: int) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    project, user = demo, annotator1
    a = pick(user, Item.SEGMENT, "item__document__segments")
    types = project.error_types
    assert documented(Item.SEGMENT) == {
        *"jk19tfrlad",
        "[",
        "]",
        "Control+Enter",
    }  # 1-9: one key per error type
    start(page, a, width, height)
    prev_and_next(page)
    scopes = page.eval_on_selector_all("[data-key-scope]", "ns => ns.map(n => '#' + n.id)")
    assert len(scopes) >= 2
    first, second = scopes[0], scopes[1]
    assert "#" + str(focus(page)["scope"]) == first
    press(page, "f", f"{first} input[value=false]")
    press(page, "t", f"{first} input[value=true]")
    now = press(page, "j")
    assert "#" + str(now["scope"]) == second and now["onScope"], now
    press(page, "f", f"{second} input[value=false]")
    for n in range(1, len(types) + 1):  # the error types this project offers
        press(page, str(n), f"{second} .if-incorrect input[data-key='{n}']")
    write(page, "r", f"{second} textarea[data-key=r]", "The date is invented.")
    write(page, "l", f"{second} textarea[data-key=l]", "https://en.wikipedia.org/wiki/Dates")
    now = press(page, "k")
    assert "#" + str(now["scope"]) == first and now["onScope"], now
    press(page, "j")
    for scope in scopes[2:]:  # every other segment is correct
        assert "#" + str(press(page, "j")["scope"]) == scope
        press(page, "t", f"{scope} input[value=true]")
    press(page, "d", "input[name=keep][value=remove]")
    press(page, "a", "input[name=keep][value=keep]")
    submit(page)
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    answers = a.answers_dict()
    assert answers[("segment:1", "error_type")] == types[-1]
    assert answers[("segment:1", "links")] == "https://en.wikipedia.org/wiki/Dates"
    assert answers[("item", "keep")] == "keep"


@pytest.mark.parametrize("width,height", SIZES)
def test_atomic_fact_keys(page, annotator1: User, width: int, height: int) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    user = annotator1
    a = pick(user, Item.ATOMIC, "item__list_a__claims")
    assert documented(Item.ATOMIC) == {
        *"jksniw",
        "[",
        "]",
        "Control+Enter",
    }  # w: the Why? box (issue 43)
    start(page, a, width, height)
    prev_and_next(page)
    scopes = page.eval_on_selector_all("[data-key-scope]", "ns => ns.map(n => '#' + n.id)")
    assert len(scopes) >= 3
    labels = {}
    for i, scope in enumerate(scopes):
        if i:
            now = press(page, "j")
            assert "#" + str(now["scope"]) == scope and now["onScope"], now
        for key, value in [("n", "not-supported"), ("i", "irrelevant"), ("s", "supported")]:
            press(page, key, f"{scope} input[value={value}]")
        labels[i] = "supported"
    now = press(page, "k")
    assert "#" + str(now["scope"]) == scopes[-2] and now["onScope"], now
    press(page, "n", f"{scopes[-2]} input[value=not-supported]")
    submit(page)
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    answers = a.answers_dict()
    assert sorted(v for v in answers.values()).count("not-supported") == 1
    assert len(answers) == len(scopes)
