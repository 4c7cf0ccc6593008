from __future__ import annotations

import asyncio
import json

import pytest

from pipeline.extract import dedupe, extract_claims, parse_claims, plan
from pipeline.fakes import FakeOpenAI
from pipeline.run import Clients
from pipeline.types import SentenceClaims, Usage

from .conftest import FIXTURES

RECORDED = [
    json.loads(line)
    for line in (FIXTURES / "llm" / "extraction_cache_ee40f6d.jsonl").read_text().splitlines()
    if line.strip()
]


def test_there_are_140_recorded_real_extraction_calls() -> None:
    assert len(RECORDED) == 140
    assert sum(r["raw_output"] == "No verifiable claim." for r in RECORDED) == 82


@pytest.mark.parametrize("row", RECORDED, ids=lambda r: r["sentence"][:40])
def test_it_parses_every_recorded_real_output(row: dict[str, str]) -> None:
    claims = parse_claims(row["raw_output"])
    if row["raw_output"].strip() == "No verifiable claim.":
        assert claims == []
        return
    expected = []
    for line in row["raw_output"].splitlines():
        assert line.startswith("- ")  # the real outputs are all dash lists
        if line[2:].strip() not in expected:
            expected.append(line[2:].strip())
    assert claims == expected
    assert all(not c.startswith(("-", "*")) and c for c in claims)


def test_recorded_outputs_give_121_claims() -> None:
    assert sum(len(parse_claims(r["raw_output"])) for r in RECORDED) == 121


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("No verifiable claim.", []),
        ("  no verifiable claims  ", []),
        ("- No verifiable claim.", []),
        ("Facts:\nNo verifiable claim.", []),
        ("", []),
        (
            "1. Paris is in France.\n2) Paris has 2 million people.",
            ["Paris is in France.", "Paris has 2 million people."],
        ),
        (
            "* Paris is in France.\n• Rome is in Italy.",
            ["Paris is in France.", "Rome is in Italy."],
        ),
        (
            "- Paris is in France.\n\n\n- Rome is in Italy.\n",
            ["Paris is in France.", "Rome is in Italy."],
        ),
        ("Here are the facts:\n- Paris is in France.", ["Paris is in France."]),
        ("Facts:\n- Paris is in France.", ["Paris is in France."]),
        (
            "- Paris is in France.\nNote: the sentence also has an opinion.\nIt is unverifiable.",
            ["Paris is in France."],
        ),
        ("- Paris is in France.\n(Note: nothing else.)", ["Paris is in France."]),
        ("- Paris is in France.\n- Paris is in France.", ["Paris is in France."]),
        ("3.5 million people live in Berlin.", ["3.5 million people live in Berlin."]),
        ('- "Paris is in France."', ["Paris is in France."]),
        ("- **Paris** is in France.", ["Paris** is in France."]),
        (
            "Notes from Underground was written by Dostoevsky.",
            ["Notes from Underground was written by Dostoevsky."],
        ),
    ],
)
def test_it_parses_malformed_outputs(raw: str, expected: list[str]) -> None:
    assert parse_claims(raw) == expected


def test_dedupe_keeps_the_first_sentence_and_ignores_case_and_full_stop() -> None:
    sentences = [
        SentenceClaims(0, "S0", ["Paris is in France.", "Rome is in Italy."]),
        SentenceClaims(1, "S1", ["paris is in France", "Berlin is in Germany."]),
    ]
    claims = dedupe(sentences)
    assert [(c.text, c.sentence_index) for c in claims] == [
        ("Paris is in France.", 0),
        ("Rome is in Italy.", 0),
        ("Berlin is in Germany.", 1),
    ]


def test_atomic_plan_sees_one_sentence_without_context() -> None:
    calls = plan("Ada was born in 1815. She wrote notes.", "Who?", "atomic")
    assert len(calls) == 2
    assert "Ada" not in calls[1][1][1]["content"].rsplit("independent facts:", 1)[-1]


def test_extraction_keeps_raw_output_and_parsed_claims(
    fake_llm: FakeOpenAI, clients: Clients
) -> None:
    row = next(r for r in RECORDED if r["raw_output"].count("\n") >= 1)
    usage, errors = Usage(), []
    response = "Some intro sentence without facts in it. " + row["sentence"]
    sentences = asyncio.run(
        extract_claims(response, row["question"], llm=clients.llm, usage=usage, errors=errors)
    )
    assert errors == []
    assert sentences[-1].raw_output == row["raw_output"]
    assert sentences[-1].claims == parse_claims(row["raw_output"])
    assert usage.calls == 2 and usage.prompt_tokens > 0
    prompts = [r["body"]["messages"][-1]["content"] for r in fake_llm.requests]
    assert all(r["body"]["temperature"] == 0.0 for r in fake_llm.requests)
    assert any("<SOS>" + row["sentence"] + "<EOS>" in p for p in prompts)
