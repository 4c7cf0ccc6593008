"""The report's agreement tables link each field, category and pair of annotators to
the disagreement drill-down (issue 39); the links are the page's, the downloads stay
as they were; annotators see neither."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Item, Project


def links(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r'href="([^"]*/disagreements/\?[^"]*)"', page)]


def test_each_figure_opens_its_units(
    alpha: Project, verification: list[Item], users: dict[str, User]
) -> None:
    page = Client()
    page.force_login(users["alice"])
    shown = page.get(reverse("report", args=[alpha.pk]), {"bootstrap": 0}).content.decode()
    found = links(shown)
    base = reverse("disagreements", args=[alpha.pk])
    assert f"{base}?kind=verification&field=label" in found  # the overview's field
    categories = [u for u in found if "category=" in u]
    pairs = [u for u in found if "&a=" in u]
    assert categories and pairs
    bob = alpha.memberships.get(user=users["bob"]).pseudonym
    carol = alpha.memberships.get(user=users["carol"]).pseudonym
    assert f"{base}?kind=verification&field=label&a={bob}&b={carol}" in pairs
    for url in (found[0], categories[0], pairs[0]):
        assert page.get(url).status_code == 200, url
    # with usernames shown, the pair still opens by pseudonym
    named = page.get(reverse("report", args=[alpha.pk]), {"bootstrap": 0, "names": 1})
    assert f"{base}?kind=verification&field=label&a={bob}&b={carol}" in links(
        named.content.decode()
    )
    # the downloads have no link
    csv = page.get(
        reverse("report_table", args=[alpha.pk, "agreement-overview", "csv"]), {"bootstrap": 0}
    )
    assert "disagreements" not in csv.content.decode()


@pytest.mark.parametrize("who", ["bob", "dave"])
def test_annotators_follow_no_link(
    alpha: Project, verification: list[Item], users: dict[str, User], who: str
) -> None:
    page = Client()
    page.force_login(users[who])
    assert page.get(reverse("report", args=[alpha.pk])).status_code in (403, 404)
    url = reverse("disagreements", args=[alpha.pk])
    assert page.get(url, {"kind": "verification", "field": "label"}).status_code in (403, 404)
