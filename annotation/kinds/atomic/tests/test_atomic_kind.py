"""The atomic-fact kind (FActScore's human annotation) end to end: import with knowledge
passages, item creation from the page, the API and the command, the page, the API,
blinding, gold, agreement, verifiers against the human labels, exports and Label Studio.
Everything goes through the kinds registry; nothing here is special-cased elsewhere."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation import exports, formats, labelstudio, reports
from annotation.gold import gold_values
from annotation.ingest import ImportFailed, import_file
from annotation.kinds.atomic import fact_verdicts
from annotation.models import Assignment, Document, Item, Project, System
from tests.annotation.api_helpers import token_client
from tests.annotation.conftest import FACT_LISTER, FACT_VERIFIER, atomic_line
from tests.conftest import SYSTEM_A

# bob and carol on the three facts of each item: they agree on facts 0 and 2
BOB = {
    "label__fact:0": "supported",
    "label__fact:1": "not-supported",
    "label__fact:2": "irrelevant",
}
CAROL = {"label__fact:0": "supported", "label__fact:1": "supported", "label__fact:2": "irrelevant"}


def mine(user: User) -> list[Assignment]:
    return list(
        Assignment.objects.filter(annotator=user, item__kind=Item.ATOMIC).order_by("item_id")
    )


def answer_all(users: dict[str, User]) -> None:
    for name, answers in (("bob", BOB), ("carol", CAROL)):
        client = Client()
        client.force_login(users[name])
        for a in mine(users[name]):
            client.post(reverse("assignment", args=[a.pk]), answers)


def test_knowledge_passages_import_with_the_document(alpha: Project) -> None:
    import_file(project=alpha, text=atomic_line(7), file="facts.jsonl")
    doc = Document.objects.get(project=alpha, external_id="bio-7")
    assert doc.metadata["knowledge"] == [
        {
            "title": "Person 7",
            "text": "Person 7 (1900-1970) was a painter.",
            "url": "https://en.wikipedia.org/wiki/Person_7",
        }
    ]


def test_a_bad_knowledge_passage_names_line_and_field(alpha: Project) -> None:
    bad = json.loads(atomic_line(8))
    bad["knowledge"] = [{"title": "no text"}]
    with pytest.raises(ImportFailed) as failed:
        import_file(project=alpha, text=atomic_line(9) + "\n" + json.dumps(bad), file="facts.jsonl")
    [error] = failed.value.errors
    assert (error.line, error.field) == (2, "knowledge[0]")
    assert not Document.objects.filter(external_id__in=["bio-8", "bio-9"]).exists()


def test_the_page_shows_facts_and_knowledge_but_no_system(
    alpha_atomic: list[Item], users: dict[str, User], client: Client
) -> None:
    client.force_login(users["bob"])
    a = mine(users["bob"])[0]
    body = client.get(reverse("assignment", args=[a.pk])).content.decode()
    for claim in a.item.list_a.claims.all():  # type: ignore[union-attr]
        assert claim.text in body
    assert "(1900-1970) was a painter." in body and "https://en.wikipedia.org/wiki/Person_" in body
    assert FACT_LISTER not in body and FACT_VERIFIER not in body and "unsupported" not in body
    # keys on the page: j/k between facts, s / n / i per fact
    assert 'data-key="s"' in body and 'data-key="n"' in body and 'data-key="i"' in body
    assert "next / previous fact" in body


def test_the_instructions_list_the_keys_of_the_annotators_kinds(
    alpha_atomic: list[Item], users: dict[str, User], client: Client
) -> None:
    client.force_login(users["bob"])
    body = client.get(reverse("instructions", args=[alpha_atomic[0].project_id])).content.decode()
    assert "Keyboard (Atomic facts)" in body and "next / previous fact" in body
    assert "Keyboard (Comparison)" not in body  # bob has none


def test_answers_are_stored_per_fact_and_validated(
    alpha_atomic: list[Item], users: dict[str, User], client: Client
) -> None:
    client.force_login(users["bob"])
    a = mine(users["bob"])[0]
    url = reverse("assignment", args=[a.pk])
    response = client.post(url, {**BOB, "label__fact:1": "maybe"}, headers={"HX-Request": "true"})
    assert "Select a valid choice." in response.content.decode()
    client.post(url, {"action": "draft", **BOB, "label__fact:1": "maybe"})
    a.refresh_from_db()
    assert a.status == Assignment.DRAFT
    assert a.answers_dict() == {("fact:0", "label"): "supported", ("fact:2", "label"): "irrelevant"}
    client.post(url, BOB)
    a.refresh_from_db()
    assert a.status == Assignment.SUBMITTED
    assert a.answers_dict() == {
        ("fact:0", "label"): "supported",
        ("fact:1", "label"): "not-supported",
        ("fact:2", "label"): "irrelevant",
    }


def test_another_annotator_cannot_open_the_item(
    alpha_atomic: list[Item], users: dict[str, User], client: Client
) -> None:
    client.force_login(users["dave"])
    a = mine(users["bob"])[0]
    assert client.get(reverse("assignment", args=[a.pk])).status_code == 404
    assert token_client(users["dave"]).get(f"/api/assignments/{a.pk}/").status_code == 404


def test_the_api_shows_the_same_view_and_submits_through_the_same_form(
    alpha_atomic: list[Item], users: dict[str, User]
) -> None:
    client = token_client(users["carol"])
    a = mine(users["carol"])[0]
    detail = client.get(f"/api/assignments/{a.pk}/").json()
    assert detail["kind"] == "atomic"
    assert [f["text"] for f in detail["facts"]] == [c.text for c in a.item.list_a.claims.all()]  # type: ignore[union-attr]
    assert detail["knowledge"][0]["url"].startswith("https://en.wikipedia.org/wiki/Person_")
    assert detail["list1"] is None and detail["claim"] is None
    assert FACT_LISTER not in json.dumps(detail) and FACT_VERIFIER not in json.dumps(detail)
    bad = client.post(
        f"/api/assignments/{a.pk}/submit/",
        {"answers": [{"unit": "fact:0", "field": "label", "value": "supported"}]},
        format="json",
    )
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"fact:1.label", "fact:2.label"}
    good = client.post(
        f"/api/assignments/{a.pk}/submit/",
        {
            "answers": [
                {"unit": f"fact:{p}", "field": "label", "value": v}
                for p, v in enumerate(["supported", "supported", "irrelevant"])
            ]
        },
        format="json",
    )
    assert good.status_code == 200 and good.json()["status"] == "submitted"


def test_items_are_created_from_the_page_the_api_and_the_command(
    alpha: Project, users: dict[str, User], client: Client
) -> None:
    import_file(project=alpha, text="\n".join(atomic_line(i) for i in range(3)), file="facts.jsonl")
    lister = System.objects.get(project=alpha, name=FACT_LISTER)
    client.force_login(users["alice"])
    page = client.get(reverse("project", args=[alpha.pk])).content.decode()
    assert reverse("project_items", args=[alpha.pk, "atomic"]) in page
    client.post(
        reverse("project_items", args=[alpha.pk, "atomic"]),
        {"system": lister.pk, "k": 2, "fraction": 1, "seed": 0},
    )
    assert Item.objects.filter(project=alpha, kind=Item.ATOMIC).count() == 3
    assert Assignment.objects.filter(item__kind=Item.ATOMIC).count() == 6
    # the other system's four lists through the API, then nothing left for the command
    system_a = System.objects.get(project=alpha, name=SYSTEM_A)
    created = token_client(users["alice"]).post(
        f"/api/projects/{alpha.pk}/items/atomic/", {"system": system_a.pk, "k": 1}, format="json"
    )
    assert created.status_code == 201 and created.json()["items_created"] == 4
    missing = token_client(users["alice"]).post(
        f"/api/projects/{alpha.pk}/items/atomic/", {"k": 1}, format="json"
    )
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "system"
    out = io.StringIO()
    call_command("create_items", "alpha", "atomic", FACT_LISTER, "--k", "all", stdout=out)
    assert "0 atomic item(s), 0 assignment(s)." in out.getvalue()


def test_gold_agreement_and_verifiers_come_from_the_registry(
    alpha_atomic: list[Item], users: dict[str, User]
) -> None:
    answer_all(users)
    golds = {(g.item, g.unit): g for g in gold_values(alpha_atomic[0].project, kind=Item.ATOMIC)}
    item = alpha_atomic[0].pk
    assert (
        golds[(item, "fact:0")].value == "supported"
        and golds[(item, "fact:0")].provenance == "unanimous"
    )
    assert golds[(item, "fact:1")].value is None and golds[(item, "fact:1")].provenance == "tie"
    facts = {c.pk: c.position for c in alpha_atomic[0].list_a.claims.all()}  # type: ignore[union-attr]
    verdicts = {
        facts[c]: v for c, v in fact_verdicts(alpha_atomic[0].project).items() if c in facts
    }
    assert verdicts == {0: "supported", 2: "irrelevant"}  # the tie on fact 1 has no gold
    report = reports.build_report(alpha_atomic[0].project, bootstrap=0)
    overview = report.table("agreement-overview").as_dicts()
    [row] = [r for r in overview if r["task"] == "atomic"]
    assert (row["unit"], row["field"], row["units used"], row["percent agreement"]) == (
        "fact",
        "label",
        6,
        4 / 6,
    )
    labels = {r["label"]: r["count"] for r in report.table("fact-labels").as_dicts()}
    assert labels == {
        "Supported": 2,
        "Not supported": 0,
        "Irrelevant": 2,
        "Tie (no gold label until adjudicated)": 2,
    }
    # verifier vs human: facts 0 (supported/supported) in both items; fact 2 is IR, left out
    [scores] = [r for r in report.table("verifier-scores").as_dicts() if r["level"] == "fact"]
    assert (scores["system"], scores["mode"], scores["units"], scores["accuracy"]) == (
        FACT_VERIFIER,
        "binary",
        2,
        1.0,
    )
    assert scores["excluded"] == 2


def test_exports_carry_the_facts_answers_and_gold(
    alpha_atomic: list[Item], users: dict[str, User]
) -> None:
    answer_all(users)
    project = alpha_atomic[0].project
    rows = [r for r in exports.long_rows(project) if r["kind"] == "atomic"]
    assert len(rows) == 12
    assert {(r["unit"], r["value"], r["gold"]) for r in rows if r["annotator"] == "A1"} == {
        ("fact:0", "supported", "supported"),
        ("fact:1", "not-supported", None),
        ("fact:2", "irrelevant", "irrelevant"),
    }
    header, wide = exports.wide_rows(project)
    fact_rows = [r for r in wide if r[1] == "atomic"]
    assert [r[4] for r in fact_rows] == ["fact:0", "fact:1", "fact:2"] * 2
    assert fact_rows[1][6:] == ["not-supported", "supported"]
    # FActScore's labelled format: the gold label of each fact as S / NS / IR
    records = formats.factscore_records(project, system=FACT_LISTER)
    labels = [
        f.get("label") for r in records for s in r["annotations"] for f in s["model-atomic-facts"]
    ]
    assert labels == ["S", None, "IR"] * 2


def test_label_studio_round_trip(alpha_atomic: list[Item], users: dict[str, User]) -> None:
    export = labelstudio.export_items(alpha_atomic)
    assert 'name="label_2"' in export.config and 'name="knowledge"' in export.config
    assert FACT_LISTER not in json.dumps(export.tasks) and FACT_VERIFIER not in json.dumps(
        export.tasks
    )
    task = export.tasks[0]["data"]
    assert task["fact_0"] == alpha_atomic[0].list_a.claims.get(position=0).text  # type: ignore[union-attr]
    assert "(1900-1970) was a painter." in task["knowledge"]
    answers = {
        ("fact:0", "label"): "supported",
        ("fact:1", "label"): "not-supported",
        ("fact:2", "label"): "irrelevant",
    }
    ls_export = [
        {
            "id": 1,
            "data": task,
            "annotations": [
                {"completed_by": 42, "result": labelstudio.answers_result(answers, kind="atomic")}
            ],
        }
    ]
    summary = labelstudio.import_annotations(alpha_atomic[0].project, ls_export)
    assert summary.submitted == 1, summary
    a = Assignment.objects.get(annotator__username="ls-42")
    assert a.item == alpha_atomic[0] and a.answers_dict() == answers


@pytest.mark.slow
def test_real_factscore_labels_replayed_by_two_annotators(
    alpha: Project, users: dict[str, User]
) -> None:
    """FActScore's released InstructGPT biographies: two annotators give every human atomic
    fact its published S/NS/IR label; the human labels imported as a reference verdict set
    then agree perfectly with the gold, and the FActScore export gives the labels back."""
    from django.conf import settings

    from annotation.ingest import FACTSCORE_HUMAN, FACTSCORE_LABELS
    from annotation.kinds.atomic import atomic_items
    from annotation.models import Verdict, assign

    text = (settings.BASE_DIR / "fixtures" / "demo" / "factscore_InstructGPT_30.jsonl").read_text()
    import_file(project=alpha, text=text, file="InstructGPT.jsonl")
    items = atomic_items(
        project=alpha, system=System.objects.get(project=alpha, name=FACTSCORE_HUMAN)
    )
    assign(items, project=alpha, k=2, fraction=1.0, seed=0)
    published = dict(
        Verdict.objects.filter(system__name=FACTSCORE_LABELS).values_list("claim_id", "label")
    )
    ours = {"S": "supported", "NS": "not-supported", "IR": "irrelevant"}
    for a in Assignment.objects.filter(item__in=items):
        values = {
            (f"fact:{c.position}", "label"): ours[published[c.pk]]
            for c in a.item.list_a.claims.all()
        }  # type: ignore[union-attr]
        assert a.submit(values, guideline_version=1)
    report = reports.build_report(alpha, bootstrap=0)
    [scores] = [
        r
        for r in report.table("verifier-scores").as_dicts()
        if r["system"] == FACTSCORE_LABELS and r["level"] == "fact"
    ]
    n_ir = sum(1 for label in published.values() if label == "IR")
    assert scores["units"] == len(published) - n_ir and scores["excluded"] == n_ir
    assert scores["accuracy"] == 1.0 and scores["Cohen's kappa"] == 1.0
    records = formats.factscore_records(alpha, source="gold")
    given = [
        f["label"]
        for r in records
        if r["annotations"]
        for s in r["annotations"]
        for f in s.get("human-atomic-facts", [])
    ]
    assert sorted(given) == sorted(published.values())


def test_a_tied_fact_is_adjudicated_on_the_page(
    alpha_atomic: list[Item], users: dict[str, User], client: Client
) -> None:
    answer_all(users)
    project = alpha_atomic[0].project
    client.force_login(users["alice"])
    url = reverse("adjudication", args=[project.pk]) + "?kind=atomic"
    page = client.get(url).content.decode()
    fact = alpha_atomic[0].list_a.claims.get(position=1).text  # type: ignore[union-attr]
    assert "fact:1" in page and fact in page and "A1" in page and "bob" not in page
    client.post(
        url, {"item": alpha_atomic[0].pk, "unit": "fact:1", "field": "label", "value": "perhaps"}
    )
    client.post(
        url,
        {
            "item": alpha_atomic[0].pk,
            "unit": "fact:1",
            "field": "label",
            "value": "not-supported",
            "note": "The source says sculptor.",
        },
    )
    [g] = [
        g
        for g in gold_values(project, kind=Item.ATOMIC)
        if (g.item, g.unit) == (alpha_atomic[0].pk, "fact:1")
    ]
    assert (g.value, g.provenance, g.note) == (
        "not-supported",
        "adjudicated",
        "The source says sculptor.",
    )


def test_sentence_marks_keep_the_response_whole() -> None:
    from annotation.kinds.atomic import sentence_pieces

    response = "A was born in 1900. B is a city. A was born in 1900. Not a fact here."
    pieces, found = sentence_pieces(
        response,
        ["A was born in 1900.", "A was born in 1900.", "Missing sentence.", "B is a city.", ""],
    )
    assert "".join(p["text"] for p in pieces) == response  # nothing dropped or repeated
    assert found == {"A was born in 1900.": 1, "B is a city.": 2}
    assert [p["sentence"] for p in pieces] == [1, None, 2, None]
