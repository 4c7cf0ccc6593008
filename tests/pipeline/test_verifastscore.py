"""VeriFastScore: one call per response on per-sentence evidence, against the fakes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import verifastscore
from pipeline.__main__ import main
from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.formats import read_inputs
from pipeline.run import (
    ClientConfig,
    PipelineConfig,
    build_clients,
    run_responses_sync,
    score_results,
)
from pipeline.types import SUPPORTED, UNSUPPORTED, Evidence, ResponseInput

from .conftest import FIXTURES, PEER_DATA

SHARED = PEER_DATA / "verifastscore"
DANUBE = "The Danube rises in the Black Forest in Germany. It flows into the Black Sea."


def test_the_request_is_laid_out_character_for_character_as_the_released_code_does(
    client_config: ClientConfig, fake_llm: FakeOpenAI, fake_serper: FakeSerper
) -> None:
    clients = build_clients(client_config)
    config = PipelineConfig(extractor="verifastscore", prompt_dir=str(SHARED))
    inp = ResponseInput(id="d", response="  " + DANUBE + "\n", model="X", domain="Wiki")
    [result] = run_responses_sync([inp], config=config, llm=clients.llm, searcher=clients.searcher)
    clients.close()

    chats = [r for r in fake_llm.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 1  # one call for the whole response
    # What the released code builds (verifastscore 0.1.5, get_verifastscore/get_prompt),
    # from the searches the fake Serper answered (sent concurrently, so in any order),
    # laid out in sentence order.
    queries = [
        "The Danube rises in the Black Forest in Germany.",
        "It flows into the Black Sea.",
    ]
    assert sorted(r["body"]["q"] for r in fake_serper.requests) == sorted(queries)
    by_query = {q: s for q, s in zip(queries, _answers(fake_serper, queries), strict=True)}
    evidence = "\n\n".join(
        "\n".join(r["snippet"] if "snippet" in r else r["title"] for r in by_query[q])
        for q in queries
    )
    user = "### Response\n" + DANUBE + "\n" + "### Evidence\n" + evidence
    system = (SHARED / "system_message.txt").read_text(encoding="utf-8")
    assert chats[0]["body"]["messages"] == [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    assert result.extractor == "verifastscore"
    assert result.prompt_version.startswith("verifastscore-v1:dir:verifastscore:")
    assert [(c.claim.text, c.claim.sentence_index) for c in result.claims] == [
        ("The Danube rises in the Black Forest in Germany", 0),
        ("It flows into the Black Sea", 1),
    ]
    assert result.claims[0].verdict is not None and result.claims[0].verdict.parsed


def _answers(serper: FakeSerper, queries: list[str]) -> list[list[dict[str, str]]]:
    out = []
    for q in queries:
        status, body = serper.answer("/search", {"X-API-KEY": "k"}, {"q": q, "num": 5})
        assert status == 200
        out.append(body["organic"][:5])
    return out


def test_our_default_system_message_is_sent_without_a_prompt_dir() -> None:
    msgs = verifastscore.messages("R.", verifastscore.evidence_text([[]]), None or "S")
    assert msgs[1]["content"] == "### Response\nR.\n### Evidence\n"
    assert verifastscore.system_message(None) == verifastscore.DEFAULT_SYSTEM
    with pytest.raises(ValueError, match="system_message.txt is missing"):
        PipelineConfig(extractor="verifastscore", prompt_dir=str(FIXTURES))


def test_evidence_joins_snippets_by_line_and_sentences_by_blank_line() -> None:
    a, b = Evidence(1, "T1", "s1", "l"), Evidence(2, "T2", "", "l")
    assert verifastscore.evidence_text([[a, b], [a]]) == "s1\nT2\n\ns1"


def test_answers_parse_as_the_released_pattern_reads_them() -> None:
    raw = "### Facts\nParis is in France: Supported\nThe Moon is cheese: Unsupported"
    assert verifastscore.parse_facts(raw) == [
        ("Paris is in France", SUPPORTED),
        ("The Moon is cheese", UNSUPPORTED),
    ]
    assert verifastscore.parse_facts("### Facts\nNo verifiable claim.") == []
    assert verifastscore.parse_facts("I cannot help with that") is None


def test_an_unparsable_answer_is_a_failure_not_a_response_without_claims(
    client_config: ClientConfig, fake_llm: FakeOpenAI
) -> None:
    fake_llm.facts = lambda prompt: "Sorry, what?"  # type: ignore[method-assign]
    clients = build_clients(client_config)
    config = PipelineConfig(extractor="verifastscore")
    inp = ResponseInput(id="d", response=DANUBE, model="X", domain="Wiki")
    [result] = run_responses_sync([inp], config=config, llm=clients.llm, searcher=clients.searcher)
    clients.close()
    assert result.incomplete and result.claims == []
    assert "has no facts" in result.errors[0]


def test_the_cli_runs_the_method_end_to_end_and_scores_like_veriscore(
    client_config: ClientConfig, fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    bios = FIXTURES / "pipeline" / "factscore_bios.jsonl"
    inputs = tmp_path / "bios.jsonl"
    inputs.write_text("".join(bios.read_text("utf-8").splitlines(True)[:6]), "utf-8")
    argv = [
        "run", str(inputs), "--method", "verifastscore", "--prompt-dir", str(SHARED),
        "--base-url", fake_llm.base_url, "--api-key", "k", "--serper-key", "k",
        "--serper-url", fake_serper.url, "--cache", str(tmp_path / "c.sqlite"),
        "--out", str(tmp_path / "out"), "--no-progress", "--backoff", "0",
    ]  # fmt: skip
    assert main(argv) == 0
    chats = [r for r in fake_llm.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 6  # one call per response
    rows = [json.loads(line) for line in (tmp_path / "out" / "verification_bios.jsonl").open()]
    assert len(rows) == 6 and any(r["claim_verification_result"] for r in rows)
    results = read_inputs(inputs)
    assert len(results) == 6
    assert main([*argv[:1], *argv[1:], "--estimate"]) == 2  # says it cannot, rather than guess


def test_scores_come_out_for_both_methods_on_the_same_responses(clients) -> None:  # type: ignore[no-untyped-def]
    inputs = read_inputs(FIXTURES / "pipeline" / "factscore_bios.jsonl")[:4]
    fast = run_responses_sync(
        inputs, config=PipelineConfig(extractor="verifastscore"), llm=clients.llm,
        searcher=clients.searcher,
    )  # fmt: skip
    slow = run_responses_sync(
        inputs, config=PipelineConfig(), llm=clients.llm, searcher=clients.searcher
    )
    assert [r.n_claims > 0 for r in fast] == [True, True, False, True]  # 3rd: no fact
    assert not any(r.incomplete for r in fast)
    assert score_results(fast).rows and score_results(slow).rows
