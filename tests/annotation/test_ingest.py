from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.ingest import (
    FACTSCORE_HUMAN,
    FACTSCORE_LABELS,
    FACTSCORE_MODEL,
    ImportFailed,
    import_file,
)
from annotation.models import Claim, ClaimList, Document, Project, System, Verdict
from tests.conftest import SYSTEM_A, SYSTEM_B, canonical_line

PEER = settings.BASE_DIR / "fixtures" / "demo"


@pytest.fixture
def project(db: None) -> Project:
    return Project.objects.create(name="imports")


def counts() -> tuple[int, int, int, int]:
    return (
        Document.objects.count(),
        ClaimList.objects.count(),
        Claim.objects.count(),
        System.objects.count(),
    )


def test_it_imports_the_canonical_format(project: Project) -> None:
    line = canonical_line(1, metadata={"k": "v"})
    summary = import_file(project=project, text=line + "\n", file="c.jsonl")
    doc = Document.objects.get(external_id="doc-1")
    assert (doc.question, doc.domain, doc.source_model, doc.metadata) == (
        "Who was person 1?",
        "Biography",
        "model-x",
        {"k": "v"},
    )
    lists = {cl.system.name: [c.text for c in cl.claims.all()] for cl in doc.claim_lists.all()}
    assert lists == {
        SYSTEM_A: ["Person 1 was born in 1900.", "Person 1 was a painter."],
        SYSTEM_B: ["Person 1 was a painter born in 1900."],
    }
    assert summary.documents_created == 1 and summary.claims_created == 3


def test_canonical_claims_may_be_objects_with_sentence_index(project: Project) -> None:
    line = json.dumps(
        {
            "id": 7,
            "response": "A. B.",
            "claim_lists": {
                "s": [{"text": "A", "sentence_index": 0}, {"text": "B", "sentence_index": 1}]
            },
        }
    )
    import_file(project=project, text=line, file="c.jsonl")
    assert list(Claim.objects.values_list("text", "sentence_index")) == [("A", 0), ("B", 1)]
    assert Document.objects.get().external_id == "7"


def test_reimporting_the_same_file_adds_nothing(project: Project) -> None:
    text = "\n".join(canonical_line(i) for i in range(3))
    import_file(project=project, text=text, file="c.jsonl")
    before = counts()
    summary = import_file(project=project, text=text, file="c.jsonl")
    assert counts() == before
    assert summary.documents_created == 0 and summary.documents_existing == 3
    assert summary.claim_lists_existing == 6


def test_a_new_system_for_an_existing_document_is_added(project: Project) -> None:
    import_file(project=project, text=canonical_line(1), file="c.jsonl")
    line = canonical_line(1, claim_lists={"third": ["X."]})
    summary = import_file(project=project, text=line, file="more.jsonl")
    assert (summary.documents_existing, summary.claim_lists_created) == (1, 1)
    assert Document.objects.count() == 1
    assert ClaimList.objects.filter(system__name="third").count() == 1


VERISCORE_CLAIMS = [
    {
        "question": "Why is the sky blue?",
        "response": "Rayleigh scattering. It is short.",
        "model": "gpt-4o",
        "prompt_source": "ELI5",
        "abstained": False,
        "claim_list": [["Rayleigh scattering makes the sky blue."], ["No verifiable claim."], None],
        "all_claims": ["Rayleigh scattering makes the sky blue."],
    },
    # the older schema: all_claim_lst, and a claim repeated across sentences
    {
        "response": "Paris is in France. Paris is big.",
        "model": "gpt-4o",
        "prompt_source": "Wiki",
        "abstained": False,
        "claim_list": [["Paris is in France."], ["Paris is in France.", "Paris is big."]],
        "all_claim_lst": ["Paris is in France.", "Paris is big."],
    },
    {
        "question": "Tell me something.",
        "response": "I cannot answer that.",
        "model": "gpt-4o",
        "prompt_source": "ELI5",
        "abstained": True,
        "claim_list": [],
        "all_claims": [],
    },
]


def test_it_imports_veriscore_claim_files(project: Project) -> None:
    text = "\n".join(json.dumps(r) for r in VERISCORE_CLAIMS)
    summary = import_file(project=project, text=text, file="claims_gpt4o.jsonl")
    assert summary.format == "veriscore" and summary.documents_created == 3
    system = System.objects.get(project=project)
    assert system.name == "veriscore"
    docs = list(Document.objects.order_by("id"))
    assert [d.domain for d in docs] == ["ELI5", "Wiki", "ELI5"]
    assert docs[0].source_model == "gpt-4o"
    first = ClaimList.objects.get(document=docs[0])
    assert list(first.claims.values_list("text", "sentence_index")) == [
        ("Rayleigh scattering makes the sky blue.", 0)
    ]
    second = ClaimList.objects.get(document=docs[1])
    assert list(second.claims.values_list("text", "sentence_index")) == [
        ("Paris is in France.", 0),
        ("Paris is big.", 1),
    ]
    third = ClaimList.objects.get(document=docs[2])
    assert third.abstained and third.claims.count() == 0
    # no "No verifiable claim." placeholder becomes a claim
    assert not Claim.objects.filter(text__icontains="verifiable").exists()
    # re-import: stable ids derived from the content
    import_file(project=project, text=text, file="claims_gpt4o.jsonl")
    assert Document.objects.count() == 3


def test_veriscore_system_name_can_be_chosen(project: Project) -> None:
    import_file(
        project=project,
        text=json.dumps(VERISCORE_CLAIMS[0]),
        file="x.jsonl",
        system="veriscore-llama3",
    )
    assert System.objects.get().name == "veriscore-llama3"


def test_it_imports_the_real_veriscore_sample(project: Project) -> None:
    path = settings.BASE_DIR / "fixtures" / "pipeline" / "data_sample.jsonl"
    import_file(project=project, text=path.read_text(), file=path.name)
    claims = Claim.objects.filter(claim_list__document__project=project)
    assert claims.count() == 25  # the README: 25 unique claims


def test_it_imports_factscore_labelled_files(project: Project) -> None:
    text = (PEER / "factscore_InstructGPT_30.jsonl").read_text()
    summary = import_file(project=project, text=text, file="InstructGPT.jsonl")
    assert summary.documents_created == 30
    doc = Document.objects.get(external_id="InstructGPT:Doug Sheehan")
    assert doc.question == "Tell me a bio of Doug Sheehan." and doc.source_model == "InstructGPT"
    model = ClaimList.objects.get(document=doc, system__name=FACTSCORE_MODEL)
    human = ClaimList.objects.get(document=doc, system__name=FACTSCORE_HUMAN)
    assert model.claims.first().text == "Doug Sheehan is an American actor."  # type: ignore[union-attr]
    first_human = human.claims.first()
    assert first_human is not None and first_human.text == "Doug Sheehan is an American."
    assert first_human.sentence_index == 0 and first_human.sentence.startswith("Doug Sheehan is an")
    # S/NS/IR labels kept as a human reference verdict set, one per human fact
    assert Verdict.objects.get(claim=first_human).label == "S"
    assert System.objects.get(name=FACTSCORE_LABELS).kind == System.REFERENCE
    raw = [json.loads(line) for line in text.splitlines()]
    n_labels = sum(
        1
        for r in raw
        for a in r["annotations"]
        for f in a["human-atomic-facts"] or []
        if f.get("label")
    )
    assert Verdict.objects.count() == n_labels


def test_factscore_abstained_rows_are_kept_as_abstentions(project: Project) -> None:
    line = json.dumps(
        {
            "input": "Question: Tell me a bio of X.",
            "output": "I don't know X.",
            "topic": "X",
            "annotations": None,
        }
    )
    import_file(project=project, text=line, file="ChatGPT.jsonl")
    assert all(ClaimList.objects.values_list("abstained", flat=True))


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ("{not json", "line 2: not valid JSON"),
        ('["a list"]', "line 2: must be a JSON object, not a list"),
        (json.dumps({"id": "x", "claim_lists": {}}), "line 2, field 'response': is missing"),
        (
            json.dumps({"id": "x", "response": 42}),
            "line 2, field 'response': must be a string, not a number",
        ),
        (
            json.dumps({"id": "x", "response": "r", "claim_lists": {"s": "one claim"}}),
            "line 2, field 'claim_lists.s': must be a list of claims, not a string",
        ),
        (
            json.dumps({"id": "x", "response": "r", "claim_lists": {"s": ["ok", 3]}}),
            "line 2, field 'claim_lists.s[1]': must be a string or an object",
        ),
        (
            json.dumps({"id": ["x"], "response": "r"}),
            "line 2, field 'id': must be a string or an integer, not a list",
        ),
        (canonical_line(0), "line 2, field 'id': duplicate id 'doc-0' (first on line 1)"),
    ],
)
def test_a_bad_line_imports_nothing_and_says_where(
    project: Project, bad: str, expected: str
) -> None:
    text = "\n".join([canonical_line(0), bad, canonical_line(2)])
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=text, file="bad.jsonl", fmt="canonical")
    assert f"bad.jsonl, {expected}" in str(e.value)
    assert counts() == (0, 0, 0, 0)


def test_bad_factscore_labels_are_refused(project: Project) -> None:
    line = json.dumps(
        {
            "input": "Q",
            "output": "O",
            "topic": "T",
            "annotations": [{"text": "s", "human-atomic-facts": [{"text": "f", "label": "maybe"}]}],
        }
    )
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=line, file="f.jsonl", fmt="factscore")
    assert "field 'annotations[0].human-atomic-facts[0].label': must be S, NS or IR" in str(e.value)


def test_bad_veriscore_claims_are_refused(project: Project) -> None:
    row = dict(VERISCORE_CLAIMS[0], all_claims=["fine", {"claim": "not a string"}])
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=json.dumps(row), file="claims.jsonl")
    assert "line 1, field 'all_claims[1]': must be a string, not an object" in str(e.value)


def test_every_error_of_a_file_is_listed(project: Project) -> None:
    text = "{\n" + json.dumps({"id": "x"}) + "\n"
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=text, file="f.jsonl")
    assert [(err.line, err.field) for err in e.value.errors] == [(1, ""), (2, "response")]


def test_an_empty_file_is_an_error(project: Project) -> None:
    with pytest.raises(ImportFailed, match="holds no records"):
        import_file(project=project, text="\n\n", file="empty.jsonl")


def test_the_command_imports_and_reports_errors(project: Project, tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text(canonical_line(1))
    call_command("import_data", str(project.pk), str(good))
    assert Document.objects.count() == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text(canonical_line(2) + "\n{oops\n")
    with pytest.raises(CommandError, match=r"bad.jsonl, line 2: not valid JSON"):
        call_command("import_data", "imports", str(bad))
    assert Document.objects.count() == 1
