"""Issue 25: researchers mark training and check items from the items list (selected,
or a random sample per kind) instead of typing item ids."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation import operations
from annotation.hiring import QualityItem
from annotation.models import Item, Project
from tests.annotation.api_helpers import token_client


def _adjudicate(items: list[Item], alice: User) -> None:
    for item in items:
        operations.adjudicate(item=item, unit="item", field="hard", value="no", by=alice)


def test_selected_items_are_marked_and_the_others_named(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    _adjudicate(alpha_items[:2], users["alice"])
    alice = Client()
    alice.force_login(users["alice"])
    page = alice.get(reverse("project", args=[alpha.pk])).content.decode()
    assert 'form="mark-items"' in page and f'value="{alpha_items[0].pk}"' in page
    chosen = [alpha_items[0].pk, alpha_items[1].pk, alpha_items[2].pk]
    r = alice.post(
        reverse("hiring", args=[alpha.pk]),
        {"action": "mark_many", "items": chosen, "role": "check"},
        follow=True,
    )
    text = r.content.decode()
    assert "2 item(s) marked" in text
    assert f"item {alpha_items[2].pk}: give a reference answer" in text  # named, not skipped
    marked = dict(QualityItem.objects.values_list("item_id", "reference"))
    assert marked == {i.pk: {"item.hard": "no"} for i in alpha_items[:2]}
    page = alice.get(reverse("project", args=[alpha.pk])).content.decode()
    assert page.count("<td>check</td>") == 2


def test_a_random_sample_per_kind(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    _adjudicate(alpha_items, users["alice"])
    api = token_client(users["alice"])
    url = reverse("api_quality_items_bulk", args=[alpha.pk])
    r = api.post(url, {"sample": 3, "role": "training", "explanation": "x"}, format="json")
    assert r.status_code == 200 and r.json() == {"marked": 3, "problems": []}
    assert QualityItem.objects.filter(role="training").count() == 3
    # the sample draws among unmarked items only: the fourth is what is left
    r = api.post(url, {"sample": 3, "role": "check"}, format="json")
    assert r.json()["marked"] == 1
    assert set(QualityItem.objects.values_list("item_id", flat=True)) == {i.pk for i in alpha_items}


def test_bulk_marking_refuses_foreign_items_absurd_sizes_and_non_researchers(
    alpha: Project, alpha_items: list[Item], beta: Project, users: dict[str, User]
) -> None:
    _adjudicate(alpha_items, users["alice"])
    url = reverse("api_quality_items_bulk", args=[alpha.pk])
    api = token_client(users["alice"])
    bad = [
        {"items": [10**9], "role": "check"},  # not an item of this project
        {"sample": 10**6, "role": "check"},
        {"sample": 0, "role": "check"},
        {"items": [alpha_items[0].pk], "sample": 2, "role": "check"},
        {"role": "check"},
        {"items": [alpha_items[0].pk], "role": "gold"},
        {"items": [alpha_items[0].pk], "role": "check", "reference_system": "nope"},
        {"items": "1,2", "role": "check"},
    ]
    for body in bad:
        assert api.post(url, body, format="json").status_code == 400, body
    for who in ("bob", "erin"):  # an annotator here, a researcher elsewhere
        r = token_client(users[who]).post(url, {"sample": 1, "role": "check"}, format="json")
        assert r.status_code == 404
        c = Client()
        c.force_login(users[who])
        c.post(
            reverse("hiring", args=[alpha.pk]),
            {"action": "mark_many", "sample": 1, "role": "check"},
        )
    assert not QualityItem.objects.exists()


def test_a_sample_of_atomic_checks_from_factscores_released_human_labels(
    alpha: Project, users: dict[str, User]
) -> None:
    """Real data: FActScore's released InstructGPT file; a sample of atomic items marked
    as checks takes each fact's human S/NS/IR label as its reference."""
    from annotation.ingest import FACTSCORE_HUMAN, FACTSCORE_LABELS, import_file
    from annotation.kinds.atomic import atomic_items
    from annotation.models import System, Verdict
    from tests.conftest import peer_file

    lines = peer_file("factscore_labeled/InstructGPT.jsonl").read_text().splitlines()[:8]
    import_file(project=alpha, text="\n".join(lines), file="InstructGPT.jsonl")
    human = System.objects.get(project=alpha, name=FACTSCORE_HUMAN)
    made = atomic_items(project=alpha, system=human)
    assert len(made) >= 3
    api = token_client(users["alice"])
    r = api.post(
        reverse("api_quality_items_bulk", args=[alpha.pk]),
        {"sample": 3, "role": "check", "reference_system": FACTSCORE_LABELS},
        format="json",
    )
    assert r.status_code == 200, r.content
    marked = QualityItem.objects.filter(item__kind="atomic")
    assert r.json() == {"marked": 3, "problems": []} and marked.count() == 3
    names = {"S": "supported", "NS": "not-supported", "IR": "irrelevant"}
    for q in marked:
        published = {
            f"fact:{pos}.label": names[label]
            for pos, label in Verdict.objects.filter(
                system__name=FACTSCORE_LABELS, claim__claim_list=q.item.list_a
            ).values_list("claim__position", "label")
        }
        assert q.reference == published
