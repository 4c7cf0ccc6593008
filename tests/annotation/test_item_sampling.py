"""Issue 43: sampling to a size for every kind (only verification items took n). Each
kind's items form, API and command take `n`: a seeded sample of n of the items not made
yet; the same seed draws the same items, a second draw takes others, and without n every
item is made as before."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation import kinds, operations
from annotation.ingest import import_file
from annotation.models import Item, Membership, Project, System
from tests.conftest import SYSTEM_A, SYSTEM_B, canonical_line, verification_line

from .api_helpers import token_client
from .conftest import FACT_LISTER, atomic_line

DOCS = 12  # of each format: comparison lists, claims with search results, facts


@pytest.fixture
def many(users: dict[str, User]) -> Project:
    project = Project.objects.create(name="many")
    project.add_member(users["alice"], Membership.RESEARCHER)
    for name in ("bob", "carol"):
        project.add_member(users[name], Membership.ANNOTATOR)
    for line, file in ((canonical_line, "c.jsonl"), (atomic_line, "a.jsonl")):
        text = "\n".join(line(i) for i in range(DOCS))
        import_file(project=project, text=text, file=file)
    text = "\n".join(verification_line(i) for i in range(DOCS))
    import_file(project=project, text=text, file="v.jsonl")
    return project


def kind_data(project: Project, kind: str) -> dict[str, Any]:
    """The items form's own fields of each kind (its systems), besides n and the policy."""
    system = {s.name: s.pk for s in System.objects.filter(project=project)}
    return {
        Item.COMPARISON: {"system_a": system[SYSTEM_A], "system_b": system[SYSTEM_B]},
        Item.VERIFICATION: {"system": system[SYSTEM_A]},
        Item.SEGMENT: {},
        Item.ATOMIC: {"system": system[FACT_LISTER]},
    }[kind]


def draw(project: Project, kind: str, n: int | None, seed: int) -> list[int]:
    """Make a sample through the items form (as page, API and command do); the pks of
    what the items are of (their document, or claim), in order."""
    data = {"k": 1, "fraction": 0.0, "seed": seed, **kind_data(project, kind)}
    if n is not None:
        data["n"] = n
    form = kinds.get(kind).items_form(project, data)
    assert form.is_valid(), form.errors
    items, _ = operations.create_items(project, form)
    return sorted(i.claim_id or i.document_id for i in items)


@pytest.mark.parametrize("kind", kinds.names())
def test_every_kind_samples_a_size_the_same_for_the_same_seed(many: Project, kind: str) -> None:
    first = draw(many, kind, 5, seed=7)
    assert len(first) == 5
    Item.objects.filter(project=many).delete()
    assert draw(many, kind, 5, seed=7) == first  # the same seed: the same items
    Item.objects.filter(project=many).delete()
    other = draw(many, kind, 5, seed=8)
    assert len(other) == 5 and other != first  # another seed: another sample
    more = draw(many, kind, 5, seed=8)  # a second draw takes items not made yet
    assert len(more) == 5 and not set(more) & set(other)
    rest = draw(many, kind, 10**6, seed=8)  # the rest
    Item.objects.filter(project=many).delete()
    every = draw(many, kind, None if kind != Item.VERIFICATION else 10**6, seed=0)
    assert sorted(other + more + rest) == every  # the draws partition every item


@pytest.mark.parametrize("kind", [k for k in kinds.names() if k != Item.VERIFICATION])
def test_without_a_size_every_item_is_made(many: Project, kind: str) -> None:
    every = 3 * DOCS if kind == Item.SEGMENT else DOCS  # segments: every document
    assert len(draw(many, kind, None, seed=0)) == every


def test_the_page_the_api_and_the_command_take_a_size(
    many: Project, users: dict[str, User]
) -> None:
    client = Client()
    client.force_login(users["alice"])
    data = {"k": 1, "fraction": 0.0, "seed": 3, "n": 4, **kind_data(many, Item.COMPARISON)}
    page = client.post(reverse("project_items", args=[many.pk, Item.COMPARISON]), data)
    assert page.status_code == 302
    assert Item.objects.filter(project=many, kind=Item.COMPARISON).count() == 4
    form = client.get(reverse("project", args=[many.pk])).content.decode()
    for kind in kinds.names():  # every kind's form asks for the size
        assert f'id="items-{kind}"' in form
    assert form.count('name="n"') == len(kinds.names())
    api = token_client(users["alice"]).post(
        reverse("api_items_create", args=[many.pk, Item.ATOMIC]),
        {"k": 1, "fraction": 0.0, "seed": 3, "n": 2, **kind_data(many, Item.ATOMIC)},
        format="json",
    )
    assert api.status_code == 201, api.content
    assert api.json()["items_created"] == 2
    call_command(
        "create_items",
        str(many.pk),
        Item.SEGMENT,
        "--n",
        "3",
        "--k",
        "1",
        "--fraction",
        "0",
        stdout=io.StringIO(),
    )
    assert Item.objects.filter(project=many, kind=Item.SEGMENT).count() == 3
    bad = token_client(users["alice"]).post(
        reverse("api_items_create", args=[many.pk, Item.SEGMENT]), {"n": 0}, format="json"
    )
    assert bad.status_code == 400
