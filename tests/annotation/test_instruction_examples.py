"""Issue 29 point 7: worked examples under the instructions. A researcher marks an item
as an instruction example (the QualityItem model of training items: role "example", a
reference answer and an explanation) on the hiring page or through the API; annotators
see it under the instructions as the real item, read-only, the reference filled in;
it is never work, and gold, agreement and exports leave it out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation import hiring, kinds
from annotation.exports import long_rows, wide_rows
from annotation.gold import gold_values, label_rows
from annotation.kinds.base import ItemInfo
from annotation.models import Assignment, Item, Project, System
from tests.conftest import SYSTEM_A, SYSTEM_B

from .api_helpers import token_client

WHY = "List A names both facts of the response; List B misses the year."


def example(item: Item, reference: dict[str, str], why: str = WHY) -> hiring.QualityItem:
    return hiring.mark(item, hiring.EXAMPLE, reference, why)


def text_of(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


# --- marking: page and API ----------------------------------------------------------------


def test_the_hiring_page_marks_an_example_and_withdraws_its_open_assignments(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], client: Client
) -> None:
    item = alpha_items[0]
    Assignment.objects.get(item=item, annotator=users["bob"]).submit(
        {("item", "choice"): "1", ("item", "hard"): "no"}, guideline_version=1
    )
    client.force_login(users["alice"])
    url = reverse("hiring", args=[alpha.pk])
    r = client.post(
        url,
        {"action": "mark", "item": item.pk, "role": "example", "reference": "item.choice=a"},
        follow=True,
    )
    assert "needs an explanation" in r.content.decode()
    assert not hiring.QualityItem.objects.exists()
    r = client.post(
        url,
        {
            "action": "mark",
            "item": item.pk,
            "role": "example",
            "reference": "item.choice=a\nitem.hard=no",
            "explanation": WHY,
        },
        follow=True,
    )
    q = hiring.QualityItem.objects.get()
    assert (q.role, q.reference, q.explanation) == (
        "example",
        {"item.choice": "a", "item.hard": "no"},
        WHY,
    )
    assert "Instruction example" in r.content.decode()
    assert "Instructions are now version 2: annotators acknowledge them again." in text_of(
        r.content.decode()
    )
    # carol's open assignment is withdrawn; bob's answer stays (left out of everything)
    assert list(item.assignments.values_list("annotator__username", "status")) == [
        ("bob", Assignment.SUBMITTED)
    ]


def test_the_items_list_marks_several_examples(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], client: Client
) -> None:
    for item in alpha_items[:2]:
        item.adjudications.create(unit="item", field="choice", value="b", by=users["alice"])
    client.force_login(users["alice"])
    listing = client.get(reverse("project", args=[alpha.pk])).content.decode()
    assert '<option value="example">instruction example</option>' in listing
    assert 'name="explanation"' in listing
    client.post(
        reverse("hiring", args=[alpha.pk]),
        {
            "action": "mark_many",
            "items": [alpha_items[0].pk, alpha_items[1].pk],
            "role": "example",
            "explanation": "B is complete.",
        },
    )
    assert set(
        hiring.QualityItem.objects.filter(role=hiring.EXAMPLE).values_list("item_id", flat=True)
    ) == {alpha_items[0].pk, alpha_items[1].pk}
    assert not Assignment.objects.filter(item__in=alpha_items[:2]).exists()


def test_the_api_marks_an_example_and_refuses_attackers_and_absurd_values(
    alpha: Project, alpha_items: list[Item], beta: Project, users: dict[str, User]
) -> None:
    url = reverse("api_quality_items", args=[alpha.pk])
    body = {
        "item": alpha_items[1].pk,
        "role": "example",
        "reference": {"item.choice": "b"},
        "explanation": WHY,
    }
    # an annotator of the project, and a researcher of another project
    assert token_client(users["bob"]).post(url, body, format="json").status_code in (403, 404)
    assert token_client(users["erin"]).post(url, body, format="json").status_code in (403, 404)
    # erin marks alpha's item through her own project: no such item there
    r = token_client(users["erin"]).post(
        reverse("api_quality_items", args=[beta.pk]), body, format="json"
    )
    assert r.status_code == 400 and r.json()["field"] == "item"
    alice = token_client(users["alice"])
    for bad, field in [
        ({"role": "examples"}, "role"),
        ({"item": 10**12}, "item"),
        ({"item": -1}, "item"),
        ({"reference": {"item.choice": "z" * 10_000}}, "reference"),
        ({"reference": {"item.justification": "x"}}, "reference"),
        ({"explanation": ""}, "reference"),
        ({"explanation": "x" * 10_001}, "reference"),
    ]:
        r = alice.post(url, {**body, **bad}, format="json")
        assert r.status_code == 400, (bad, r.content)
        assert r.json()["field"] == field, (bad, r.json())
    assert not hiring.QualityItem.objects.exists()
    r = alice.post(url, body, format="json")
    assert r.status_code == 201 and r.json()["role"] == "example"
    assert alice.get(url).json() == [r.json()]
    assert not alpha_items[1].assignments.exists()  # no one is given it as work


def test_the_page_refuses_another_projects_item_and_absurd_values(
    alpha: Project, alpha_items: list[Item], beta: Project, users: dict[str, User], client: Client
) -> None:
    client.force_login(users["erin"])  # beta's researcher, marking alpha's item from beta
    base = {"action": "mark", "role": "example", "reference": "item.choice=a", "explanation": WHY}
    r = client.post(
        reverse("hiring", args=[beta.pk]), {**base, "item": alpha_items[0].pk}, follow=True
    )
    assert f"no item {alpha_items[0].pk} in this project" in r.content.decode()
    assert client.post(
        reverse("hiring", args=[alpha.pk]), {**base, "item": alpha_items[0].pk}
    ).status_code in (403, 404)
    client.force_login(users["alice"])
    url = reverse("hiring", args=[alpha.pk])
    for bad, message in [
        ({"explanation": "x" * 10_001}, "longer than 10,000 characters"),
        ({"explanation": "   "}, "needs an explanation"),
        ({"reference": "item.choice=" + "z" * 5000}, "is not one of"),
        ({"reference": "no equals sign"}, "unit.field=value"),
    ]:
        r = client.post(url, {**base, "item": alpha_items[0].pk, **bad}, follow=True)
        assert message in r.content.decode(), bad
    r = client.post(url, {**base, "item": 10**12}, follow=True)
    assert "no item 1000000000000 in this project" in r.content.decode()
    assert not hiring.QualityItem.objects.exists()
    assert alpha_items[0].assignments.count() == 2  # nothing withdrawn


def test_an_annotator_cannot_mark_from_the_page(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], client: Client
) -> None:
    client.force_login(users["bob"])
    r = client.post(
        reverse("hiring", args=[alpha.pk]),
        {
            "action": "mark",
            "item": alpha_items[0].pk,
            "role": "example",
            "reference": "item.choice=a",
            "explanation": WHY,
        },
    )
    assert r.status_code in (403, 404)
    assert not hiring.QualityItem.objects.exists()


def test_an_import_field_makes_an_example_that_is_never_assigned(
    alpha: Project, users: dict[str, User], client: Client
) -> None:
    from annotation.ingest import import_file
    from tests.conftest import canonical_line

    spec = {
        "comparison": {"role": "example", "reference": {"item.choice": "a"}, "explanation": WHY}
    }
    import_file(project=alpha, file="e.jsonl", text=canonical_line(9, metadata={"hiring": spec}))
    a, b = (System.objects.get(project=alpha, name=n).pk for n in (SYSTEM_A, SYSTEM_B))
    client.force_login(users["alice"])
    client.post(
        reverse("project_items", args=[alpha.pk, "comparison"]),
        {"system_a": a, "system_b": b, "k": 2, "fraction": 1, "seed": 0},
    )
    q = hiring.QualityItem.objects.get()
    assert q.role == hiring.EXAMPLE and q.item.document.external_id == "doc-9"
    assert not q.item.assignments.exists()
    assert Assignment.objects.filter(item__project=alpha).exists()  # the others were


# --- what annotators see --------------------------------------------------------------------


def test_annotators_see_the_example_read_only_with_its_answer_and_nothing_else(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], client: Client
) -> None:
    item = alpha_items[0]
    secret = "Bob's own justification, never shown to carol."
    Assignment.objects.get(item=item, annotator=users["bob"]).submit(
        {("item", "choice"): "2", ("item", "hard"): "yes", ("item", "justification"): secret},
        guideline_version=1,
    )
    example(item, {"item.choice": "a", "item.hard": "no"})
    client.force_login(users["carol"])
    page = client.get(reverse("instructions", args=[alpha.pk])).content.decode()
    section = page[page.index('<section class="examples"') :]
    section = section[: section.index('<form method="post">')]
    assert "Worked examples" in section and "Example 1 · Comparison" in section
    # the real item: its question and both claim lists, as the kind's view gives them
    view = kinds.get(item.kind).view(item, swapped=False)
    for claim in view["list1"] + view["list2"]:
        assert claim in text_of(section)
    # read-only, the reference filled in as the page names it (unswapped: List 1 is "a")
    assert "<fieldset disabled>" in section and "<button" not in section
    checked = re.findall(r'name="(\w+)" value="(\w+)"[^>]*checked', section)
    assert checked == [("choice", "1"), ("hard", "no")]
    assert "List 1 names both facts of the response; List 2 misses the year." in section
    # blinding: no system name, no other annotator's answer, no verdict
    for system in System.objects.filter(project=alpha).values_list("name", flat=True):
        assert system not in page
    assert secret not in page and "bob" not in page.lower()
    # ids stay unique on the page
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))


def test_an_example_is_not_in_the_queue_and_not_openable_as_work(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], client: Client
) -> None:
    example(alpha_items[0], {"item.choice": "a"})
    client.force_login(users["bob"])
    mine = Assignment.objects.filter(annotator=users["bob"])
    assert alpha_items[0].pk not in set(mine.values_list("item_id", flat=True))
    r = client.get(reverse("api_assignments"))
    assert r.status_code in (200, 401, 403)  # session auth or not: nothing to look for
    hire = hiring.Invite.objects.create(project=alpha, items_per_person=10)
    joined = (
        token_client(None)
        .post(reverse("api_join", args=[hire.key]), {"PROLIFIC_PID": "w1"}, format="json")
        .json()
    )
    worker = User.objects.get(auth_token__key=joined["token"])
    given = set(Assignment.objects.filter(annotator=worker).values_list("item_id", flat=True))
    assert given == {i.pk for i in alpha_items[1:]}


def demo_examples(demo: Project) -> list[kinds.KindSpec]:
    """One example per kind of the demo (real data), its reference every asked unit's
    first choice; returns the kinds in the order the page shows them. The demo's own
    worked examples (load_demo) are unmarked first: these take their place."""
    hiring.QualityItem.objects.filter(item__project=demo).delete()
    items = [demo.items.filter(kind=k).order_by("pk").first() for k in kinds.names()]
    marked = []
    for item in items:
        if item is None:
            continue
        spec = kinds.get(item.kind)
        asked = spec.expected(demo, ItemInfo.read(Item.objects.filter(pk=item.pk)))[item.pk]
        fields = spec.categorical(demo)
        example(item, {f"{u}.{f}": fields[f][0] for u, f in asked}, f"Why {item.kind}.")
        marked.append(spec)
    return marked


def test_every_kind_of_the_demo_shows_its_example(demo: Project, client: Client) -> None:
    """Real data (the demo's FActScore, VeriScore and comparison files): one example per
    kind, rendered by the kind's template."""
    marked = demo_examples(demo)
    assert len(marked) >= 3
    user = demo.annotators().first()
    assert user is not None
    client.force_login(user)
    page = client.get(reverse("instructions", args=[demo.pk])).content.decode()
    for n, spec in enumerate(marked, start=1):
        assert f"Example {n} · {spec.title}" in page and f"Why {spec.name}." in page
    for system in System.objects.filter(project=demo).values_list("name", flat=True):
        assert system not in page, system
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    assert page.count("<fieldset disabled>") == len(marked)


# --- left out of gold, agreement and exports -----------------------------------------------


def test_answers_on_an_example_are_left_out_of_gold_agreement_and_exports(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    for user in (users["bob"], users["carol"]):
        for item in alpha_items:
            Assignment.objects.get(item=item, annotator=user).submit(
                {("item", "choice"): "1", ("item", "hard"): "no"}, guideline_version=1
            )
    shown = alpha_items[0]
    assert shown.pk in {r.item for r in label_rows(alpha)}
    example(shown, {"item.choice": "a"})
    assert shown.pk not in {r.item for r in label_rows(alpha)}
    assert shown.pk not in {g.item for g in gold_values(alpha)}
    header, wide = wide_rows(alpha)
    docs = {row[header.index("document")] for row in wide}
    assert shown.document.external_id not in docs and len(docs) == 3
    long = list(long_rows(alpha))
    assert long and all(r["item"] != shown.pk for r in long)


@pytest.mark.parametrize("role", [hiring.TRAINING, hiring.CHECK])
def test_an_example_marked_again_as_training_or_check_changes_role(
    alpha_items: list[Item], role: str
) -> None:
    example(alpha_items[0], {"item.choice": "a"})
    hiring.mark(alpha_items[0], role, {"item.choice": "b"})
    q = hiring.QualityItem.objects.get()
    assert (q.role, q.reference) == (role, {"item.choice": "b"})


def test_a_new_or_changed_example_is_a_new_instructions_version(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    """The examples are shown as part of the instructions: adding one, changing its answer
    or explanation, or turning it into a training item asks annotators to acknowledge the
    instructions again; marking a training item, or the same example again, does not."""
    bob = alpha.memberships.get(user=users["bob"])
    assert bob.has_acknowledged

    def version() -> int:
        return Project.objects.get(pk=alpha.pk).instructions_version

    v0 = version()
    hiring.mark(alpha_items[1], hiring.TRAINING, {"item.choice": "a"})
    assert version() == v0
    example(alpha_items[0], {"item.choice": "a"})
    assert version() == v0 + 1
    bob.refresh_from_db()
    assert not bob.has_acknowledged
    example(alpha_items[0], {"item.choice": "a"})  # the same again: nothing new to read
    assert version() == v0 + 1
    example(alpha_items[0], {"item.choice": "a"}, why="A better explanation.")
    assert version() == v0 + 2
    hiring.mark(alpha_items[0], hiring.CHECK, {"item.choice": "a"})  # no longer shown
    assert version() == v0 + 3


def test_the_label_studio_export_leaves_examples_out(
    alpha: Project, alpha_items: list[Item], tmp_path: Path
) -> None:
    example(alpha_items[0], {"item.choice": "a"})
    out = tmp_path / "tasks.json"
    call_command("labelstudio", "export", str(alpha.pk), "--kind", "comparison", "--out", str(out))
    tasks = json.loads(out.read_text())
    assert sorted(t["data"]["meta"]["item"] for t in tasks) == [i.pk for i in alpha_items[1:]]


def test_the_api_shows_annotators_the_examples_and_no_one_else(
    alpha: Project, alpha_items: list[Item], beta: Project, users: dict[str, User]
) -> None:
    item = alpha_items[0]
    secret = "Bob's own justification, never shown to carol."
    Assignment.objects.get(item=item, annotator=users["bob"]).submit(
        {("item", "choice"): "2", ("item", "justification"): secret}, guideline_version=1
    )
    example(item, {"item.choice": "a", "item.hard": "no"})
    url = reverse("api_instruction_examples", args=[alpha.pk])
    r = token_client(users["carol"]).get(url)
    assert r.status_code == 200
    (row,) = r.json()
    view = kinds.get(item.kind).view(item, swapped=False)
    assert (row["number"], row["kind"], row["list1"], row["list2"]) == (
        1,
        "comparison",
        view["list1"],
        view["list2"],
    )
    assert row["reference"] == [
        {"unit": "item", "field": "choice", "value": "1"},
        {"unit": "item", "field": "hard", "value": "no"},
    ]
    assert row["explanation"] == (
        "List 1 names both facts of the response; List 2 misses the year."
    )
    body = r.content.decode()
    for system in System.objects.filter(project=alpha).values_list("name", flat=True):
        assert system not in body
    assert secret not in body
    # another project's annotator, a researcher (their list is quality-items), no login
    assert token_client(users["dave"]).get(url).status_code == 404
    assert token_client(users["alice"]).get(url).status_code == 404
    assert token_client(None).get(url).status_code in (401, 403)
    assert (
        token_client(users["dave"]).get(reverse("api_instruction_examples", args=[beta.pk])).json()
        == []
    )


def test_an_atomic_example_from_factscores_human_labels_shows_each_fact_labelled(
    alpha: Project, users: dict[str, User], client: Client
) -> None:
    """The real file (FActScore's released InstructGPT labels): an example whose reference
    is the published S / NS / IR of each fact, shown to an annotator fact by fact."""
    from annotation.ingest import FACTSCORE_HUMAN, FACTSCORE_LABELS, import_file
    from annotation.kinds.atomic import atomic_items
    from tests.conftest import peer_file

    lines = peer_file("factscore_labeled/InstructGPT.jsonl").read_text().splitlines()[:3]
    import_file(project=alpha, text="\n".join(lines), file="InstructGPT.jsonl")
    human = System.objects.get(project=alpha, name=FACTSCORE_HUMAN)
    item = next(i for i in atomic_items(project=alpha, system=human) if i.list_a is not None)
    r = token_client(users["alice"]).post(
        reverse("api_quality_items", args=[alpha.pk]),
        {
            "item": item.pk,
            "role": "example",
            "reference_system": FACTSCORE_LABELS,
            "explanation": "Each fact is checked against the biography's Wikipedia page.",
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    reference = r.json()["reference"]
    client.force_login(users["bob"])
    page = client.get(reverse("instructions", args=[alpha.pk])).content.decode()
    checked = re.findall(r'name="label__(fact:\d+)" value="([\w-]+)"[^>]*checked', page)
    assert {f"{unit}.label": value for unit, value in checked} == reference
    assert len(checked) == len(reference) == item.list_a.claims.count()  # type: ignore[union-attr]
    facts = item.list_a.claims.order_by("position")  # type: ignore[union-attr]
    for fact in facts:
        assert fact.text in page
    for name in (FACTSCORE_HUMAN, FACTSCORE_LABELS, "InstructGPT"):
        assert name not in text_of(page), name
    assert not item.assignments.exists()
