from __future__ import annotations

import json
from pathlib import Path

from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.formats import read_inputs
from pipeline.run import (
    ClientConfig,
    PipelineConfig,
    build_clients,
    run_responses_sync,
    score_results,
)
from pipeline.types import ResponseInput

from .conftest import FIXTURES

BIOS = read_inputs(FIXTURES / "pipeline" / "factscore_bios.jsonl")
SAMPLE = read_inputs(FIXTURES / "pipeline" / "data_sample.jsonl")


DANUBE = "The Danube rises in the Black Forest in Germany. It flows into the Black Sea."


def some_inputs() -> list[ResponseInput]:
    return [
        *SAMPLE,
        BIOS[0],
        BIOS[20],
        ResponseInput(
            id="abstain",
            response="I'm sorry, I cannot fulfill that request.",
            model="X",
            domain="Biography",
        ),
        ResponseInput(
            id="nonqa",
            response=DANUBE,
            model="X",
            domain="Wiki",
        ),
    ]


def test_it_runs_the_whole_pipeline_and_keeps_provenance(
    client_config: ClientConfig, fake_llm: FakeOpenAI, fake_serper: FakeSerper
) -> None:
    clients = build_clients(client_config)
    seen: list[tuple[int, int]] = []
    results = run_responses_sync(
        some_inputs(),
        config=PipelineConfig(),
        llm=clients.llm,
        searcher=clients.searcher,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen[-1] == (5, 5) and len(seen) == 5
    by_id = {r.id: r for r in results}
    sample = by_id[SAMPLE[0].id]
    assert sample.model == "gpt-4o" and sample.domain == "ShareGPT"
    assert sample.extraction_model == sample.verification_model == "gpt-4o-mini"
    assert sample.prompt_version == "veriscore-extract-v1+veriscore-verify-v2"
    assert (
        sample.label_mode == "binary"
        and sample.retriever == "serper"
        and sample.extractor == "veriscore"
    )
    assert sample.n_claims > 0 and sample.errors == []
    for item in sample.claims:
        assert 0 <= item.claim.sentence_index < len(sample.sentences)
        assert item.claim.sentence == sample.sentences[item.claim.sentence_index].text
        assert item.evidence and [e.rank for e in item.evidence] == list(
            range(1, len(item.evidence) + 1)
        )
        assert item.verdict is not None and item.verdict.parsed and item.verdict.raw_output
    assert by_id["abstain"].abstained and by_id["abstain"].claims == []
    assert by_id["nonqa"].n_claims == 2
    usage = sum(r.usage.calls for r in results)
    assert usage == len(fake_llm.requests)
    assert sum(r.usage.search_calls for r in results) == len(fake_serper.requests)
    assert sum(r.usage.cost_usd for r in results) > 0

    table = score_results(results)
    assert {row.domain for row in table.rows} == {"ShareGPT", "Biography", "Wiki"}


def test_a_second_run_makes_zero_calls(
    client_config: ClientConfig, fake_llm: FakeOpenAI, fake_serper: FakeSerper
) -> None:
    clients = build_clients(client_config)
    first = run_responses_sync(
        some_inputs(), config=PipelineConfig(), llm=clients.llm, searcher=clients.searcher
    )
    calls = (len(fake_llm.requests), len(fake_serper.requests))
    clients = build_clients(client_config)
    second = run_responses_sync(
        some_inputs(), config=PipelineConfig(), llm=clients.llm, searcher=clients.searcher
    )
    assert (len(fake_llm.requests), len(fake_serper.requests)) == calls
    assert sum(r.usage.calls + r.usage.search_calls for r in second) == 0
    assert sum(r.usage.cached_calls for r in second) > 0
    assert [[c.verdict for c in r.claims] for r in first] == [
        [c.verdict for c in r.claims] for r in second
    ]


def test_chunks_can_share_one_set_of_clients(client_config: ClientConfig) -> None:
    clients = build_clients(client_config)
    inputs = some_inputs()
    a = run_responses_sync(
        inputs[:2], config=PipelineConfig(), llm=clients.llm, searcher=clients.searcher
    )
    b = run_responses_sync(
        inputs[2:], config=PipelineConfig(), llm=clients.llm, searcher=clients.searcher
    )
    assert len(score_results(a + b).responses) == 5


def test_faults_on_a_fifth_of_calls_end_in_a_finished_run_with_errors_counted(
    tmp_path: Path,
) -> None:
    inputs = BIOS[:8]
    # No hangs among the faults: a hang needs a deadline short enough to wait out, which
    # every other answer would have to beat on a loaded machine (the deadline is tested
    # on its own: test_llm, test_search). The deadline here is a guard.
    faults = ("429", "500", "garbage")
    with (
        FakeOpenAI(fault_rate=0.2, seed=7, faults=faults) as llm_srv,
        FakeSerper(fault_rate=0.2, seed=7, faults=faults) as s_srv,
    ):
        cfg = ClientConfig(
            base_url=llm_srv.base_url,
            api_key="k",
            serper_api_key="k",
            serper_url=s_srv.url,
            cache_path=str(tmp_path / "c.sqlite"),
            backoff=0.0,
            timeout=60.0,
            max_retries=1,
            concurrency=16,
        )
        clients = build_clients(cfg)
        results = run_responses_sync(
            inputs, config=PipelineConfig(), llm=clients.llm, searcher=clients.searcher
        )
        faults = llm_srv.faults_served() + s_srv.faults_served()
        total = len(llm_srv.requests) + len(s_srv.requests)
    assert len(results) == 8
    assert 0.1 < faults / total < 0.3
    # every fault was either retried or became a recorded error
    errors = sum(len(r.errors) for r in results)
    assert clients.llm.retries + clients.searcher.retries + errors >= faults  # type: ignore[attr-defined]
    assert errors > 0  # with one retry, some calls fail twice in a row
    for r in results:
        for item in r.claims:
            assert item.verdict is not None
            if item.search_error:
                assert item.verdict.label == "error"  # no evidence is not "unsupported"
    failed = [s for r in results for s in r.sentences if s.failed]
    assert all(s.claims == [] for s in failed)
    table = score_results(results)
    assert table.rows[0].responses > 0


def test_ternary_mode_and_the_atomic_extractor(client_config: ClientConfig) -> None:
    clients = build_clients(client_config)
    config = PipelineConfig(extractor="atomic", label_mode="ternary")
    (r,) = run_responses_sync([BIOS[0]], config=config, llm=clients.llm, searcher=clients.searcher)
    assert r.extractor == "atomic" and r.prompt_version.startswith("atomic-v1")
    assert r.n_claims > len(r.sentences)  # atomic facts are finer than sentences
    assert {c.verdict.label for c in r.claims} <= {"supported", "contradicted", "inconclusive"}  # type: ignore[union-attr]


def test_bm25_retriever_runs_without_any_search_api(
    client_config: ClientConfig, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps(
            {
                "title": "Danube",
                "text": DANUBE,
                "url": "https://d",
            }
        )
    )
    client_config.retriever, client_config.corpus = "bm25", str(corpus)
    clients = build_clients(client_config)
    (r,) = run_responses_sync(
        [some_inputs()[-1]], config=PipelineConfig(), llm=clients.llm, searcher=clients.searcher
    )
    assert r.retriever == "bm25" and fake_serper.requests == []
    assert r.claims[0].evidence[0].link == "https://d"
    assert r.n_supported == 2
