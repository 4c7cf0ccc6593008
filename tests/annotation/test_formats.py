"""Formats out: each file imported and exported again holds the same data."""

from __future__ import annotations

import json

from django.contrib.auth.models import User

from annotation import formats
from annotation.ingest import FACTSCORE_LABELS, FELM_LABELS, import_file
from annotation.kinds.segment import segment_items
from annotation.models import Assignment, Item, Membership, Project

VERISCORE = [
    {
        "question": "Who was Ada Lovelace?",
        "response": "Ada Lovelace was a mathematician. She wrote the first program.",
        "model": "gpt-4",
        "prompt_source": "biography",
        "claim_list": [
            ["Ada Lovelace was a mathematician."],
            ["Ada Lovelace wrote the first program."],
        ],
        "all_claims": [
            "Ada Lovelace was a mathematician.",
            "Ada Lovelace wrote the first program.",
        ],
        "claim_search_results": {
            "Ada Lovelace was a mathematician.": [
                {
                    "title": "Ada Lovelace - Wikipedia",
                    "snippet": "English mathematician and writer.",
                    "link": "https://en.wikipedia.org/wiki/Ada_Lovelace",
                }
            ],
            "Ada Lovelace wrote the first program.": [
                {
                    "title": "Note G",
                    "snippet": "An algorithm for the Analytical Engine.",
                    "link": "https://en.wikipedia.org/wiki/Note_G",
                },
                {
                    "title": "History",
                    "snippet": "Often called the first program.",
                    "link": "https://example.org/h",
                },
            ],
        },
        "claim_verification_result": [
            {
                "claim": "Ada Lovelace was a mathematician.",
                "search_results": "",
                "verification_result": "supported",
            },
            {
                "claim": "Ada Lovelace wrote the first program.",
                "search_results": "",
                "verification_result": "unsupported",
            },
        ],
    },
]
FELM = [
    {
        "index": "0",
        "source": "quora",
        "domain": "wk",
        "prompt": "Which country has the most nuclear power plants?",
        "response": "The United States has the most, with 94 reactors. France is second.",
        "segmented_response": [
            "The United States has the most, with 94 reactors.",
            "France is second.",
        ],
        "labels": [False, True],
        "comment": ["There were 92 reactors in 2022.", ""],
        "type": ["knowledge_error", None],
        "ref": ["https://www.eia.gov/tools/faqs/faq.php?id=207&t=3"],
    },
]
FACTSCORE = [
    {
        "input": "Question: Tell me a bio of Ada Lovelace.",
        "output": "Ada Lovelace was a mathematician.",
        "topic": "Ada Lovelace",
        "cat": ["very freq", "Europe/Middle East"],
        "annotations": [
            {
                "text": "Ada Lovelace was a mathematician.",
                "model-atomic-facts": [
                    {"text": "Ada Lovelace was a mathematician.", "label": "S"},
                    {"text": "Ada Lovelace was famous.", "label": "IR"},
                ],
                "human-atomic-facts": [{"text": "Ada Lovelace was a mathematician.", "label": "S"}],
            }
        ],
    },
    {
        "input": "Question: Tell me a bio of Nobody.",
        "output": "I don't know.",
        "topic": "Nobody",
        "annotations": None,
    },
]


def jsonl(rows: list[dict]) -> str:
    return "\n".join(json.dumps(r) for r in rows)


def test_veriscore_round_trip(alpha: Project) -> None:
    import_file(project=alpha, text=jsonl(VERISCORE), file="vs.jsonl", fmt="veriscore", system="vs")
    [out] = formats.veriscore_records(alpha, system="vs")
    original = VERISCORE[0]
    for key in (
        "question",
        "response",
        "model",
        "prompt_source",
        "claim_list",
        "all_claims",
        "claim_search_results",
    ):
        assert out[key] == original[key], key
    assert [(v["claim"], v["verification_result"]) for v in out["claim_verification_result"]] == [
        (v["claim"], v["verification_result"]) for v in original["claim_verification_result"]
    ]
    # and the export imports again as the same thing
    text = formats.export(alpha, "veriscore.jsonl", params={"system": "vs"})[0]
    other = Project.objects.create(name="again")
    import_file(project=other, text=text, file="again.jsonl", fmt="veriscore", system="vs")
    assert (
        formats.veriscore_records(other, system="vs")[0]["claim_search_results"]
        == original["claim_search_results"]
    )


def test_felm_round_trip(alpha: Project) -> None:
    import_file(project=alpha, text=jsonl(FELM), file="felm.jsonl", fmt="felm")
    [out] = formats.felm_records(alpha, source=FELM_LABELS)
    assert out == FELM[0]


def test_felm_gold_from_segment_answers(alpha: Project, users: dict[str, User]) -> None:
    import_file(project=alpha, text=jsonl(FELM), file="felm.jsonl", fmt="felm")
    doc = alpha.documents.get(external_id="felm:wk:0")
    [item] = segment_items(project=alpha, documents=alpha.documents.filter(pk=doc.pk))
    for name, reason in (("bob", "92 reactors, not 94."), ("carol", "The count is wrong.")):
        a = Assignment.objects.create(item=item, annotator=users[name])
        a.submit(
            {
                ("segment:0", "correct"): "false",
                ("segment:0", "error_type"): "knowledge error",
                ("segment:0", "reason"): reason,
                ("segment:0", "links"): "https://www.eia.gov/",
                ("segment:1", "correct"): "true",
                ("item", "keep"): "keep",
            },
            guideline_version=1,
        )
    [out] = formats.felm_records(alpha)
    assert out["labels"] == [False, True]
    assert out["label_provenance"] == ["unanimous", "unanimous"]
    assert out["type"] == ["knowledge error", None]
    assert out["comment"] == ["92 reactors, not 94. | The count is wrong.", ""]
    assert out["ref"] == ["https://www.eia.gov/"]


def test_factscore_round_trip(alpha: Project) -> None:
    import_file(project=alpha, text=jsonl(FACTSCORE), file="InstructGPT.jsonl", fmt="factscore")
    out = formats.factscore_records(alpha, source=FACTSCORE_LABELS)
    assert out == FACTSCORE


def test_factscore_labels_from_gold_verification(alpha: Project, users: dict[str, User]) -> None:
    import_file(project=alpha, text=jsonl(FACTSCORE[:1]), file="InstructGPT.jsonl", fmt="factscore")
    claim = (
        alpha.documents.get(external_id="InstructGPT:Ada Lovelace")
        .claim_lists.get(system__name="factscore-model-facts")
        .claims.get(position=0)
    )
    item = Item.objects.create(
        project=alpha, kind=Item.VERIFICATION, claim=claim, document=claim.claim_list.document
    )
    Assignment.objects.create(item=item, annotator=users["bob"]).submit(
        {("item", "label"): "contradicted"}, guideline_version=1
    )
    [out] = formats.factscore_records(alpha)
    facts = out["annotations"][0]["model-atomic-facts"]
    assert facts == [
        {"text": "Ada Lovelace was a mathematician.", "label": "NS"},
        {"text": "Ada Lovelace was famous."},
    ]  # no gold yet: no label
    assert alpha.role_of(users["bob"]) == Membership.ANNOTATOR
