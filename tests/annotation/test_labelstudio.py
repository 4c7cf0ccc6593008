"""Label Studio mapping both ways, against saved exports in Label Studio's JSON format."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotation import labelstudio
from annotation.kinds.segment import segment_items
from annotation.models import Assignment, Claim, Evidence, Item, Membership, Project, Segment
from tests.conftest import SYSTEM_A, SYSTEM_B

DATA = Path(__file__).parent / "data"


def saved_export(name: str, items: list[Item]) -> list[dict[str, Any]]:
    """A saved export with its placeholder item ids ("ITEM0", ...) set to real ones."""
    tasks = json.loads((DATA / f"labelstudio_{name}_export.json").read_text())
    for task in tasks:
        task["data"]["meta"]["item"] = items[
            int(task["data"]["meta"]["item"].removeprefix("ITEM"))
        ].pk
    return tasks


@pytest.fixture
def verification_item(alpha: Project) -> Item:
    claim = Claim.objects.filter(
        claim_list__system__name=SYSTEM_A, claim_list__document__project=alpha
    ).first()
    assert claim is not None
    for rank in (1, 2):
        Evidence.objects.create(
            claim=claim,
            rank=rank,
            title=f"Result {rank}",
            snippet=f"Snippet {rank}",
            link=f"https://example.org/{rank}",
        )
    return Item.objects.create(
        project=alpha, kind=Item.VERIFICATION, claim=claim, document=claim.claim_list.document
    )


@pytest.fixture
def segment_item(alpha: Project) -> Item:
    doc = alpha.documents.first()
    assert doc is not None
    Segment.objects.bulk_create(
        [
            Segment(document=doc, position=0, text="Person 0 was born in 1900."),
            Segment(document=doc, position=1, text="Person 0 was a painter."),
        ]
    )
    return segment_items(project=alpha, documents=alpha.documents.filter(pk=doc.pk))[0]


def control_names(config: str) -> set[str]:
    root = ET.fromstring(config)
    return {el.get("name") for el in root.iter() if el.tag in ("Choices", "TextArea")}  # type: ignore[misc]


def test_configs_mirror_our_fields(alpha: Project) -> None:
    assert control_names(labelstudio.label_config(Item.COMPARISON, project=alpha)) == {
        "choice",
        "hard",
        "justification",
    }
    assert control_names(labelstudio.label_config(Item.VERIFICATION, slots=3, project=alpha)) == {
        "stance_1",
        "stance_2",
        "stance_3",
        "label",
    }
    names = control_names(labelstudio.label_config(Item.SEGMENT, slots=2, project=alpha))
    assert names == {
        "keep",
        *(f"{f}_{p}" for f in ("correct", "error_type", "reason", "links") for p in (0, 1)),
    }
    assert control_names(labelstudio.label_config(Item.ATOMIC, slots=2, project=alpha)) == {
        "label_0",
        "label_1",
        "reason_0",
        "reason_1",
    }


def test_tasks_carry_texts_and_order_but_never_system_names(
    alpha_items: list[Item], verification_item: Item, segment_item: Item
) -> None:
    export = labelstudio.export_items(alpha_items, seed=5)
    text = json.dumps(export.tasks) + export.config
    assert SYSTEM_A not in text and SYSTEM_B not in text
    for item, task in zip(alpha_items, export.tasks, strict=True):
        meta = task["data"]["meta"]
        assert meta["item"] == item.pk and meta["kind"] == "comparison"
        first = item.list_b if meta["swapped"] else item.list_a
        assert task["data"]["list1_claims"] == [c.text for c in first.claims.all()]
        assert meta["order"] == (["b", "a"] if meta["swapped"] else ["a", "b"])
    assert {t["data"]["meta"]["swapped"] for t in export.tasks} == {
        True,
        False,
    }  # seed 5 draws both
    v = labelstudio.export_items([verification_item])
    assert v.tasks[0]["data"]["evidence_2"].startswith("Result 2")
    assert [e["link"] for e in v.tasks[0]["data"]["evidence"]] == [
        "https://example.org/1",
        "https://example.org/2",
    ]
    s = labelstudio.export_items([segment_item])
    assert s.tasks[0]["data"]["segment_1"] == "Person 0 was a painter."
    # every $variable of the config is in every task
    for exp in (export, v, s):
        variables = {el.get("value", "")[1:] for el in ET.fromstring(exp.config).iter("Text")}
        assert all(variables <= set(t["data"]) for t in exp.tasks)


def test_a_saved_comparison_export_becomes_pseudonymous_answers(
    alpha: Project, alpha_items: list[Item]
) -> None:
    items = alpha_items[:2]
    summary = labelstudio.import_annotations(alpha, saved_export("comparison", items))
    assert (summary.submitted, summary.drafts, summary.skipped) == (2, 1, 1)
    assert "justify" in summary.errors[0]
    ls1, ls2 = User.objects.get(username="ls-1"), User.objects.get(username="ls-2")
    assert not ls1.is_active and not ls1.has_usable_password()
    assert alpha.role_of(ls1) == alpha.role_of(ls2) == Membership.ANNOTATOR
    first = Assignment.objects.get(item=items[0], annotator=ls1)
    assert first.status == "submitted" and not first.swapped
    assert first.answers_dict() == {
        ("item", "choice"): "1",
        ("item", "hard"): "no",
        (
            "item",
            "justification",
        ): "List 1 splits the birth year and the profession into two claims.",
    }
    assert (
        Assignment.objects.get(item=items[0], annotator=ls2).answers_dict()[("item", "hard")]
        == "yes"
    )
    draft = Assignment.objects.get(item=items[1], annotator=ls1)
    assert draft.status == "draft" and draft.swapped  # the task's presentation order is kept
    assert Assignment.objects.get(item=items[1], annotator=ls2).status == "skipped"
    # pulling the same export again changes nothing
    again = labelstudio.import_annotations(alpha, saved_export("comparison", items))
    assert again.submitted == 0 and again.unchanged == 2


def test_saved_verification_and_segment_exports(
    alpha: Project, verification_item: Item, segment_item: Item
) -> None:
    labelstudio.import_annotations(alpha, saved_export("verification", [verification_item]))
    labelstudio.import_annotations(alpha, saved_export("segment", [segment_item]))
    v = Assignment.objects.get(item=verification_item)
    assert v.status == "submitted"
    assert v.answers_dict() == {
        ("evidence:1", "stance"): "supports",
        ("evidence:2", "stance"): "inconclusive",
        ("item", "label"): "supported",
    }
    s = Assignment.objects.get(item=segment_item)
    assert s.status == "submitted"
    assert s.answers_dict()[("segment:1", "error_type")] == "knowledge error"
    assert s.answers_dict()[("segment:1", "links")] == "https://en.wikipedia.org/wiki/Painting"
    assert s.answers_dict()[("segment:0", "correct")] == "true"
    assert s.answers_dict()[("item", "keep")] == "keep"


@pytest.mark.parametrize(
    "answers,kind",
    [
        (
            {
                ("item", "choice"): "2",
                ("item", "hard"): "yes",
                ("item", "justification"): "Because.\nTwo lines.",
            },
            "comparison",
        ),
        (
            {
                ("evidence:1", "stance"): "contradicts",
                ("evidence:10", "stance"): "supports",
                ("item", "label"): "inconclusive-conflicting",
            },
            "verification",
        ),
        (
            {
                ("segment:0", "correct"): "false",
                ("segment:0", "error_type"): "overclaim",
                ("segment:0", "reason"): "Too strong.",
                ("segment:0", "links"): "https://a.org\nhttps://b.org",
                ("item", "keep"): "remove",
            },
            "segment",
        ),
        (
            {
                ("fact:0", "label"): "supported",
                ("fact:1", "label"): "not-supported",
                ("fact:12", "label"): "irrelevant",
            },
            "atomic",
        ),
    ],
)
def test_answers_map_to_results_and_back(answers: dict[tuple[str, str], str], kind: str) -> None:
    results = labelstudio.answers_result(answers, kind=kind)
    assert all({"from_name", "to_name", "type", "value"} <= set(r) for r in results)
    back = {
        (a["unit"], a["field"]): a["value"] for a in labelstudio.result_answers(results, kind=kind)
    }
    assert back == answers


def test_the_command_exports_and_imports_files(
    alpha: Project, alpha_items: list[Item], tmp_path: Path
) -> None:
    out = tmp_path / "tasks.json"
    call_command("labelstudio", "export", str(alpha.pk), "--kind", "comparison", "--out", str(out))
    tasks = json.loads(out.read_text())
    assert len(tasks) == 4 and (tmp_path / "tasks.xml").read_text().startswith("<View>")
    # annotate them as Label Studio would, then import the export file
    for i, task in enumerate(tasks):
        task["id"] = i + 1
        task["annotations"] = [
            {
                "id": i + 1,
                "completed_by": 7,
                "was_cancelled": False,
                "result": labelstudio.answers_result(
                    {
                        ("item", "choice"): "2",
                        ("item", "hard"): "no",
                        ("item", "justification"): "The second list is more complete here.",
                    },
                    kind="comparison",
                ),
            }
        ]
    file = tmp_path / "export.json"
    file.write_text(json.dumps(tasks))
    call_command("labelstudio", "import", "alpha", str(file))
    ls7 = User.objects.get(username="ls-7")
    done = Assignment.objects.filter(annotator=ls7, status="submitted")
    assert done.count() == 4
    # the stored order is the task's, so "2" means the list shown second in Label Studio
    for a in done:
        task = next(t for t in tasks if t["data"]["meta"]["item"] == a.item_id)
        assert a.swapped == task["data"]["meta"]["swapped"]
