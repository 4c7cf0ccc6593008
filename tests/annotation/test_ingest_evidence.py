"""Imports of search results, verifier labels and segments (VeriScore, canonical, FELM)."""

from __future__ import annotations

import json

import pytest
from django.conf import settings

from annotation.ingest import FELM_LABELS, ImportFailed, import_file
from annotation.models import Claim, Document, Evidence, Project, Segment, System, Verdict
from tests.conftest import EVIDENCE, VERIFIER, verification_line

SAMPLE = settings.BASE_DIR / "fixtures" / "pipeline" / "data_sample.jsonl"


@pytest.fixture
def project(db: None) -> Project:
    return Project.objects.create(name="evidence")


def test_a_veriscore_run_brings_evidence_and_verifier_labels(project: Project) -> None:
    summary = import_file(
        project=project, text=SAMPLE.read_text(), file="verification_sample.jsonl"
    )
    record = json.loads(SAMPLE.read_text())
    assert summary.claims_created == 25
    assert summary.evidence_created == sum(
        min(len(v), 10) for v in record["claim_search_results"].values()
    )
    claim = Claim.objects.get(text=record["claim_verification_result"][0]["claim"])
    first = record["claim_search_results"][claim.text][0]
    assert (claim.evidence.get(rank=1).title, claim.evidence.get(rank=1).link) == (
        first["title"],
        first["link"],
    )
    verifier = System.objects.get(name="veriscore-verifier")
    assert verifier.kind == System.VERIFIER
    labels = {v["claim"]: v["verification_result"] for v in record["claim_verification_result"]}
    stored = dict(Verdict.objects.filter(system=verifier).values_list("claim__text", "label"))
    assert stored == labels


def test_claims_then_evidence_then_verification_files_add_up(project: Project) -> None:
    record = json.loads(SAMPLE.read_text())
    base = {k: record[k] for k in ("question", "response", "model", "prompt_source", "abstained")}
    claims = dict(base, claim_list=record["claim_list"], all_claim_lst=record["all_claim_lst"])
    evidence = dict(
        base,
        claim_search_results=record["claim_search_results"],
        all_claim_lst=record["all_claim_lst"],
    )
    verification = dict(
        base,
        claim_verification_result=record["claim_verification_result"],
        all_claim_lst=record["all_claim_lst"],
    )
    import_file(project=project, text=json.dumps(claims), file="claims_x.jsonl")
    assert Evidence.objects.count() == 0
    import_file(project=project, text=json.dumps(evidence), file="evidence_x.jsonl")
    n_evidence = Evidence.objects.count()
    assert n_evidence > 0 and Claim.objects.count() == 25
    import_file(
        project=project,
        text=json.dumps(verification),
        file="verification_x.jsonl",
        verifier="gpt4-binary",
    )
    assert Verdict.objects.filter(system__name="gpt4-binary").count() == 25
    # and again: nothing doubles
    import_file(project=project, text=json.dumps(evidence), file="evidence_x.jsonl")
    assert Evidence.objects.count() == n_evidence and Document.objects.count() == 1


def test_the_older_claim_snippets_dict_is_read(project: Project) -> None:
    row = {
        "response": "Paris is in France.",
        "model": "m",
        "prompt_source": "Wiki",
        "claim_snippets_dict": {
            "Paris is in France.": [
                {
                    "title": "Paris",
                    "snippet": "Paris, France's capital",
                    "link": "https://en.wikipedia.org/wiki/Paris",
                }
            ]
        },
    }
    import_file(project=project, text=json.dumps(row), file="evidence_old.jsonl")
    assert Evidence.objects.get().snippet == "Paris, France's capital"


def test_canonical_claims_carry_evidence_verdicts_and_segments(project: Project) -> None:
    import_file(project=project, text=verification_line(0), file="c.jsonl")
    claim = Claim.objects.get()
    assert [(e.rank, e.title) for e in claim.evidence.all()] == [
        (i + 1, e["title"]) for i, e in enumerate(EVIDENCE)
    ]
    assert Verdict.objects.get(claim=claim).system.name == VERIFIER
    assert list(Segment.objects.values_list("position", "text")) == [
        (0, "Person 0 was born in 1900."),
        (1, "Person 0 painted 0 pictures."),
    ]


FELM = {
    "index": 3,
    "source": "online",
    "prompt": "What is the smallest ocean in the world?",
    "response": "The smallest ocean in the world is the Arctic Ocean. It covers about 14.05 million square kilometers.",  # noqa: E501
    "segmented_response": [
        "The smallest ocean in the world is the Arctic Ocean.",
        "It covers about 14.05 million square kilometers.",
    ],
    "labels": [True, False],
    "comment": ["", "Its area is about 15.5 million km2."],
    "type": "wk",
    "ref": ["https://oceanservice.noaa.gov/facts/smallestocean.html"],
}


def test_it_imports_felm(project: Project) -> None:
    summary = import_file(project=project, text=json.dumps(FELM), file="felm.jsonl")
    assert summary.format == "felm" and summary.segments_created == 2
    doc = Document.objects.get()
    assert (doc.external_id, doc.question, doc.domain) == ("felm:wk:3", FELM["prompt"], "wk")
    assert doc.metadata["comment"] == FELM["comment"] and doc.metadata["ref"] == FELM["ref"]
    labels = list(
        Verdict.objects.filter(system__name=FELM_LABELS)
        .order_by("segment__position")
        .values_list("label", flat=True)
    )
    assert labels == ["true", "false"]
    assert System.objects.get(name=FELM_LABELS).kind == System.REFERENCE
    import_file(project=project, text=json.dumps(FELM), file="felm.jsonl")
    assert Segment.objects.count() == 2


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"labels": [True]}, "field 'labels': has 1 labels for 2 segments"),
        ({"labels": [True, "no"]}, "field 'labels[1]': must be true or false, not a string"),
        ({"segmented_response": []}, "field 'segmented_response': is empty"),
        (
            {"segmented_response": ["fine", 3]},
            "field 'segmented_response[1]': must be a string, not a number",
        ),
        ({"segmented_response": None}, "field 'segmented_response': is missing"),
    ],
)
def test_bad_felm_lines_are_refused(
    project: Project, change: dict[str, object], expected: str
) -> None:
    text = json.dumps({**FELM, "index": 1}) + "\n" + json.dumps({**FELM, **change})
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=text, file="felm.jsonl", fmt="felm")
    assert f"felm.jsonl, line 2, {expected}" in str(e.value)
    assert not Document.objects.exists()


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        ("a string", "must be a list of search results, not a string"),
        ([{"title": 3}], "claim_lists.s[0].evidence[0].title': must be a string, not a number"),
        (
            [{"title": "t", "link": "javascript:alert(1)"}],
            "claim_lists.s[0].evidence[0].link': must be an http(s) URL",
        ),
    ],
)
def test_bad_evidence_is_refused(project: Project, evidence: object, expected: str) -> None:
    line = json.dumps(
        {"id": "e", "response": "r", "claim_lists": {"s": [{"text": "c", "evidence": evidence}]}}
    )
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=line, file="e.jsonl")
    assert expected in str(e.value)
    assert not Evidence.objects.exists()


def test_a_verification_label_for_an_unknown_claim_is_refused(project: Project) -> None:
    row = {
        "response": "r",
        "model": "m",
        "all_claims": ["A."],
        "claim_verification_result": [{"claim": "B.", "verification_result": "supported"}],
    }
    with pytest.raises(
        ImportFailed,
        match=r"claim_verification_result\[0\].claim': is not one of the record's claims",
    ):
        import_file(project=project, text=json.dumps(row), file="v.jsonl")
