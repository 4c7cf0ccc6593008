"""Following the provider's rate limits: headers, Retry-After, calls in flight, the fake."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from pipeline.fakes import FakeLimits, FakeOpenAI
from pipeline.llm import LLMClient
from pipeline.ratelimits import Clock, ProviderLimits, parse_duration, retry_after

from .conftest import REPO


class ManualClock(Clock):
    """Time that moves only when someone sleeps: no test here waits for real time."""

    def __init__(self) -> None:
        super().__init__()
        self.t = 0.0
        self.waits: list[float] = []

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.t += max(0.0, seconds)
        await asyncio.sleep(0)


def test_durations_read_as_openai_writes_them() -> None:
    assert parse_duration("6m0s") == 360.0
    assert parse_duration("20ms") == pytest.approx(0.02)
    assert parse_duration("1m30.5s") == 90.5
    assert parse_duration("2") == 2.0
    assert parse_duration("soon") is None and parse_duration(None) is None


def test_the_fake_provider_enforces_both_limits_and_says_so_in_headers() -> None:
    clock = ManualClock()
    limits = FakeLimits(rpm=2, tpm=1000, clock=clock)
    ok, headers = limits.take(100)
    assert ok and headers["x-ratelimit-remaining-requests"] == "1"
    assert headers["x-ratelimit-remaining-tokens"] == "900"
    assert headers["x-ratelimit-limit-requests"] == "2"
    assert parse_duration(headers["x-ratelimit-reset-requests"]) == pytest.approx(30.0)
    assert limits.take(100)[0]
    ok, headers = limits.take(100)  # the third request in the minute
    assert not ok and float(headers["Retry-After"]) == pytest.approx(30.0)
    clock.t = 30.0
    assert limits.take(100)[0]  # half a minute refills one request
    clock.t = 1000.0
    ok, headers = limits.take(950)  # within requests, beyond what a minute's tokens leave
    assert ok
    ok, headers = limits.take(950)
    assert not ok and float(headers["Retry-After"]) == pytest.approx(900 / 1000 * 60)
    assert (limits.admitted, limits.refused) == (4, 2)


def test_the_client_learns_the_limits_from_headers_and_paces_to_them() -> None:
    clock = ManualClock()

    async def go() -> None:
        limits = ProviderLimits(concurrency=8, clock=clock)
        await limits.acquire(10)  # nothing known yet: no wait
        await limits.release(
            {"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "0",
             "x-ratelimit-limit-tokens": "6000", "x-ratelimit-remaining-tokens": "5990"}
        )  # fmt: skip
        assert limits.requests is not None and limits.requests.capacity == 60
        await limits.acquire(10)  # none left: wait a second for the next one
        assert clock.waits == [pytest.approx(1.0)]
        await limits.release(None)

    asyncio.run(go())


def test_a_429_halves_the_calls_in_flight_and_holds_all_calls_until_retry_after() -> None:
    clock = ManualClock()

    async def go() -> None:
        limits = ProviderLimits(concurrency=8, rpm=1000, clock=clock)
        await limits.acquire(1)
        await limits.release({"Retry-After": "4"}, rate_limited=True)
        assert limits.allowed == 4 and limits.rate_limited == 1
        await limits.acquire(1)  # any call, not only the one refused, waits
        assert sum(clock.waits) == pytest.approx(4.0)
        await limits.release({})
        assert limits.allowed == 5  # and the answers win the slots back one by one
        for _ in range(5):
            await limits.acquire(1)
        blocked = asyncio.create_task(limits.acquire(1))
        await asyncio.sleep(0)
        assert not blocked.done()  # the 6th waits for a slot (5 allowed, of 8)
        await limits.release({})
        await blocked
        assert limits.in_flight == 5

    asyncio.run(go())


def test_a_run_against_a_rate_limited_fake_answers_every_call() -> None:
    # A simulated minute lasts 0.1 s: 12 calls at 5 per minute need two minutes of waits.
    clock = Clock(scale=600)
    with FakeOpenAI(rpm=5, tpm=100_000, clock=clock, recorded=None) as server:
        llm = LLMClient(base_url=server.base_url, api_key="x", model="m", clock=clock)

        async def go() -> list[str]:
            msgs = [[{"role": "user", "content": f"say {i}"}] for i in range(12)]
            answers = await asyncio.gather(*(llm.chat(m) for m in msgs))
            await llm.aclose()
            return [a.text for a in answers]

        assert asyncio.run(go()) == ["OK"] * 12
        assert server.limits is not None and server.limits.admitted == 12
        assert llm._limits.requests is not None and llm._limits.requests.capacity == 5


@pytest.mark.slow
def test_the_rate_limit_benchmark_runs_quickly_and_prints_figures() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "rate_limits.py"), "--quick"],
        cwd=REPO, capture_output=True, text=True, timeout=600,  # a guard
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for figure in ("allowed by the limits:", "of the request limit", "429s:", "of calls sent"):
        assert figure in proc.stdout


def test_retry_after_is_read_in_each_form_a_provider_sends() -> None:
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 GMT
    assert retry_after({"retry-after-ms": "1500"}) == 1.5  # OpenAI's, before Retry-After
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after": "Tue, 14 Nov 2023 22:13:50 GMT"}, now=now) == 30.0
    assert retry_after({"retry-after": "Tue, 14 Nov 2023 22:13:00 GMT"}, now=now) == 0.0
    assert retry_after({"retry-after": "whenever"}) is None
    assert retry_after({}) is None


class _LimitedOnce(FakeOpenAI):
    """Answers the first call with a 429 carrying `headers`, then normally."""

    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__(recorded=None)
        self.limit_headers = headers

    def _respond(self, path, headers, data, fault):  # type: ignore[no-untyped-def]
        if len(self.requests) == 1:
            return 429, b'{"error": {"message": "Rate limit reached"}}', self.limit_headers
        return super()._respond(path, headers, data, fault)


@pytest.mark.parametrize(
    "headers", [{"retry-after-ms": "4000"}, {"Retry-After": "60", "retry-after-ms": "4000"}]
)
def test_the_client_holds_its_calls_for_a_retry_after_in_milliseconds(
    headers: dict[str, str],
) -> None:
    clock = ManualClock()
    with _LimitedOnce(headers) as server:
        llm = LLMClient(base_url=server.base_url, api_key="x", model="m", clock=clock)

        async def go() -> str:
            try:
                return (await llm.chat([{"role": "user", "content": "hi"}])).text
            finally:
                await llm.aclose()

        assert asyncio.run(go()) == "OK"
    assert len(server.requests) == 2 and sum(clock.waits) == pytest.approx(4.0)


def test_a_server_error_s_retry_after_date_sets_the_wait_before_the_retry() -> None:
    import email.utils

    import httpx
    import openai

    from pipeline.llm import _retry_after

    when = email.utils.formatdate(time.time() + 3600, usegmt=True)
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(503, headers={"Retry-After": when}, request=request)
    error = openai.InternalServerError("busy", response=response, body=None)
    wait = _retry_after(error)
    assert wait is not None and 3590 < wait <= 3600
