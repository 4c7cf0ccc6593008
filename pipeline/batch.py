"""Chat calls through the provider's Batch API (`--batch`): half the price, answers later.

Calls the pipeline makes are gathered while they keep coming (`gather` seconds without a
new one close a batch), written as a JSONL file ({custom_id, method, url, body} per line,
the custom id being the call's cache key), uploaded (POST /v1/files, purpose "batch") and
sent as one batch (POST /v1/batches, 24 h window). The batch is polled until it ends; each
answer then goes to the cache like any other, so the results are the same as without
--batch. Which batch holds a call is noted in the cache as soon as the batch exists: a
run started again after a crash polls that batch instead of paying for the call twice.

A failed line (an error, a non-200 status) or a line left unanswered when the batch
expired is sent again in a later batch, up to the client's max_retries; after that it is
a failed call like any other (LLMError). A batch that fails as a whole fails its calls.
While calls wait on the provider, `waiting` is true (the platform shows "waiting").
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from pipeline.errors import LLMError
from pipeline.ratelimits import Clock

if TYPE_CHECKING:
    from pipeline.llm import LLMClient

DONE = ("completed", "expired", "failed", "cancelled")
ENDPOINT = "/v1/chat/completions"


class BatchQueue:
    def __init__(self, llm: LLMClient, client: Any, *, poll: float, gather: float, clock: Clock):
        self.llm = llm
        self.client = client  # openai.AsyncOpenAI
        self.poll = poll
        self.gather = gather
        self.clock = clock
        self.pending: dict[str, tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = {}
        self.attempts: dict[str, int] = {}
        self.batches = 0  # batches created by this queue
        self.in_batch = 0  # calls sent and not yet answered
        self._runner: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def waiting(self) -> bool:
        return self.in_batch > 0

    async def call(self, key: str, request: dict[str, Any]) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[key] = (request, future)
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run())
        return await future

    async def _run(self) -> None:
        while self.pending:
            seen = -1
            while seen != len(self.pending):  # until calls stop coming
                seen = len(self.pending)
                await asyncio.sleep(self.gather)
            todo, self.pending = self.pending, {}
            task = asyncio.create_task(self._send(todo))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send(self, todo: dict[str, tuple[dict[str, Any], asyncio.Future[Any]]]) -> None:
        cache = self.llm.cache
        groups: dict[str, dict[str, Any]] = {}
        fresh = {}
        for key, item in todo.items():
            known = cache.noted(f"batch:{key}") if cache is not None else None
            if known:
                groups.setdefault(known, {})[key] = item
            else:
                fresh[key] = item
        try:
            if fresh:
                batch_id = await self._create(fresh)
                groups.setdefault(batch_id, {}).update(fresh)
        except Exception as e:
            self._fail(fresh, f"the batch could not be created: {type(e).__name__}: {e}")
        await asyncio.gather(*(self._collect(b, group) for b, group in groups.items()))

    async def _create(self, items: dict[str, tuple[dict[str, Any], Any]]) -> str:
        lines = "".join(
            json.dumps({"custom_id": k, "method": "POST", "url": ENDPOINT, "body": r}) + "\n"
            for k, (r, _) in items.items()
        )
        file = await self.client.files.create(file=("calls.jsonl", lines.encode()), purpose="batch")
        batch = await self.client.batches.create(
            input_file_id=file.id, endpoint=ENDPOINT, completion_window="24h"
        )
        self.batches += 1
        if self.llm.cache is not None:
            for key in items:
                self.llm.cache.note(f"batch:{key}", batch.id)
        return str(batch.id)

    async def _collect(self, batch_id: str, items: dict[str, Any]) -> None:
        self.in_batch += len(items)
        try:
            while True:
                batch = await self.client.batches.retrieve(batch_id)
                self.llm.batch_polls += 1
                if batch.status in DONE:
                    break
                await self.clock.sleep(self.poll)
            lines: dict[str, dict[str, Any]] = {}
            for file_id in (batch.output_file_id, batch.error_file_id):
                if file_id:
                    content = await self.client.files.content(file_id)
                    for line in content.text.splitlines():
                        if line.strip():
                            row = json.loads(line)
                            lines[row["custom_id"]] = row
        except Exception as e:
            self._forget(items)
            self._fail(items, f"batch {batch_id}: {type(e).__name__}: {e}")
            return
        finally:
            self.in_batch -= len(items)
        self._forget(items)
        again = {}
        for key, (request, future) in items.items():
            row = lines.get(key) or {}
            response = row.get("response") or {}
            if response.get("status_code") == 200:
                future.set_result(_answer(request, response["body"]))
                continue
            error = row.get("error") or (response.get("body") or {}).get("error") or {}
            why = error.get("message") or f"batch {batch.status}, no answer"
            self.attempts[key] = self.attempts.get(key, 0) + 1
            if batch.status == "failed" or self.attempts[key] > self.llm.max_retries:
                future.set_exception(_error(f"batch {batch_id}: {why}"))
            else:
                self.llm.retries += 1
                again[key] = (request, future)
        for key, item in again.items():
            self.pending[key] = item
        if again and (self._runner is None or self._runner.done()):
            self._runner = asyncio.create_task(self._run())

    def _forget(self, items: dict[str, Any]) -> None:
        if self.llm.cache is not None:
            for key in items:
                self.llm.cache.note(f"batch:{key}", None)

    def _fail(self, items: dict[str, Any], why: str) -> None:
        for _, future in items.values():
            if not future.done():
                future.set_exception(_error(why))


def _error(why: str) -> Exception:
    return LLMError(why)


def _answer(request: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    text = body["choices"][0]["message"]["content"]
    usage = body.get("usage") or {}
    return {
        "text": text,
        "prompt_tokens": int(usage.get("prompt_tokens", 0)),
        "completion_tokens": int(usage.get("completion_tokens", 0)),
        "cached_tokens": int((usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)),
        "batch": True,  # priced at the Batch discount
    }
