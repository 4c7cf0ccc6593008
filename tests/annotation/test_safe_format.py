"""SAFE's results file (hand-written from the layout of google-deepmind/long-form-factuality)
imports as documents with a SAFE claim list, its ratings and its searches, and exports
back to the same file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation import formats
from annotation.ingest import ImportFailed, import_file
from annotation.models import ClaimList, Document, Project, System
from tests.annotation.test_import_fuzz import FUZZ, JSON, check
from tests.conftest import canonical_line

DATA = Path(__file__).parent / "data" / "safe"
FILE = DATA / "safe_results.json"


@pytest.fixture
def project(db: None) -> Project:
    return Project.objects.create(name="safe")


def test_each_response_is_a_document_with_safe_claims_ratings_and_searches(
    project: Project,
) -> None:
    summary = import_file(project=project, path=FILE, file=FILE.name)
    assert summary.format == "safe" and summary.documents_created == 3
    doc = Document.objects.get(response__startswith="Ada Lovelace was an English")
    assert doc.question == "Who is Ada Lovelace?"
    cl = ClaimList.objects.get(document=doc)
    assert cl.system.name == "safe" and cl.system.kind == System.EXTRACTOR
    claims = list(cl.claims.all())
    assert [c.text for c in claims] == [
        "Ada Lovelace was English.",
        "Ada Lovelace was a mathematician.",
        "Ada Lovelace worked with Charles Babbage.",
    ]
    assert claims[2].sentence == "She worked with Charles Babbage."
    assert [(v.system.name, v.label) for c in claims for v in c.verdicts.all()] == [
        ("safe-rater", "supported"),
        ("safe-rater", "not supported"),
        ("safe-rater", "irrelevant"),
    ]
    assert [(e.title, e.snippet, e.link) for e in claims[0].evidence.all()] == [
        ("Ada Lovelace nationality", "Ada Lovelace (1815-1852) was an English mathematician.", ""),
        ("Ada Lovelace birthplace", "Born in London, England.", ""),
    ]
    assert not claims[2].evidence.exists()  # empty searches, rate_data null
    empty = Document.objects.get(response="SAFE rates long-form answers.")
    assert not ClaimList.objects.get(document=empty).claims.exists()


def test_export_gives_back_the_same_file(project: Project) -> None:
    import_file(project=project, text=FILE.read_bytes(), file=FILE.name)
    text, content_type = formats.export(project, "safe.json", params={})
    assert content_type == "application/json"
    assert json.loads(text) == json.loads(FILE.read_text())


def test_safe_and_veriscore_claim_lists_of_one_response_meet_on_one_document(
    project: Project,
) -> None:
    record = {
        "question": "Who is Ada Lovelace?",
        "response": "Ada Lovelace wrote the first program.",
        "claim_list": [["Ada wrote a program."]],
    }
    import_file(
        project=project,
        text=json.dumps(record) + "\n",
        file="veriscore.jsonl",
        fmt="veriscore",
        system="veriscore",
    )
    import_file(project=project, path=FILE, file=FILE.name)
    doc = Document.objects.get(response="Ada Lovelace wrote the first program.")
    assert sorted(doc.claim_lists.values_list("system__name", flat=True)) == ["safe", "veriscore"]


def test_a_bad_statement_names_its_side_and_field(project: Project, tmp_path: Path) -> None:
    data = json.loads(FILE.read_text())
    data["per_prompt_data"][0]["side2_posthoc_eval_data"]["checked_statements"][0]["annotation"] = (
        "Maybe"
    )
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, indent=2))
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, path=path, file="bad.json")
    assert (
        "bad.json, line 6, field 'side2_posthoc_eval_data.checked_statements[0].annotation'"
        in str(e.value)
    )
    assert Document.objects.count() == 0


def test_canonical_files_are_not_taken_for_safe(project: Project) -> None:
    assert import_file(project=project, text=canonical_line(1) + "\n", file="c.jsonl").format == (
        "canonical"
    )


@pytest.mark.slow
@FUZZ
@given(
    entry=st.dictionaries(
        st.sampled_from(["prompt", "side1_response", "side2_response", "x"]), JSON, max_size=3
    ),
    block=st.dictionaries(
        st.sampled_from(["checked_statements", "past_steps_jsonified_all", "response"]),
        JSON
        | st.lists(
            st.dictionaries(
                st.sampled_from(
                    ["self_contained_atomic_fact", "annotation", "google_searches", "sentence"]
                ),
                JSON,
                max_size=3,
            ),
            max_size=2,
        ),
        max_size=3,
    ),
    as_jsonl=st.booleans(),
)
def test_no_safe_file_makes_an_import_crash(
    db: None, entry: dict[str, Any], block: dict[str, Any], as_jsonl: bool
) -> None:
    data = {"per_prompt_data": [{**entry, "side1_posthoc_eval_data": block}]}
    text = json.dumps(data, indent=None if as_jsonl else 2)
    check(text, "safe")
    check(json.dumps(entry) + "\n", "safe")
