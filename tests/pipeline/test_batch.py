"""--batch: calls through the Batch API of the fake provider, end to end."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pipeline.batch import ENDPOINT
from pipeline.cache import Cache, make_key
from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.formats import read_inputs
from pipeline.llm import LLMClient, LLMError, chat_request, cost_usd
from pipeline.run import ClientConfig, PipelineConfig, build_clients, run_responses_sync

from .conftest import FIXTURES

INPUTS = read_inputs(FIXTURES / "pipeline" / "factscore_bios.jsonl")[:3]


def run(client_config: ClientConfig, **overrides: object) -> tuple[list, object]:  # type: ignore[type-arg]
    cfg = ClientConfig(**{**client_config.__dict__, **overrides})
    clients = build_clients(cfg)
    clients.llm.batch_gather = 0.05
    results = run_responses_sync(
        INPUTS, config=PipelineConfig(), llm=clients.llm, searcher=clients.searcher
    )
    clients.close()
    return results, clients.llm


def verdicts(results: list) -> list:  # type: ignore[type-arg]
    return [[(c.claim.text, c.verdict.label) for c in r.claims] for r in results]


def test_a_batch_run_gives_the_same_results_at_half_the_price(
    client_config: ClientConfig, fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    direct, _ = run(client_config, cache_path=str(tmp_path / "direct.sqlite"))
    chat_calls = sum(r["path"].endswith("/chat/completions") for r in fake_llm.requests)
    batched, llm = run(
        client_config, cache_path=str(tmp_path / "batch.sqlite"), batch=True, batch_poll=0.01
    )
    assert sum(r["path"].endswith("/chat/completions") for r in fake_llm.requests) == chat_calls
    assert len(fake_llm.batches) >= 2  # extraction, then verification
    assert verdicts(batched) == verdicts(direct)
    assert not any(r.incomplete for r in batched)
    for d, b in zip(direct, batched, strict=True):
        u = b.usage
        assert u.calls == d.usage.calls
        full = cost_usd(
            "gpt-4o-mini",
            u.prompt_tokens,
            u.completion_tokens,
            cached_tokens=u.cached_prompt_tokens,
        )
        assert u.cost_usd == pytest.approx(full / 2)  # the Batch discount on every call
    assert Cache(tmp_path / "batch.sqlite").count("chat") == chat_calls  # same cache entries


def test_failed_lines_and_an_expired_batch_are_sent_again(
    client_config: ClientConfig, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    with FakeOpenAI(batch_fail_rate=0.3, batch_expire=1) as server:
        cfg = ClientConfig(**{**client_config.__dict__, "base_url": server.base_url})
        results, llm = run(cfg, batch=True, batch_poll=0.01)
        statuses = [b["status"] for b in server.batches.values()]
        failed = sum(b["request_counts"]["failed"] for b in server.batches.values())
    assert statuses[0] == "expired" and failed > 0
    assert not any(r.incomplete for r in results)
    assert llm.retries >= failed  # every failed line went out again


def test_a_line_that_keeps_failing_is_a_failed_call_not_an_answer(tmp_path: Path) -> None:
    with FakeOpenAI(batch_fail_rate=1.0) as server:
        llm = LLMClient(
            base_url=server.base_url, api_key="x", model="m", batch=True, batch_poll=0.01,
            batch_gather=0.01, max_retries=2,
        )  # fmt: skip

        async def go() -> None:
            await llm.chat([{"role": "user", "content": "hi"}])

        with pytest.raises(LLMError, match="internal error"):
            asyncio.run(go())
        assert len(server.batches) == 3  # the first try and two more


def test_a_restarted_run_polls_the_batch_it_created_instead_of_paying_again(
    tmp_path: Path,
) -> None:
    messages = [[{"role": "user", "content": f"say {i}"}] for i in range(3)]
    with FakeOpenAI(batch_delay=1e9) as server:  # the batch never ends by itself

        def client() -> LLMClient:
            return LLMClient(
                base_url=server.base_url, api_key="x", model="m", batch=True,
                batch_poll=0.01, batch_gather=0.01, cache=Cache(tmp_path / "c.sqlite"),
            )  # fmt: skip

        async def killed() -> None:
            llm = client()
            task = asyncio.ensure_future(asyncio.gather(*(llm.chat(m) for m in messages)))
            # Until the client has the batch's id in its cache (the provider holding the
            # batch is not enough: its answer may not have reached the client yet).
            while not (llm._batch is not None and llm._batch.batches):
                await asyncio.sleep(0.01)
            task.cancel()  # the run dies while the provider holds its batch
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(killed())
        [batch] = server.batches.values()
        batch["_ready"] = 0.0  # the provider finishes it while nobody runs

        async def again() -> list[str]:
            llm = client()
            return [(await llm.chat(m)).text for m in messages]

        # A second batch would never end (batch_delay): a limit turns that into a failure.
        assert asyncio.run(asyncio.wait_for(again(), 600)) == ["OK"] * 3
        assert len(server.batches) == 1  # no second batch: nothing paid twice


def test_a_seed_goes_into_the_batch_line_body() -> None:
    with FakeOpenAI() as server:
        llm = LLMClient(
            base_url=server.base_url, api_key="x", model="m", batch=True, batch_poll=0.01,
            batch_gather=0.01,
        )  # fmt: skip

        async def go() -> str:
            return (await llm.chat([{"role": "user", "content": "hi"}], seed=1130)).text

        assert asyncio.run(go()) == "OK"
        [batch] = server.batches.values()
        [line] = server.files[batch["input_file_id"]].splitlines()
    assert json.loads(line)["body"]["seed"] == 1130


def batch_client(server: FakeOpenAI, **kw: object) -> LLMClient:
    options: dict[str, object] = {"model": "m", "batch_poll": 0.01, "batch_gather": 0.01}
    options.update(kw)
    return LLMClient(base_url=server.base_url, api_key="x", batch=True, **options)  # type: ignore[arg-type]


def ask(llm: LLMClient, n: int) -> list[str]:
    async def go() -> list[str]:
        answers = await asyncio.gather(
            *(llm.chat([{"role": "user", "content": f"say {i}"}]) for i in range(n))
        )
        return [a.text for a in answers]

    return asyncio.run(go())


def input_lines(server: FakeOpenAI) -> list[int]:
    return [len(server.files[b["input_file_id"]].splitlines()) for b in server.batches.values()]


def test_calls_beyond_the_request_limit_are_split_into_several_batches() -> None:
    # The provider fails a batch of more than its limit as a whole (too_many_tasks).
    with FakeOpenAI(batch_max_requests=2) as server:
        llm = batch_client(server, batch_max_requests=2)
        assert ask(llm, 5) == ["OK"] * 5
        assert input_lines(server) == [2, 2, 1]
        assert [b["status"] for b in server.batches.values()] == ["completed"] * 3


def test_calls_beyond_the_size_limit_are_split_into_several_batches() -> None:
    body = chat_request("m", [{"role": "user", "content": "say 0"}])
    key = make_key("chat", body)  # the custom id
    line = len(json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}))
    limit = 2 * line + 10  # two lines fit, not three
    with FakeOpenAI(batch_max_bytes=limit) as server:  # a larger upload: "File is too large."
        llm = batch_client(server, batch_max_bytes=limit)
        assert ask(llm, 5) == ["OK"] * 5
        assert input_lines(server) == [2, 2, 1]
        inputs = [server.files[b["input_file_id"]] for b in server.batches.values()]
        assert all(len(f) <= limit for f in inputs)


def test_a_call_too_large_for_any_batch_fails_alone() -> None:
    with FakeOpenAI() as server:
        llm = batch_client(server, batch_max_bytes=300)

        async def go() -> list[object]:
            return await asyncio.gather(
                llm.chat([{"role": "user", "content": "x" * 400}]),
                llm.chat([{"role": "user", "content": "hi"}]),
                return_exceptions=True,
            )

        big, small = asyncio.run(go())
    assert isinstance(big, LLMError) and "over the Batch API's 300 bytes" in str(big)
    assert small.text == "OK"  # type: ignore[union-attr]


def test_a_failed_batch_reports_its_errors() -> None:
    with FakeOpenAI(batch_max_requests=2) as server:
        llm = batch_client(server, batch_max_requests=10)  # more than the provider takes
        with pytest.raises(LLMError, match=r"too_many_tasks: The batch input file has 3 requests"):
            ask(llm, 3)
        assert len(server.batches) == 1  # a batch that failed as a whole is not sent again


def test_a_restarted_run_polls_every_batch_of_a_split_run(tmp_path: Path) -> None:
    messages = [[{"role": "user", "content": f"say {i}"}] for i in range(5)]
    with FakeOpenAI(batch_delay=1e9, batch_max_requests=2) as server:  # none ends by itself

        def client() -> LLMClient:
            return batch_client(server, batch_max_requests=2, cache=Cache(tmp_path / "c.sqlite"))

        async def killed() -> None:
            llm = client()
            task = asyncio.ensure_future(asyncio.gather(*(llm.chat(m) for m in messages)))
            while not (llm._batch is not None and llm._batch.batches == 3):
                await asyncio.sleep(0.01)
            task.cancel()  # the run dies while the provider holds its three batches
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(killed())
        assert input_lines(server) == [2, 2, 1]
        for batch in server.batches.values():
            batch["_ready"] = 0.0  # the provider finishes them while nobody runs

        async def again() -> list[str]:
            llm = client()
            return [a.text for a in await asyncio.gather(*(llm.chat(m) for m in messages))]

        assert asyncio.run(asyncio.wait_for(again(), 600)) == ["OK"] * 5
        assert len(server.batches) == 3  # each batch polled again, none paid twice


def test_a_line_the_provider_refuses_is_not_sent_again() -> None:
    # A 400 line (here: max_tokens to a reasoning model, as an old client sent it) would
    # be refused the same way each time.
    with FakeOpenAI() as server:
        llm = batch_client(server, model="o4-mini", max_retries=3)
        request = {"model": "o4-mini", "messages": [{"role": "user", "content": "hi"}],
                   "max_tokens": 1000}  # fmt: skip

        async def go() -> None:
            llm._bind()
            await llm._batch.call("key", request)

        with pytest.raises(LLMError, match="Use 'max_completion_tokens' instead"):
            asyncio.run(go())
        assert len(server.batches) == 1
