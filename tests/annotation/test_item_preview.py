"""Issue 43: a researcher previews an item of each kind as annotators see it, and the
preview writes nothing; nobody else can preview."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from annotation.models import Answer, Assignment, Item, Project

from .test_browser_layout import every_kind  # noqa: F401  (a fixture: every kind of item)


def test_a_preview_of_each_kind_shows_the_item_and_writes_nothing(
    every_kind: Project,  # noqa: F811
    users: dict[str, User],
    client: Client,
) -> None:
    client.force_login(users["alice"])
    kinds_seen = set()
    for item in Item.objects.filter(project=every_kind).order_by("kind", "pk"):
        if item.kind in kinds_seen:
            continue
        kinds_seen.add(item.kind)
        before = (Assignment.objects.count(), Answer.objects.count())
        response = client.get(reverse("item_preview", args=[every_kind.pk, item.pk]))
        assert response.status_code == 200, item.kind
        page = response.content.decode()
        assert "nothing is saved" in page and "<fieldset disabled>" in page
        if item.claim is not None:
            assert escape(item.claim.text) in page
        elif item.document is not None and item.kind != Item.COMPARISON:
            assert escape(item.document.response.split("\n")[0][:30]) in page
        assert (Assignment.objects.count(), Answer.objects.count()) == before
        assert 'name="action"' not in page  # no submit, no draft, no skip
    assert kinds_seen == {Item.COMPARISON, Item.VERIFICATION, Item.SEGMENT, Item.ATOMIC}


def test_only_the_projects_researchers_can_preview(
    alpha: Project, alpha_items: list[Item], beta: Project, users: dict[str, User]
) -> None:
    item = alpha_items[0]
    url = reverse("item_preview", args=[alpha.pk, item.pk])
    for who in ("bob", "erin"):  # an annotator of the item, a researcher of another project
        client = Client()
        client.force_login(users[who])
        assert client.get(url).status_code == 404, who
    assert Client().get(url).status_code == 302  # to the login page
    erin = Client()
    erin.force_login(users["erin"])  # beta's researcher, alpha's item under beta's id
    assert erin.get(reverse("item_preview", args=[beta.pk, item.pk])).status_code == 404
    alice = Client()
    alice.force_login(users["alice"])
    assert alice.post(url).status_code == 405  # a preview only shows
