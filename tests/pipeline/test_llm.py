from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pipeline.cache import Cache, OfflineMiss
from pipeline.fakes import FakeOpenAI
from pipeline.llm import (
    LLMClient,
    LLMError,
    cost_usd,
    count_tokens,
    is_reasoning_model,
    price,
)
from pipeline.ratelimits import ProviderLimits

from .test_ratelimits import ManualClock

MESSAGES = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Say OK"}]


def client(server: FakeOpenAI, **kw: object) -> LLMClient:
    defaults: dict[str, object] = {
        "api_key": "k",
        "model": "gpt-4o",
        "backoff": 0.0,
        "timeout": 60.0,  # a guard against a hung call, far from any answer's time
    }
    defaults.update(kw)
    return LLMClient(base_url=server.base_url, **defaults)  # type: ignore[arg-type]


def chat(llm: LLMClient, messages: list[dict[str, str]] = MESSAGES) -> object:
    async def go() -> object:
        try:
            return await llm.chat(messages)
        finally:
            await llm.aclose()

    return asyncio.run(go())


def test_it_talks_to_an_openai_compatible_server(fake_llm: FakeOpenAI) -> None:
    result = chat(client(fake_llm))
    assert result.text == "OK" and not result.cached  # type: ignore[attr-defined]
    assert result.prompt_tokens > 0  # type: ignore[attr-defined]
    assert fake_llm.requests[0]["path"] == "/v1/chat/completions"
    assert fake_llm.requests[0]["body"]["model"] == "gpt-4o"


@pytest.mark.parametrize("fault", ["429", "500", "garbage", "timeout"])
def test_it_retries_each_kind_of_fault_then_gives_up(fault: str) -> None:
    # Only the hang needs a short deadline (1 s against 3 s); for the other faults the
    # deadline is far from anything a loaded machine takes to answer, so each attempt
    # ends with the fault, never with the deadline.
    with FakeOpenAI(fault_rate=1.0, faults=(fault,), hang=3.0) as server:
        llm = client(server, max_retries=2, timeout=1.0 if fault == "timeout" else 60.0)
        with pytest.raises(LLMError):
            chat(llm)
        assert len(server.requests) == 3  # first try + 2 retries
        assert llm.retries == 2


def test_it_recovers_when_a_retry_succeeds() -> None:
    # seed 3 faults the first attempt of this body and not the second (fixed by the hash)
    with FakeOpenAI(fault_rate=0.5, seed=3) as server:
        llm = client(server, max_retries=8)
        result = chat(llm)
        assert result.text == "OK"  # type: ignore[attr-defined]
        assert llm.retries == len(server.requests) - 1 >= 1


def test_a_bad_request_is_not_retried(fake_llm: FakeOpenAI) -> None:
    llm = client(fake_llm, max_retries=5)
    with pytest.raises(LLMError, match="BadRequest"):
        chat(llm, [])
    assert len(fake_llm.requests) == 1


def test_a_cached_answer_makes_no_call(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c.sqlite")
    assert chat(client(fake_llm, cache=cache)).cached is False  # type: ignore[attr-defined]
    again = chat(client(fake_llm, cache=cache))
    assert again.cached is True and again.text == "OK"  # type: ignore[attr-defined]
    assert len(fake_llm.requests) == 1
    # a different parameter is a different question
    chat(client(fake_llm, cache=cache, model="gpt-4o-mini"))
    assert len(fake_llm.requests) == 2


def test_offline_fails_clearly_on_a_miss(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    llm = client(fake_llm, cache=Cache(tmp_path / "c.sqlite"), offline=True)
    with pytest.raises(OfflineMiss, match="offline: no cached chat answer"):
        chat(llm)
    assert fake_llm.requests == []


def test_identical_concurrent_calls_share_one_request(fake_llm: FakeOpenAI, tmp_path: Path) -> None:
    llm = client(fake_llm, cache=Cache(tmp_path / "c.sqlite"))

    async def go() -> list[object]:
        out = await asyncio.gather(*(llm.chat(MESSAGES) for _ in range(5)))
        await llm.aclose()
        return list(out)

    assert len(asyncio.run(go())) == 5
    assert len(fake_llm.requests) == 1


def test_tokens_and_prices() -> None:
    assert count_tokens("hello world") == 2
    assert price("gpt-4o-2024-08-06") == price("gpt-4o") == (2.5, 10.0, 1.25)
    assert price("gpt-4o-mini") == (0.15, 0.60, 0.075)
    assert price("llama3:8b") is None
    assert cost_usd("gpt-4o", 1_000_000, 100_000) == pytest.approx(3.5)
    assert cost_usd("llama3:8b", 1000, 1000) == 0


def test_the_client_survives_a_new_event_loop(fake_llm: FakeOpenAI) -> None:
    llm = client(fake_llm)
    chat(llm)
    chat(llm)  # asyncio.run again: connections and semaphore are rebuilt
    assert len(fake_llm.requests) == 2


def test_concurrency_is_bounded() -> None:
    with FakeOpenAI(latency=0.05) as server:
        llm = client(server, concurrency=3)

        async def go() -> None:
            await asyncio.gather(
                *(llm.chat([{"role": "user", "content": f"q{i}"}]) for i in range(12))
            )
            await llm.aclose()

        asyncio.run(go())
        assert len(server.requests) == 12
        assert 1 <= server.max_in_flight <= 3


def test_the_rate_limiter_waits_for_the_bucket_to_refill() -> None:
    clock = ManualClock()
    waits = clock.waits

    async def go() -> None:
        limiter = ProviderLimits(concurrency=1000, tpm=60, clock=clock)  # one a second
        for _ in range(60):
            await limiter.acquire(1)
        assert waits == []  # a full minute's worth is available at once
        await limiter.acquire(1)
        assert waits == [pytest.approx(1.0)]
        await limiter.acquire(120)  # more than a minute's worth waits for a full bucket
        assert sum(waits) == pytest.approx(61.0)

    asyncio.run(go())


def test_the_timeout_is_a_total_deadline_against_a_server_that_drips_bytes() -> None:
    # Half a second per byte: every read gets a byte well within the timeout, so only a
    # deadline over the whole call ends it (the answer would take minutes to arrive).
    with FakeOpenAI(drip=0.5) as server:
        llm = client(server, max_retries=1, timeout=1.0)
        with pytest.raises(LLMError, match="no answer within 1 s"):
            chat(llm)
        assert len(server.requests) == 2 and llm.retries == 1


def test_a_seed_is_sent_only_when_given(fake_llm: FakeOpenAI) -> None:
    llm = client(fake_llm)

    async def go() -> None:
        try:
            await llm.chat([{"role": "user", "content": "a"}], seed=1130)
            await llm.chat([{"role": "user", "content": "b"}])
        finally:
            await llm.aclose()

    asyncio.run(go())
    seeded, plain = (r["body"] for r in fake_llm.requests)
    assert seeded["seed"] == 1130 and "seed" not in plain


@pytest.mark.parametrize(
    "model",
    ["o1", "o3-mini", "o3-2025-04-16", "o4-mini", "gpt-5", "gpt-5-nano-2025-08-07", "gpt-5.1"],
)
def test_a_reasoning_model_gets_max_completion_tokens_and_no_temperature(
    fake_llm: FakeOpenAI, model: str
) -> None:
    # The fake answers these models as OpenAI does: 400 for max_tokens or temperature 0.
    result = chat(client(fake_llm, model=model))
    assert result.text == "OK"  # type: ignore[attr-defined]
    [request] = fake_llm.requests
    assert request["body"]["max_completion_tokens"] == 1000
    assert "max_tokens" not in request["body"] and "temperature" not in request["body"]


def test_other_models_keep_max_tokens_and_temperature(fake_llm: FakeOpenAI) -> None:
    for model in ("gpt-4o-mini", "gpt-4-0125-preview", "llama3.1:8b", "o1lama"):
        assert not is_reasoning_model(model)
        chat(client(fake_llm, model=model))
    assert all(r["body"]["temperature"] == 0 for r in fake_llm.requests)
    assert all(r["body"]["max_tokens"] == 1000 for r in fake_llm.requests)


@pytest.mark.parametrize(
    ("body", "param", "text"),
    [
        ({"max_tokens": 1000}, "max_tokens", "Use 'max_completion_tokens' instead."),
        ({"temperature": 0.0}, "temperature", "does not support 0.0 with this model"),
    ],
)
def test_the_fake_refuses_what_the_real_api_refuses(
    fake_llm: FakeOpenAI, body: dict[str, object], param: str, text: str
) -> None:
    # What the client sent before reasoning models had their own request: a 400, not retried.
    request = {"model": "o4-mini", "messages": MESSAGES, **body}
    post = urllib.request.Request(
        f"{fake_llm.base_url}/chat/completions",
        json.dumps(request).encode(),
        {"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(post, timeout=60)  # a guard
    error = json.loads(refused.value.read())["error"]
    assert refused.value.code == 400 and error["param"] == param and text in error["message"]
    assert error["type"] == "invalid_request_error"


def test_an_answer_cut_off_before_any_text_is_a_failure_not_an_empty_answer() -> None:
    class Thinking(FakeOpenAI):  # a reasoning model whose reasoning used the whole budget
        def answer(self, path: str, headers: dict[str, str], data: dict[str, Any]) -> Any:
            status, body = super().answer(path, headers, data)
            body["choices"][0].update(message={"role": "assistant", "content": ""})
            body["choices"][0].update(finish_reason="length")
            return status, body

    with Thinking() as server:
        llm = client(server, model="o4-mini", max_retries=3)
        with pytest.raises(LLMError, match="cut off at 1000 tokens before any text"):
            chat(llm)
        assert len(server.requests) == 1  # the same request would end the same way
