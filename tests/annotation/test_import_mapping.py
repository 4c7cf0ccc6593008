"""Any other layout through a mapping file of JMESPath expressions: FELM's combined file
and an invented nested claim-level benchmark, as docs/researchers/importing.md shows them."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.ingest import ImportFailed, import_file
from annotation.models import Claim, Document, Project, Segment, System

DATA = Path(__file__).parent / "data" / "mapping"


@pytest.fixture
def project(db: None) -> Project:
    return Project.objects.create(name="mapped")


def test_felm_combined_file_through_its_mapping(project: Project) -> None:
    out = io.StringIO()
    call_command(
        "import_data",
        "mapped",
        str(DATA / "felm_combined.jsonl"),
        "--mapping",
        str(DATA / "felm_combined.yaml"),
        stdout=out,
    )
    assert "mapping: 2 new document(s)" in out.getvalue()
    doc = Document.objects.get(external_id="felm:science:0")
    assert (doc.question, doc.domain, doc.source_model) == (
        "Why is the sky blue?",
        "science",
        "chatgpt",
    )
    segments = Segment.objects.filter(document=doc).order_by("position")
    assert [(s.text, [v.label for v in s.verdicts.all()]) for s in segments] == [
        ("Rayleigh scattering.", ["true"]),
        ("Blue light scatters less.", ["false"]),
    ]
    assert System.objects.get(name="felm-labels").kind == System.REFERENCE
    assert Document.objects.filter(external_id="felm:math:0").exists()


def test_a_nested_benchmark_through_its_mapping(project: Project) -> None:
    summary = import_file(
        project=project,
        path=DATA / "nested_claims.jsonl",
        file="nested_claims.jsonl",
        mapping=(DATA / "nested_claims.yaml").read_text(),
    )
    assert summary.documents_created == 2 and summary.claims_created == 3
    doc = Document.objects.get(external_id="q1")
    assert (doc.domain, doc.source_model) == ("art", "model-z")
    claims = list(Claim.objects.filter(claim_list__document=doc).order_by("position"))
    assert [(c.text, c.sentence_index, c.sentence) for c in claims] == [
        ("Leonardo da Vinci painted the Mona Lisa.", 0, "Leonardo da Vinci painted it."),
        ("Leonardo finished the Mona Lisa in 1700.", 1, "He finished it in 1700."),
    ]
    assert [[v.label for v in c.verdicts.all()] for c in claims] == [
        ["supported"],
        ["contradicted"],
    ]
    assert [(e.title, e.link) for e in claims[1].evidence.all()] == [
        ("Leonardo", "https://en.wikipedia.org/wiki/Leonardo_da_Vinci"),
        ("Paris", "https://example.org/paris"),
    ]
    assert doc.metadata["evidence_stances"] == {
        "nested-bench-claims": [["supports"], ["contradicts", "inconclusive"]]
    }
    assert any("evidence stances have no column" in w.message for w in summary.warnings)
    assert System.objects.get(name="nested-bench-labels").kind == System.REFERENCE


def test_an_expression_that_finds_nothing_names_itself_and_the_line(project: Project) -> None:
    mapping = "id: uid\nresponse: answer.txt\n"
    with pytest.raises(ImportFailed) as e:
        import_file(
            project=project,
            path=DATA / "nested_claims.jsonl",
            file="nested_claims.jsonl",
            mapping=mapping,
        )
    assert (
        "nested_claims.jsonl, line 1, field 'response': the expression 'answer.txt' found nothing"
    ) in str(e.value)
    assert Document.objects.count() == 0


def test_an_unmapped_label_and_a_bad_expression_are_errors(project: Project) -> None:
    mapping = (DATA / "nested_claims.yaml").read_text().replace("  unknown: inconclusive\n", "")
    with pytest.raises(ImportFailed, match=r"line 2, field 'claims\[0\].label': label 'unknown'"):
        import_file(
            project=project,
            text=(DATA / "nested_claims.jsonl").read_text(),
            file="nested_claims.jsonl",
            mapping=mapping,
        )
    with pytest.raises(ImportFailed, match=r"my.yaml, field 'question': is not a JMESPath"):
        import_file(
            project=project,
            text=json.dumps({"r": "x"}) + "\n",
            file="f.jsonl",
            mapping="response: r\nquestion: 'a[['\n",
            mapping_file="my.yaml",
        )
    assert Document.objects.count() == 0


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ("response: r\nclaims: text\n", "m.yaml, field 'claims': must be a mapping"),
        ("response: r\nclaims: {evidence: e}\n", "field 'claims.evidence': must be a mapping"),
        ("response: r\nvalues: [a]\n", "field 'values': must be a mapping"),
        ("response: r\nanswer: a\n", "field 'answer': is not a mapping key"),
        ("[1, 2]\n", "field 'response': the mapping must say where it is"),
        ("response: [r\n", "m.yaml: not valid YAML or JSON"),
    ],
)
def test_a_malformed_mapping_is_an_error_naming_the_key(
    project: Project, mapping: str, message: str
) -> None:
    with pytest.raises(ImportFailed, match=re.escape(message)):
        import_file(
            project=project,
            text='{"r": "x"}\n',
            file="f.jsonl",
            mapping=mapping,
            mapping_file="m.yaml",
        )
    assert Document.objects.count() == 0
