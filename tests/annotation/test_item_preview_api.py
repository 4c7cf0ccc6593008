"""Issue 43: the item preview through the API. A researcher reads an item of each kind as
its annotators see it (no verifier's answer, no method name, nobody's labels); reading it
writes no row; an annotator of the item, a hired worker, another project's researcher and
an anonymous caller get nothing."""

from __future__ import annotations

import json

from django.apps import apps
from django.contrib.auth.models import User
from django.urls import reverse

from annotation import hiring
from annotation.models import Answer, Assignment, Item, Project, System
from tests.conftest import VERIFIER

from .api_helpers import submit_body, token_client
from .test_browser_layout import every_kind  # noqa: F401  (a fixture: every kind of item)


def row_counts() -> dict[str, int]:
    """Rows of every model of the app: a preview adds none (no assignment, answer, draft,
    activity or throttle row)."""
    return {m.__name__: m.objects.count() for m in apps.get_app_config("annotation").get_models()}


def test_a_preview_of_each_kind_shows_what_annotators_see_and_writes_nothing(
    every_kind: Project,  # noqa: F811
    users: dict[str, User],
) -> None:
    bob_item = Assignment.objects.filter(annotator=users["carol"], item__kind=Item.COMPARISON)
    carols = bob_item.first()
    assert carols is not None
    answered = token_client(users["carol"]).post(
        reverse("api_assignment_submit", args=[carols.pk]),
        submit_body(justification="CAROLS-OWN-WORDS about the lists."),
        format="json",
    )
    assert answered.status_code == 200, answered.content
    researcher = token_client(users["alice"])
    researcher.get(reverse("api_projects"))  # the token's first use is not the preview's
    secrets = [VERIFIER, "CAROLS-OWN-WORDS", "unsupported"]
    secrets += list(System.objects.filter(project=every_kind).values_list("name", flat=True))
    seen = set()
    for item in Item.objects.filter(project=every_kind).order_by("kind", "pk"):
        before = row_counts()
        r = researcher.get(reverse("api_item_preview", args=[every_kind.pk, item.pk]))
        assert r.status_code == 200, (item.kind, r.content)
        assert row_counts() == before, item.kind
        body = r.json()
        assert (body["id"], body["kind"]) == (item.pk, item.kind)
        assert body["response"] == item.document.response
        assert body["fields"] and all(f["label"] for f in body["fields"])
        text = json.dumps(body)
        for secret in secrets:
            assert secret not in text, (item.kind, secret)
        if item.claim is not None:
            assert body["claim"] == item.claim.text
        seen.add(item.kind)
    assert seen == {Item.COMPARISON, Item.VERIFICATION, Item.SEGMENT, Item.ATOMIC}
    comparison = next(
        f["choices"]
        for f in researcher.get(
            reverse("api_item_preview", args=[every_kind.pk, carols.item_id])
        ).json()["fields"]
        if f["field"] == "choice"
    )
    assert comparison == ["1", "2"]  # as annotators answer: the list's place, not its system


def test_nobody_but_the_projects_researchers_can_preview(
    alpha: Project, alpha_items: list[Item], beta: Project, users: dict[str, User]
) -> None:
    item = alpha_items[0]
    url = reverse("api_item_preview", args=[alpha.pk, item.pk])
    invite = hiring.Invite.objects.create(project=alpha, items_per_person=2)
    joined = token_client(None).post(
        reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "w1"}, format="json"
    )
    worker = User.objects.get(auth_token__key=joined.json()["token"])
    assert Assignment.objects.filter(annotator=worker).exists()
    before = row_counts()
    # bob annotates the item, the worker was hired onto it, erin is beta's researcher
    for who in (users["bob"], worker, users["erin"]):
        r = token_client(who).get(url)
        assert r.status_code == 404, (who.username, r.status_code)
    assert token_client(None).get(url).status_code == 401
    erin = token_client(users["erin"])  # alpha's item under beta's id
    assert erin.get(reverse("api_item_preview", args=[beta.pk, item.pk])).status_code == 404
    alice = token_client(users["alice"])
    assert alice.post(url, {}, format="json").status_code == 405  # a preview only shows
    assert alice.get(reverse("api_item_preview", args=[alpha.pk, 10**9])).status_code == 404
    assert row_counts() == before
    assert not Answer.objects.filter(assignment__item=item).exists()
