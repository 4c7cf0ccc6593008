"""The field's files go in as published and come back out intact; oddities are warnings."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation import formats
from annotation.ingest import FACTSCORE_LABELS, FELM_LABELS, ImportFailed, import_file
from annotation.models import Claim, Document, Evidence, Project, Segment, Verdict
from tests.conftest import canonical_line, peer_file


@pytest.fixture
def project(db: None) -> Project:
    return Project.objects.create(name="published")


def records(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["InstructGPT", "ChatGPT", "PerplexityAI"])
def test_factscore_labelled_files_import_and_export_unchanged(project: Project, name: str) -> None:
    path = peer_file(f"factscore_labeled/{name}.jsonl")
    summary = import_file(project=project, text=path.read_bytes(), file=path.name)
    assert summary.documents_created == 183 and summary.warnings == []
    out = formats.factscore_records(project, source=FACTSCORE_LABELS, source_model=name)
    assert out == records(path.read_text())


@pytest.mark.slow
def test_factscore_files_of_three_models_keep_apart(project: Project) -> None:
    for name in ("InstructGPT", "ChatGPT"):
        path = peer_file(f"factscore_labeled/{name}.jsonl")
        import_file(project=project, text=path.read_bytes(), file=path.name)
    assert Document.objects.count() == 366
    both = formats.factscore_records(project, source=FACTSCORE_LABELS)
    assert {r["source_model"] for r in both} == {"InstructGPT", "ChatGPT"}
    # an export of several models imports again, each record under its model
    other = Project.objects.create(name="again")
    import_file(project=other, text=formats._jsonl(both), file="both.jsonl")
    assert formats.factscore_records(
        other, source=FACTSCORE_LABELS, source_model="ChatGPT"
    ) == records(peer_file("factscore_labeled/ChatGPT.jsonl").read_text())


def test_the_veriscore_sample_imports_and_exports_unchanged(project: Project) -> None:
    path = peer_file("veriscore/data_sample.jsonl")
    summary = import_file(project=project, text=path.read_bytes(), file=path.name)
    assert summary.warnings == []
    assert formats.veriscore_records(project, system="veriscore") == records(path.read_text())


def test_the_abstention_row_with_an_empty_output_imports(project: Project) -> None:
    line = {
        "input": "Question: Tell me a bio of X.",
        "output": "",
        "topic": "X",
        "cat": [],
        "annotations": None,
    }
    labelled = {
        "input": "Question: Tell me a bio of Y.",
        "output": "Y sings.",
        "topic": "Y",
        "cat": [],
        "annotations": [
            {
                "text": "Y sings.",
                "is-relevant": True,
                "model-atomic-facts": [{"text": "Y sings."}],
                "human-atomic-facts": [{"text": "Y sings.", "label": "S"}],
            }
        ],
    }
    summary = import_file(project=project, text=jsonl(line, labelled), file="InstructGPT.jsonl")
    assert summary.warnings == []
    doc = Document.objects.get(external_id="InstructGPT:X")
    assert doc.response == "" and all(doc.claim_lists.values_list("abstained", flat=True))
    assert formats.factscore_records(project, source=FACTSCORE_LABELS) == [line, labelled]


FELM_MATH = {
    "index": "0",
    "source": "math",
    "prompt": "What is 2 + 3 * 4?",
    "response": "First 3 * 4 = 12. Then 2 + 12 = 14.",
    "segmented_response": ["First 3 * 4 = 12.", "Then 2 + 12 = 14."],
    "labels": [True, True],
    "comment": ["", ""],
    "type": [None, None],
    "ref": [],
}
FELM_SCIENCE = {
    **FELM_MATH,
    "source": "science",
    "prompt": "Why is the sky blue?",
    "response": "Rayleigh scattering.",
    "segmented_response": ["Rayleigh scattering."],
    "labels": [True],
    "comment": [""],
    "type": [None],
}


def jsonl(*rows: dict[str, object]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def test_two_felm_domain_files_keep_both(project: Project) -> None:
    import_file(project=project, text=jsonl(FELM_MATH), file="math.jsonl")
    summary = import_file(project=project, text=jsonl(FELM_SCIENCE), file="science.jsonl")
    assert summary.documents_created == 1
    assert set(Document.objects.values_list("external_id", "domain")) == {
        ("felm:math:0", "math"),
        ("felm:science:0", "science"),
    }


def test_felm_domain_option_and_combined_file(project: Project) -> None:
    import_file(project=project, text=jsonl(FELM_MATH), file="felm_a.jsonl", domain="math")
    combined = {**FELM_SCIENCE, "domain": "science", "ref_contents": "Rayleigh, 1871."}
    import_file(project=project, text=jsonl(combined), file="all.jsonl")
    assert set(Document.objects.values_list("external_id", flat=True)) == {
        "felm:math:0",
        "felm:science:0",
    }
    [out] = formats.felm_records(project, source=FELM_LABELS, source_model="chatgpt")[1:]
    assert out == combined


@pytest.mark.parametrize(
    ("change", "field", "warning"),
    [
        ({"response": math.nan}, "response", "is NaN: read as the segments joined by a space"),
        (
            {"ref": "http://example.org/a"},
            "ref",
            "is a string, not a list: read as a one-item list",
        ),
        (
            {
                "segmented_response": ["First.", "", "Third."],
                "labels": [True, False, True],
                "comment": ["", "", ""],
                "type": [None, None, None],
            },
            "segmented_response[1]",
            "is empty: kept with its label, never shown as an annotation unit",
        ),
        (
            {"labels": [True] * 16},
            "labels",
            "has 16 labels for 2 segments: the extra 14 are kept in metadata",
        ),
    ],
)
def test_felm_oddities_import_with_a_warning_and_export_as_published(
    project: Project, change: dict[str, object], field: str, warning: str
) -> None:
    row = {**FELM_MATH, **change}
    summary = import_file(project=project, text=jsonl(row), file="math.jsonl")
    assert [(w.line, w.field, w.message) for w in summary.warnings] == [(1, field, warning)]
    [out] = formats.felm_records(project, source=FELM_LABELS)
    assert json.dumps(out) == json.dumps(row)  # NaN compares unequal to itself; its text does not


def test_a_felm_response_of_nan_reads_as_the_joined_segments(project: Project) -> None:
    import_file(project=project, text=jsonl({**FELM_MATH, "response": math.nan}), file="math.jsonl")
    assert Document.objects.get().response == "First 3 * 4 = 12. Then 2 + 12 = 14."


def test_an_empty_felm_segment_is_kept_but_never_an_annotation_unit(project: Project) -> None:
    row = {
        **FELM_MATH,
        "segmented_response": ["First.", "", "Third."],
        "labels": [True, False, True],
    }
    import_file(project=project, text=jsonl(row), file="math.jsonl")
    assert list(Segment.objects.values_list("text", flat=True)) == ["First.", "", "Third."]
    assert Verdict.objects.filter(segment__text="").get().label == "false"
    assert list(Segment.objects.shown().values_list("position", flat=True)) == [0, 2]


@pytest.mark.parametrize("separator", ["\u0085", "\u2028"])
def test_a_unicode_line_break_inside_a_string_is_text(project: Project, separator: str) -> None:
    row = {**FELM_MATH, "comment": [f"one{separator}two", ""]}
    text = jsonl(row, {**FELM_MATH, "index": "1"}) + "{broken\n"
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=text, file="math.jsonl")
    assert [(err.line, err.message) for err in e.value.errors] == [
        (3, "not valid JSON (Expecting property name enclosed in double quotes at column 2)")
    ]
    import_file(project=project, text=jsonl(row), file="math.jsonl")
    assert Document.objects.get().metadata["comment"][0] == f"one{separator}two"


def test_an_unterminated_string_is_reported_without_a_doubled_word(project: Project) -> None:
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text='{"id": "x', file="c.jsonl")
    assert "at at" not in str(e.value) and "Unterminated string starting at column 8" in str(
        e.value
    )


def test_a_byte_order_mark_is_accepted(project: Project) -> None:
    import_file(project=project, text=b"\xef\xbb\xbf" + canonical_line(1).encode(), file="c.jsonl")
    assert Document.objects.get().external_id == "doc-1"


def test_a_latin1_file_is_reported_by_line(project: Project) -> None:
    second = json.dumps(
        json.loads(canonical_line(2, question="Qui était Gödel ?")), ensure_ascii=False
    )
    data = (canonical_line(1) + "\n" + second).encode("latin-1")
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=data, file="c.jsonl")
    [err] = e.value.errors
    assert err.line == 2 and "is not UTF-8 text (byte 0xe9 at column 34)" in err.message


def test_a_pretty_printed_json_array_is_read_as_records(project: Project) -> None:
    rows = [json.loads(canonical_line(i)) for i in range(3)]
    summary = import_file(project=project, text=json.dumps(rows, indent=2), file="c.json")
    assert summary.documents_created == 3
    assert [str(w) for w in summary.warnings] == [
        "c.json: the file is a JSON array, not JSON Lines: read as a list of 3 record(s)"
    ]


def test_a_broken_json_array_gives_one_error_with_a_hint(project: Project) -> None:
    text = json.dumps([json.loads(canonical_line(i)) for i in range(3)], indent=2)[:-3]
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=text, file="c.json")
    [err] = e.value.errors
    assert "the file starts with '[', so it was read as one JSON array" in err.message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            canonical_line(1, abstained=[{}]),
            "field 'abstained[0]': must be a system name, not an object",
        ),
        (canonical_line(1, metadata={"score": math.nan}), "field 'metadata.score': holds nan"),
        # JSON text that decodes to an infinity without the word Infinity in it
        (
            canonical_line(1, metadata={"score": 1.5}).replace("1.5", "1e999"),
            "field 'metadata.score': holds inf",
        ),
        (
            canonical_line(1, metadata={"s": 1.5}).replace("1.5", "1" * 400 + ".0"),
            "field 'metadata.s': holds inf",
        ),
        (
            canonical_line(1, claim_lists={"x": ["\x00"]}),
            "field 'claim_lists.x[0]': contains a NUL",
        ),
        (
            canonical_line(1, question="\ud800"),
            "field 'question': contains a lone surrogate (\\ud800)",
        ),
        (canonical_line(1, question="a\x00b"), "field 'question': contains a NUL character"),
        (canonical_line(1, id="x" * 301), "field 'id': is 301 characters long; at most 300 fit"),
        (
            canonical_line(1, domain="d" * 101),
            "field 'domain': is 101 characters long; at most 100 fit",
        ),
        ('{"id": ' * 5000 + "1" + "}" * 5000, "line 1: not usable: the JSON is nested too deeply"),
    ],
)
def test_inputs_that_crashed_are_line_errors(project: Project, line: str, expected: str) -> None:
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=line, file="c.jsonl")
    assert expected in str(e.value)
    assert Document.objects.count() == 0


def test_escaped_text_that_is_fine_imports(project: Project) -> None:
    """Lines holding escapes are checked value by value; clean values pass."""
    line = canonical_line(1, question="Why 😀? NaN", metadata={"x": "\\u0000", "y": 2.5})
    assert "\\ud83d\\ude00" in line
    import_file(project=project, text=line, file="c.jsonl")
    doc = Document.objects.get()
    assert doc.question == "Why 😀? NaN" and doc.metadata == {"x": "\\u0000", "y": 2.5}


def test_the_pipeline_input_format_maps_model_and_prompt_source(project: Project) -> None:
    row = {
        "question": "Why?",
        "response": "Because.",
        "model": "gpt-4o",
        "prompt_source": "ELI5",
        "extra": 1,
    }
    summary = import_file(project=project, text=json.dumps(row), file="inputs.jsonl")
    assert summary.format == "veriscore-input"
    doc = Document.objects.get()
    assert (doc.source_model, doc.domain, doc.metadata["extra"]) == ("gpt-4o", "ELI5", 1)
    assert [(w.field, w.message.split(":")[0]) for w in summary.warnings] == [
        ("extra", "is not a veriscore-input field")
    ]


def test_unknown_canonical_keys_go_to_metadata_with_one_warning_per_key(project: Project) -> None:
    text = "\n".join(canonical_line(i, knowledge_base="kb") for i in range(3))
    summary = import_file(project=project, text=text, file="c.jsonl")
    assert [(w.line, w.field) for w in summary.warnings] == [(1, "knowledge_base")]
    assert Document.objects.filter(metadata__knowledge_base="kb").count() == 3


# --- identity ------------------------------------------------------------------------


def test_the_same_document_again_is_already_present(project: Project) -> None:
    import_file(project=project, text=canonical_line(1), file="c.jsonl")
    summary = import_file(project=project, text=canonical_line(1), file="c.jsonl")
    assert (summary.documents_created, summary.documents_existing) == (0, 1)


def test_a_known_id_with_another_response_is_an_error_naming_both(project: Project) -> None:
    import_file(project=project, text=canonical_line(1), file="a.jsonl")
    with pytest.raises(ImportFailed) as e:
        import_file(
            project=project,
            text=canonical_line(0) + "\n" + canonical_line(1, response="Other."),
            file="b.jsonl",
        )
    [err] = e.value.errors
    assert (err.line, err.field) == (2, "response")
    assert "differs from the stored document 'doc-1'" in err.message and "--update" in err.message
    assert Document.objects.count() == 1 and Document.objects.get().response.startswith("Person 1")


def test_a_different_claim_list_for_a_known_pair_is_an_error(project: Project) -> None:
    import_file(project=project, text=canonical_line(1), file="a.jsonl")
    changed = canonical_line(1, claim_lists={"zz-secret-extractor-alpha": ["Another claim."]})
    with pytest.raises(
        ImportFailed, match="claim list of system 'zz-secret-extractor-alpha' differs"
    ):
        import_file(project=project, text=changed, file="b.jsonl")


def test_update_replaces_documents_and_lists(project: Project) -> None:
    import_file(project=project, text=canonical_line(1), file="a.jsonl")
    changed = canonical_line(
        1, response="Other.", claim_lists={"zz-secret-extractor-alpha": ["New."]}
    )
    summary = import_file(project=project, text=changed, file="b.jsonl", update=True)
    assert (summary.documents_updated, summary.claim_lists_replaced) == (1, 1)
    doc = Document.objects.get()
    assert doc.response == "Other."
    assert list(
        Claim.objects.filter(
            claim_list__document=doc, claim_list__system__name="zz-secret-extractor-alpha"
        ).values_list("text", flat=True)
    ) == ["New."]


def test_update_never_replaces_a_list_people_answered(
    alpha: Project, alpha_items: list[object]
) -> None:
    from annotation.models import Assignment

    a = Assignment.objects.filter(item__project=alpha).first()
    assert a is not None
    a.submit({("item", "better"): "1"}, guideline_version=1)
    doc = a.item.document
    changed = canonical_line(
        int(doc.external_id.split("-")[1]), claim_lists={"zz-secret-extractor-alpha": ["Replaced."]}
    )
    with pytest.raises(ImportFailed, match="has answers from annotators: it cannot be replaced"):
        import_file(project=alpha, text=changed, file="b.jsonl", update=True)


def test_later_veriscore_steps_add_to_a_known_document(project: Project) -> None:
    sample = records(peer_file("veriscore/data_sample.jsonl").read_text())[0]
    claims = {
        k: v
        for k, v in sample.items()
        if k not in ("claim_search_results", "claim_verification_result")
    }
    import_file(project=project, text=json.dumps(claims), file="claims.jsonl")
    summary = import_file(project=project, text=json.dumps(sample), file="verification.jsonl")
    assert (summary.documents_existing, summary.claim_lists_existing) == (1, 1)
    assert Evidence.objects.count() > 0
    assert formats.veriscore_records(project, system="veriscore") == [sample]


def test_the_command_takes_update_and_domain_and_prints_warnings(
    project: Project, tmp_path: Path
) -> None:
    path = tmp_path / "felm_part.jsonl"
    path.write_text(jsonl({**FELM_MATH, "ref": "http://example.org/a"}))
    from io import StringIO

    out = StringIO()
    call_command("import_data", str(project.pk), str(path), "--domain", "math", stdout=out)
    assert Document.objects.get().external_id == "felm:math:0"
    assert "1 warning(s)" in out.getvalue() and "field 'ref': is a string" in out.getvalue()
    path.write_text(jsonl({**FELM_MATH, "prompt": "Other?"}))
    with pytest.raises(CommandError, match="differs from the stored document"):
        call_command("import_data", str(project.pk), str(path), "--domain", "math")
    call_command(
        "import_data", str(project.pk), str(path), "--domain", "math", "--update", stdout=out
    )
    assert Document.objects.get().question == "Other?"


def test_the_api_returns_warnings_and_takes_domain_and_update(
    alpha: Project, users: dict[str, object]
) -> None:
    from tests.annotation.api_helpers import token_client

    client = token_client(users["alice"])
    url = f"/api/projects/{alpha.pk}/documents/import/"
    body = {
        "content": jsonl({**FELM_MATH, "ref": "http://example.org/a"}),
        "filename": "part.jsonl",
        "domain": "math",
    }
    response = client.post(url, body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["warnings"] == [
        {
            "file": "part.jsonl",
            "line": 1,
            "field": "ref",
            "message": "is a string, not a list: read as a one-item list",
        }
    ]
    changed = {**body, "content": jsonl({**FELM_MATH, "prompt": "Other?"})}
    assert client.post(url, changed, format="json").status_code == 400
    response = client.post(url, {**changed, "update": True}, format="json")
    assert response.status_code == 201 and response.json()["documents_updated"] == 1


def test_a_latin1_upload_is_reported_by_line_on_the_api(
    alpha: Project, users: dict[str, object]
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.annotation.api_helpers import token_client

    upload = SimpleUploadedFile(
        "latin.jsonl",
        json.dumps({"id": "x", "response": "é"}, ensure_ascii=False).encode("latin-1"),
    )
    response = token_client(users["alice"]).post(
        f"/api/projects/{alpha.pk}/documents/import/", {"file": upload}, format="multipart"
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["file"], error["line"]) == ("latin.jsonl", 1) and "not UTF-8" in error["message"]


CANONICAL = {
    "id": "bio-1",
    "response": "A. B.",
    "question": "Who?",
    "domain": "Biography",
    "source_model": "m",
    "metadata": {"k": [1, 2]},
    "claim_lists": {
        "x": [
            {
                "text": "A.",
                "sentence_index": 0,
                "sentence": "A.",
                "evidence": [{"title": "t", "snippet": " s ", "link": "https://e.org"}],
                "verdicts": {"v": "supported"},
            },
            "B.",
        ],
        "y": [],
    },
    "abstained": ["y"],
    "segments": [{"text": "A.", "labels": {"r": "true"}}, "B."],
}


def test_canonical_records_export_unchanged(project: Project) -> None:
    import_file(project=project, text=json.dumps(CANONICAL), file="c.jsonl")
    assert formats.canonical_records(project) == [CANONICAL]
    text = formats.export(project, "canonical.jsonl", params={"source_model": "m"})[0]
    assert records(text) == [CANONICAL]


def test_the_upload_page_shows_counts_and_warnings(
    client, alpha: Project, users: dict[str, object]
) -> None:  # type: ignore[no-untyped-def]
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from tests.conftest import login

    login(client, users["alice"])
    upload = SimpleUploadedFile(
        "math.jsonl", jsonl({**FELM_MATH, "ref": "http://example.org/a"}).encode()
    )
    response = client.post(
        reverse("project_import", args=[alpha.pk]), {"file": upload, "format": "auto"}, follow=True
    )
    body = response.content.decode()
    assert "1 new document(s)" in body and "1 warning(s)" in body
    assert "math.jsonl, line 1, field &#x27;ref&#x27;: is a string, not a list" in body


def test_felm_segments_keep_their_whitespace(project: Project) -> None:
    row = {**FELM_MATH, "segmented_response": [" First 3 * 4 = 12.", "Then 2 + 12 = 14.\n"]}
    summary = import_file(project=project, text=jsonl(row), file="math.jsonl")
    assert summary.warnings == []
    assert formats.felm_records(project, source=FELM_LABELS) == [row]


def test_pipeline_results_go_through_the_same_write_path(project: Project) -> None:
    from annotation.ingest import ingest_results
    from pipeline.types import Claim as PClaim
    from pipeline.types import ClaimResult, ResponseResult
    from pipeline.types import Evidence as PEvidence
    from pipeline.types import Verdict as PVerdict

    long_link = "https://example.org/" + "x" * 2100
    claim = ClaimResult(
        PClaim("A is a.", 0, "A is a."),
        [PEvidence(1, "t", "s", long_link)],
        PVerdict("Supported.", "raw answer", True),
    )
    result = ResponseResult(
        id="r1",
        response="A is a.",
        question=None,
        model="m",
        domain="d",
        abstained=False,
        extractor="veriscore",
        extraction_model="x",
        verification_model="y",
        prompt_version="e1+v1",
        label_mode="binary",
        retriever="bm25",
        claims=[claim],
    )
    for _ in range(2):  # a chunk processed twice writes nothing twice
        ingest_results(project=project, results=[result], extractor_name="ex", verifier_name="ve")
    assert Evidence.objects.get().link == long_link[:2000]
    verdict = Verdict.objects.get()
    assert (verdict.label, verdict.raw_output, verdict.system.kind) == (
        "supported",
        "raw answer",
        "verifier",
    )


@pytest.mark.slow
def test_a_factscore_file_survives_a_trip_through_the_canonical_format(project: Project) -> None:
    path = peer_file("factscore_labeled/ChatGPT.jsonl")
    import_file(project=project, text=path.read_bytes(), file=path.name)
    text = formats.export(project, "canonical.jsonl", params={})[0]
    other = Project.objects.create(name="canonical trip")
    summary = import_file(project=other, text=text, file="canonical.jsonl")
    assert summary.format == "canonical" and summary.warnings == []
    assert formats.factscore_records(other, source=FACTSCORE_LABELS) == records(path.read_text())
    assert formats.canonical_records(other) == records(text)


def test_felm_records_survive_a_trip_through_the_canonical_format(project: Project) -> None:
    row = {**FELM_MATH, "labels": [True, False, True], "response": math.nan}
    import_file(project=project, text=jsonl(row), file="math.jsonl")
    other = Project.objects.create(name="canonical trip")
    import_file(
        project=other, text=formats.export(project, "canonical.jsonl", params={})[0], file="c.jsonl"
    )
    assert json.dumps(formats.felm_records(other, source=FELM_LABELS)) == json.dumps([row])
