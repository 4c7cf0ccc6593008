"""The adjudication queue ordered by the gold method's uncertainty (issue 39): the least
confident gold first, adjudicated units last; a bad order is a 400; researchers only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Adjudication, Assignment, Item, Membership, Project
from annotation.views.adjudication import _disputed


@pytest.fixture
def disputed(alpha: Project, alpha_verification: list[Item], users: dict[str, User]) -> list[Item]:
    """dave joins: on the first item two of three agree (majority, 2/3) on the label and the
    stance; on the second bob and carol tie on both (the label by VeriScore's rule:
    inconclusive, which no answer gave: 0; the stance: no gold)."""
    first, second = alpha_verification
    alpha.add_member(users["dave"], Membership.ANNOTATOR)
    Assignment.objects.create(item=first, annotator=users["dave"])
    given = {
        first: {"bob": "supported", "carol": "supported", "dave": "contradicted"},
        second: {"bob": "supported", "carol": "contradicted"},
    }
    for item, by in given.items():
        for name, value in by.items():
            stance = "supports" if name == "bob" else "contradicts"
            Assignment.objects.get(item=item, annotator=users[name]).submit(
                {("item", "label"): value, ("evidence:1", "stance"): stance},
                guideline_version=1,
            )
    return [first, second]


def test_the_least_confident_gold_comes_first(
    alpha: Project, disputed: list[Item], users: dict[str, User]
) -> None:
    first, second = disputed
    golds = _disputed(alpha, order="uncertain")
    assert [(g.item, g.unit, g.field, g.confidence) for g in golds] == [
        (second.pk, "evidence:1", "stance", None),  # a tie: no gold yet
        (second.pk, "item", "label", 0.0),  # the tie rule's value, which no one gave
        (first.pk, "evidence:1", "stance", pytest.approx(2 / 3)),
        (first.pk, "item", "label", pytest.approx(2 / 3)),
    ]
    Adjudication.objects.create(item=second, unit="evidence:1", field="stance", value="supports")
    golds = _disputed(alpha, order="uncertain")
    assert (golds[-1].item, golds[-1].unit, golds[-1].provenance) == (
        second.pk,
        "evidence:1",
        "adjudicated",
    )
    page = Client()
    page.force_login(users["alice"])
    url = reverse("adjudication", args=[alpha.pk])
    shown = page.get(url, {"order": "uncertain"}).content.decode()
    assert "least confident gold first" in shown
    at = [shown.index(f'id="unit-{g.item}-{g.unit.replace(":", "")}-{g.field}"') for g in golds]
    assert at == sorted(at)
    assert "confidence 0.67" in shown
    assert page.get(url, {"order": "random"}).status_code == 400


@pytest.mark.parametrize("who", ["bob", "dave"])
def test_annotators_never_see_the_queue_nor_its_confidences(
    alpha: Project, disputed: list[Item], users: dict[str, User], who: str
) -> None:
    page = Client()
    page.force_login(users[who])
    r = page.get(reverse("adjudication", args=[alpha.pk]), {"order": "uncertain"})
    assert r.status_code in (403, 404)
