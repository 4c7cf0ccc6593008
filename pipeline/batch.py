"""Chat calls through the provider's Batch API (`--batch`): half the price, answers later.

Calls the pipeline makes are gathered while they keep coming (`gather` seconds without a
new one close a batch), written as JSONL files ({custom_id, method, url, body} per line,
the custom id being the call's cache key), uploaded (POST /v1/files, purpose "batch") and
sent as batches (POST /v1/batches, 24 h window). An input file holds at most
`max_requests` lines and `max_bytes` bytes (the Batch API's documented 50,000 requests
and 200 MB), so a large run is split into several batches. Each batch is polled until it
ends; each answer then goes to the cache like any other, so the results are the same as
without --batch. Which batch holds a call is noted in the cache as soon as the batch
exists: a run started again after a crash polls those batches instead of paying twice.

A failed line (an error, a non-200 status) or a line left unanswered when the batch
expired is sent again in a later batch, up to the client's max_retries; after that it is
a failed call like any other (LLMError). A line the provider refuses as invalid (4xx)
is not sent again. A batch that fails as a whole fails its calls with the batch's own
`errors` (e.g. too_many_tasks). While calls wait on the provider, `waiting` is true (the
platform shows "waiting").
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pipeline.ratelimits import Clock

if TYPE_CHECKING:
    from pipeline.llm import LLMClient

DONE = ("completed", "expired", "failed", "cancelled")
ENDPOINT = "/v1/chat/completions"
MAX_REQUESTS = 50_000  # lines per input file (the Batch API's limit)
MAX_BYTES = 200_000_000  # bytes per input file: 200 MB, counted as the provider counts
RETRY_STATUSES = (408, 409, 429)  # 4xx lines worth sending again; other 4xx are refusals


class BatchQueue:
    def __init__(
        self,
        llm: LLMClient,
        client: Any,
        *,
        poll: float,
        gather: float,
        clock: Clock,
        max_requests: int = MAX_REQUESTS,
        max_bytes: int = MAX_BYTES,
    ):
        self.llm = llm
        self.client = client  # openai.AsyncOpenAI
        self.poll = poll
        self.gather = gather
        self.clock = clock
        self.max_requests = max_requests
        self.max_bytes = max_bytes
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
        for part, lines in self._split(fresh):
            try:
                batch_id = await self._create(part, lines)
            except Exception as e:
                self._fail(part, f"the batch could not be created: {type(e).__name__}: {e}")
                continue
            groups.setdefault(batch_id, {}).update(part)
        await asyncio.gather(*(self._collect(b, group) for b, group in groups.items()))

    def _split(
        self, items: dict[str, tuple[dict[str, Any], Any]]
    ) -> Iterator[tuple[dict[str, Any], str]]:
        """Input files within max_requests lines and max_bytes bytes, one at a time (a
        large run never holds more than one file's text); a call whose line alone is too
        large fails (no batch could take it)."""
        part: dict[str, Any] = {}
        lines: list[str] = []
        size = 0
        for key, item in items.items():
            line = json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT,
                               "body": item[0]}) + "\n"  # fmt: skip
            n = len(line.encode())
            if n > self.max_bytes:
                self._fail({key: item}, f"a request of {n} bytes is over the Batch API's "
                           f"{self.max_bytes} bytes per input file")  # fmt: skip
                continue
            if part and (len(part) >= self.max_requests or size + n > self.max_bytes):
                yield part, "".join(lines)
                part, lines, size = {}, [], 0
            part[key] = item
            lines.append(line)
            size += n
        if part:
            yield part, "".join(lines)

    async def _create(self, items: dict[str, Any], lines: str) -> str:
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
                choice = response["body"]["choices"][0]
                text = choice["message"].get("content")
                if not text and choice.get("finish_reason") == "length":
                    future.set_exception(_error(f"batch {batch_id}: {_cut_off(request)}"))
                    continue
                if text is not None:
                    future.set_result(_answer(request, response["body"]))
                    continue
                row = {"error": {"message": "answer without text"}}  # sent again
            error = row.get("error") or (response.get("body") or {}).get("error") or {}
            why = error.get("message") or _batch_errors(batch) or f"batch {batch.status}, no answer"
            status = response.get("status_code") or 0
            refused = 400 <= status < 500 and status not in RETRY_STATUSES
            self.attempts[key] = self.attempts.get(key, 0) + 1
            if batch.status == "failed" or refused or self.attempts[key] > self.llm.max_retries:
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


def _batch_errors(batch: Any) -> str:
    """What a batch that failed as a whole says about it (`errors.data`: code, line,
    message), '' when it says nothing."""
    errors = getattr(batch, "errors", None)
    data = getattr(errors, "data", None) or []
    return "; ".join(
        f"{e.code or 'error'}{f' (line {e.line})' if getattr(e, 'line', None) else ''}: {e.message}"
        for e in data
    )


def _error(why: str) -> Exception:
    from pipeline.llm import LLMError

    return LLMError(why)


def _cut_off(request: dict[str, Any]) -> str:
    from pipeline.llm import cut_off

    return cut_off(request)


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
