"""Pipeline runs in the background (django.tasks).

A run is split into chunks of documents and starting it enqueues one `process_chunk`
task per chunk, so any number of workers (`python manage.py db_worker`) share one run.
A worker claims its chunk with a conditional UPDATE (queued, or running without progress
for PIPELINE_CHUNK_TIMEOUT), runs the pipeline on it, and reports progress (calls and
responses finished) as its heartbeat. A chunk with failed calls is tried again, up to
PIPELINE_CHUNK_ATTEMPTS attempts, then fails with the reason; so does a chunk that keeps
making no progress. A chunk whose worker was killed or is stuck is taken over: by the
next claim, and by a sweep task that re-enqueues itself every PIPELINE_SWEEP_SECONDS
while the run is unfinished (no page visit needed). A chunk whose calls wait on the
provider's Batch API (a run with `batch`) is "waiting": its worker's heartbeat goes on
between polls, so it is not taken over however long the provider holds the batch (a
killed worker's is, and its successor polls the same batch: the ids are in the cache).
The pipeline's SQLite answer cache
(PIPELINE_CACHE_PATH) means answers already received are not asked for again.

Done chunks keep their results; only when every chunk is done are they ingested, in one
transaction with the run's scores (K needs every response of a domain), under systems
named with the run's id. A failed or cancelled run writes nothing into the project, and
a researcher can retry its failed chunks.

A run names one of the operator's endpoints (annotation.endpoints); the worker resolves
its URL and key from settings and its own environment at run time, so the run's config
never holds a URL or a key.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import uuid
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Q
from django.tasks import TaskResultStatus, task
from django.utils import timezone

from pipeline.cache import OfflineMiss
from pipeline.formats import scores_json
from pipeline.run import (
    ClientConfig,
    Clients,
    build_clients,
    run_responses,
    scores_metadata,
)
from pipeline.score import no_verdict_parsed
from pipeline.types import (
    ERROR,
    SUPPORTED,
    UNPARSED,
    ResponseInput,
    ResponseResult,
    result_from_dict,
)

from . import endpoints, webhooks
from .ingest import ingest_results
from .models import MAX_RUN_ERRORS, Document, PipelineChunk, PipelineRun, Project, System
from .reports.pipeline_scores import score_run

HEARTBEAT_SECONDS = 2.0
DEFAULT_CHUNK_SIZE = 10


# Client options a run may set; "batch" (the provider's Batch API) and "batch_poll".
CLIENT_OPTIONS = ("timeout", "max_retries", "backoff", "concurrency", "batch", "batch_poll")


def run_config(
    *,
    extractor: str = "veriscore",
    label_mode: str = "binary",
    reference: str | None = None,
    model: str = "gpt-4o-mini",
    endpoint: str = endpoints.DEFAULT,
    retriever: str = "serper",
    offline: bool = False,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    fixed_k: float | None = None,
    **client_options: Any,
) -> dict[str, Any]:
    """A run's config, validated. `client_options` (timeout, max_retries, backoff,
    concurrency) tune the clients; nothing here may be a secret."""
    reference = reference or None
    endpoints.pipeline_config(  # raises on a bad value or a reference mode the server lacks
        {"extractor": extractor, "label_mode": label_mode, "reference": reference,
         "endpoint": endpoint}
    )  # fmt: skip
    endpoints.check(endpoint, model)  # raises on an unknown endpoint or model
    if retriever not in ("serper", "bm25"):
        raise ValueError(f"unknown retriever {retriever!r}")
    if chunk_size < 1:
        raise ValueError("the chunk size must be at least 1")
    unknown = set(client_options) - {*CLIENT_OPTIONS}
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(sorted(unknown))}")
    return {
        "extractor": extractor,
        "label_mode": label_mode,
        **({"reference": reference} if reference else {}),
        "model": model,
        "endpoint": endpoint,
        "retriever": retriever,
        "offline": offline,
        "chunk_size": chunk_size,
        "fixed_k": fixed_k,
        **client_options,
    }


def start_run(
    *,
    project: Project,
    user: User | None,
    config: dict[str, Any],
    documents: list[Document] | None = None,
) -> PipelineRun:
    """Create the run and its chunks and enqueue one task per chunk (after the commit, so
    a worker never looks for a run that is not there yet)."""
    docs = documents if documents is not None else list(project.documents.order_by("id"))
    ids = [d.pk for d in docs]
    size = int(config.get("chunk_size") or DEFAULT_CHUNK_SIZE)
    with transaction.atomic():
        run = PipelineRun.objects.create(
            project=project, created_by=user, config=config, total=len(ids)
        )
        chunks = PipelineChunk.objects.bulk_create(
            PipelineChunk(run=run, index=n, document_ids=ids[start : start + size])
            for n, start in enumerate(range(0, len(ids), size))
        )
        chunk_ids = [c.pk for c in PipelineChunk.objects.filter(run=run).order_by("index")]
        if not chunks:
            finalize(run)
            run.save()
            webhooks.run_finished(run)
        transaction.on_commit(lambda: _enqueue(run.pk, chunk_ids))
    return run


def _enqueue(run_id: int, chunk_ids: list[int]) -> None:
    for pk in chunk_ids:
        process_chunk.enqueue(pk)
    schedule_sweep(run_id)


def schedule_sweep(run_id: int) -> None:
    """Look for the run's stale chunks in PIPELINE_SWEEP_SECONDS (a deferred task; a
    backend that cannot defer runs tasks at once, where nothing can go stale)."""
    backend = sweep_run.get_backend()
    if backend.supports_defer:
        later = timezone.now() + timedelta(seconds=settings.PIPELINE_SWEEP_SECONDS)
        # Below the chunks' priority: a due sweep never holds up the work itself.
        priority = -10 if backend.supports_priority else sweep_run.priority
        sweep_run.using(run_after=later, priority=priority).enqueue(run_id)


@task()
def sweep_run(run_id: int) -> int:
    """Requeue the run's stale chunks, then come back later while the run is unfinished."""
    run = PipelineRun.objects.filter(pk=run_id).first()
    if run is None or run.is_over:
        return 0
    n = requeue_stale_chunks(run)
    schedule_sweep(run_id)
    return n


def clock() -> datetime:
    """The time of heartbeats and of staleness: timezone.now(). A test puts in a clock it
    advances itself, so a slow machine can never make a chunk look stalled."""
    return timezone.now()


def _stale_before(now: datetime) -> datetime:
    return now - timedelta(seconds=settings.PIPELINE_CHUNK_TIMEOUT)


def claim_chunk(chunk_id: int, *, worker: str, now: datetime | None = None) -> PipelineChunk | None:
    """Take the chunk if it is queued, or running under a worker that stopped reporting.
    One UPDATE ... WHERE: of two workers racing for it, exactly one gets a row."""
    now = now or clock()
    claimable = Q(status=PipelineChunk.QUEUED) | Q(
        status__in=PipelineChunk.HELD, heartbeat_at__lt=_stale_before(now)
    )
    with transaction.atomic():
        taken = PipelineChunk.objects.filter(claimable, pk=chunk_id).update(
            status=PipelineChunk.RUNNING,
            worker=worker,
            attempts=F("attempts") + 1,
            done=0,
            started_at=now,
            heartbeat_at=now,
            finished_at=None,
        )
        if not taken:
            return None
        chunk = PipelineChunk.objects.select_related("run__project").get(pk=chunk_id)
        PipelineRun.objects.filter(pk=chunk.run_id, status=PipelineRun.QUEUED).update(
            status=PipelineRun.RUNNING, started_at=now
        )
    return chunk


def requeue_stale_chunks(run: PipelineRun, *, now: datetime | None = None) -> int:
    """Enqueue a new task for every chunk whose worker stopped making progress (killed,
    stuck, or its machine went away); a chunk out of attempts fails instead. Called by the
    sweep task, by workers finishing a chunk and by the run page; safe to call any time."""
    now = now or clock()
    stale = Q(status__in=PipelineChunk.HELD, heartbeat_at__lt=_stale_before(now))
    n = 0
    for pk, attempts, worker in run.chunks.filter(stale).values_list("pk", "attempts", "worker"):
        _fail_task_rows(pk, worker, now)
        if attempts >= settings.PIPELINE_CHUNK_ATTEMPTS:
            reason = (
                f"no progress for {settings.PIPELINE_CHUNK_TIMEOUT} s "
                f"(worker {worker}, attempt {attempts})"
            )
            chunk = PipelineChunk.objects.get(pk=pk)
            finish_chunk(chunk, worker=worker, error=reason)
            continue
        if PipelineChunk.objects.filter(stale, pk=pk).update(
            status=PipelineChunk.QUEUED, worker=""
        ):
            process_chunk.enqueue(pk)
            n += 1
    return n


def _fail_task_rows(chunk_id: int, worker: str, now: datetime) -> int:
    """The task rows of a chunk whose worker stopped reporting: failed, not RUNNING
    forever (a killed worker never ends its row); the chunk's work is requeued as a new
    task."""
    reason = (
        f"The worker {worker or '(unknown)'} stopped reporting for more than "
        f"{settings.PIPELINE_CHUNK_TIMEOUT} s; the chunk was requeued."
    )
    return fail_task_rows(process_chunk, [chunk_id], reason, now=now)


class WorkerLost(Exception):
    """Recorded on a task row whose worker died (`fail_task_rows`); never raised."""


def fail_task_rows(
    of: Any, args: list[Any], reason: str, *, now: datetime, started_before: datetime | None = None
) -> int:
    """Fail the RUNNING task rows (the database task backend's) of task `of` called with
    `args`, started before `started_before` if given: a killed worker never ends its row.
    One UPDATE ... WHERE status is RUNNING: a row its worker ended meanwhile stays as it
    is. Shared by the chunks' sweep and the background imports'. Returns how many."""
    if "django_tasks_db" not in settings.INSTALLED_APPS:
        return 0
    from django_tasks_db.models import DBTaskResult

    rows = DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING, task_path=of.module_path, args_kwargs__args=args
    )
    if started_before is not None:
        rows = rows.filter(started_at__lt=started_before)
    return rows.update(
        status=TaskResultStatus.FAILED,
        finished_at=now,
        exception_class_path=f"{__name__}.{WorkerLost.__name__}",
        traceback=reason,
    )


def running_task_args(of: Any, *, started_before: datetime) -> list[list[Any]]:
    """The args of task `of`'s rows RUNNING since before `started_before` (none without
    the database task backend)."""
    if "django_tasks_db" not in settings.INSTALLED_APPS:
        return []
    from django_tasks_db.models import DBTaskResult

    rows = DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING, task_path=of.module_path, started_at__lt=started_before
    )
    return [a.get("args", []) for a in rows.values_list("args_kwargs", flat=True)]


def _inputs(chunk: PipelineChunk) -> list[ResponseInput]:
    docs = Document.objects.filter(project=chunk.run.project, pk__in=chunk.document_ids)
    return [
        ResponseInput(
            id=d.external_id,
            response=d.response,
            question=d.question or None,
            model=d.source_model,
            domain=d.domain,
        )
        for d in docs.order_by("id")
    ]


def _client_config(config: dict[str, Any]) -> ClientConfig:
    options = {k: config[k] for k in CLIENT_OPTIONS if k in config}
    # Only the endpoint's name comes from the run; anything else a run's config may hold
    # (an old run's base_url) is never used.
    endpoint = endpoints.check(config.get("endpoint") or endpoints.DEFAULT, config["model"])
    cfg = ClientConfig.from_env(
        model=config["model"],
        retriever=config.get("retriever", "serper"),
        serper_url=settings.PIPELINE_SERPER_URL,
        corpus=settings.PIPELINE_BM25_CORPUS or None,
        cache_path=settings.PIPELINE_CACHE_PATH,
        offline=bool(config.get("offline")),
        **options,
    )
    cfg.base_url, cfg.api_key = endpoint.base_url or None, endpoint.api_key()
    if cfg.offline and not cfg.serper_api_key:
        cfg.serper_api_key = "offline"  # never used: offline answers come from the cache
    return cfg


class Abandoned(Exception):
    """The chunk was taken over (no progress) or its run cancelled: stop working on it."""


def _progress(clients: Clients, done: int) -> tuple[int, ...]:
    """Changes whenever a response, a call or an attempt finishes."""
    llm, searcher = clients.llm, clients.searcher
    return (
        done,
        llm.finished,
        llm.retries,
        getattr(searcher, "finished", 0),
        getattr(searcher, "retries", 0),
        # A chunk waiting on a batch is waiting, not stalled: every poll the provider
        # answers is progress, so the deadline applies to the polling, not to the batch.
        getattr(llm, "batch_polls", 0),
    )


def _run_pipeline(chunk: PipelineChunk, worker: str) -> list[ResponseResult]:
    """The pipeline on the chunk's documents, in a thread, while this thread reports
    progress as the heartbeat (the ORM may not be called from the pipeline's event loop).
    When the chunk is no longer this worker's, the pipeline is cancelled: Abandoned."""
    config = chunk.run.config
    clients = build_clients(_client_config(config))
    done = [0]
    running: dict[str, Any] = {}

    def progress(n: int, _total: int) -> None:
        done[0] = n

    async def main(inputs: list[ResponseInput]) -> list[ResponseResult]:
        running["loop"], running["task"] = asyncio.get_running_loop(), asyncio.current_task()
        try:
            return await run_responses(
                inputs,
                config=endpoints.pipeline_config(config),
                llm=clients.llm,
                searcher=clients.searcher,
                progress=progress,
            )
        finally:
            await clients.aclose()

    pool = ThreadPoolExecutor(max_workers=1)
    try:
        future = pool.submit(asyncio.run, main(_inputs(chunk)))
        seen = _progress(clients, 0)
        mine = PipelineChunk.objects.filter(
            pk=chunk.pk, worker=worker, status__in=PipelineChunk.HELD
        )
        waiting = False
        while True:
            try:
                return future.result(timeout=HEARTBEAT_SECONDS)
            except FutureTimeout:
                now = _progress(clients, done[0])
                batch_waiting = getattr(clients.llm, "waiting", False)
                if batch_waiting or waiting or now != seen:
                    # While the provider holds a batch the worker is alive, not stalled:
                    # "waiting", and the heartbeat goes on between the polls.
                    waiting, seen = batch_waiting, now
                    still_mine = mine.update(
                        heartbeat_at=clock(),
                        done=done[0],
                        status=PipelineChunk.WAITING if waiting else PipelineChunk.RUNNING,
                    )
                else:
                    still_mine = mine.exists()
                if not still_mine:
                    if "task" in running:  # set as soon as the pipeline's loop starts
                        running["loop"].call_soon_threadsafe(running["task"].cancel)
                    raise Abandoned() from None
    finally:
        pool.shutdown(wait=True)
        clients.close()


def _response_summary(r: ResponseResult) -> dict[str, Any]:
    return {
        "id": r.id,
        "model": r.model,
        "domain": r.domain,
        "abstained": r.abstained,
        "labels": [c.verdict.label if c.verdict else None for c in r.claims],
    }


def _failures(results: list[ResponseResult]) -> str:
    """Why an attempt failed: its failed calls, counted, with the first few errors."""
    incomplete = [r for r in results if r.incomplete]
    if not incomplete:
        return ""
    calls = sum(r.failed_units for r in incomplete)
    first = "; ".join(f"{r.id}: {e}" for r in incomplete[:3] for e in r.errors[:1])
    return f"{calls} call(s) failed in {len(incomplete)} of {len(results)} responses ({first})"


def _add_counts(
    run: PipelineRun, results: list[ResponseResult], *, paid_only: bool = False
) -> None:
    """Add a chunk's counts to the run's. `paid_only` (an attempt that failed): only the
    calls paid for, their tokens and cost; its retry takes the rest from the cache."""
    counts: dict[str, int] = dict(run.counts or {})
    labels = [c.verdict.label if c.verdict else None for r in results for c in r.claims]

    def add(key: str, n: int) -> None:
        counts[key] = counts.get(key, 0) + n

    add("llm_calls", sum(r.usage.calls for r in results))
    add("searches", sum(r.usage.search_calls for r in results))
    run.tokens += sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in results)
    run.cost += sum(endpoints.run_cost(run.config, r.usage) for r in results)
    if paid_only:
        run.counts = counts
        return
    add("responses", len(results))
    add("abstained", sum(r.abstained for r in results))
    add("claims", len(labels))
    add("evidence", sum(len(c.evidence) for r in results for c in r.claims))
    add("verdicts", sum(1 for x in labels if x not in (None, ERROR)))
    add("supported", sum(1 for x in labels if x == SUPPORTED))
    add("unparsed", sum(1 for x in labels if x == UNPARSED))
    add("unverified", sum(1 for x in labels if x in (None, ERROR)))
    add("cached_llm_calls", sum(r.usage.cached_calls for r in results))
    add("cached_searches", sum(r.usage.cached_search_calls for r in results))
    run.counts = counts


def _add_errors(run: PipelineRun, errors: list[str]) -> None:
    run.error_count += len(errors)
    room = MAX_RUN_ERRORS - len(run.errors)
    if room > 0:
        run.errors = [*run.errors, *(e[:500] for e in errors[:room])]


def finish_chunk(
    chunk: PipelineChunk,
    *,
    worker: str,
    results: list[ResponseResult] | None = None,
    error: str = "",
    retry: bool = False,
    spent: list[ResponseResult] | None = None,
) -> bool:
    """Record the attempt in one transaction: keep the results of a done chunk, or put a
    failed one back in the queue (`retry`, while attempts remain) or fail it with the
    reason, counting what its calls cost (`spent`). The last chunk finishes the run.
    False when the chunk is no longer this worker's (taken over, or the run cancelled)."""
    requeue = False
    error = endpoints.redact(error)  # researchers read it: names, not the operator's URLs
    with transaction.atomic():
        # The run's row lock serialises finishing workers on PostgreSQL (SQLite's
        # IMMEDIATE transactions already do), so exactly one sees the last chunk done.
        run = PipelineRun.objects.select_for_update().get(pk=chunk.run_id)
        mine = PipelineChunk.objects.filter(
            pk=chunk.pk, worker=worker, status__in=PipelineChunk.HELD
        )
        attempts = mine.values_list("attempts", flat=True).first()
        if attempts is None:
            return False
        now = clock()
        if results is not None:
            _add_counts(run, results)
            mine.update(
                status=PipelineChunk.DONE,
                done=len(results),
                finished_at=now,
                heartbeat_at=now,
                error="",
                summary=[_response_summary(r) for r in results],
                results=[dataclasses.asdict(r) for r in results],
            )
        else:
            requeue = retry and attempts < settings.PIPELINE_CHUNK_ATTEMPTS
            _add_counts(run, spent or [], paid_only=True)
            _add_errors(run, [f"chunk {chunk.index}, attempt {attempts}: {error}"])
            if requeue:
                mine.update(status=PipelineChunk.QUEUED, worker="", error=error)
            else:
                mine.update(
                    status=PipelineChunk.FAILED, finished_at=now, heartbeat_at=now, error=error
                )
        over = [PipelineChunk.DONE, PipelineChunk.FAILED, PipelineChunk.CANCELLED]
        if not run.chunks.exclude(status__in=over).exists():
            finalize(run)
            webhooks.run_finished(run)
        run.save()
        if requeue:
            transaction.on_commit(lambda: process_chunk.enqueue(chunk.pk))
    return True


def finalize(run: PipelineRun) -> None:
    """Every chunk is over. When all are done: the results go into the project, under the
    run's own systems, with the scores over every chunk's responses. Otherwise the run
    failed and writes nothing. The status is set, not saved."""
    run.finished_at = timezone.now()
    if run.started_at is None:
        run.started_at = run.finished_at
    if run.chunks.exclude(status=PipelineChunk.DONE).exists():
        run.status = PipelineRun.FAILED
        return
    results = [result_from_dict(r) for c in run.chunks.order_by("index") for r in c.results]
    unparsed = no_verdict_parsed(results)
    if unparsed:  # a verifier that never answers as asked: a failure, never a VERIScore of 0
        _add_errors(run, [unparsed])
        run.status = PipelineRun.FAILED
        return
    if results:
        summary = ingest_results(
            project=run.project,
            results=results,
            extractor_name=run.extractor_name,
            verifier_name=run.verifier_name,
            config={k: v for k, v in run.config.items() if k != "chunk_size"},
        )
        _add_errors(run, [f"warning: {w}" for w in summary.warnings])  # links not stored
        System.objects.filter(
            project=run.project, name__in=[run.extractor_name, run.verifier_name]
        ).update(pipeline_run=run)
    table = score_run(results, run.config)  # as the report scores the run's verdicts
    run.scores = {"run": _scores_metadata(run.config), **scores_json(table)} if results else None
    run.status = PipelineRun.FINISHED


def _scores_metadata(config: dict[str, Any]) -> dict[str, Any]:
    try:
        return scores_metadata(endpoints.pipeline_config(config))
    except KeyError as e:  # a replayed run: its results were made elsewhere
        return {"mode": config.get("reference") or "default", "unknown": f"no {e} in the config"}
    except ValueError as e:  # the server's reference set-up changed since the run began
        return {"mode": config.get("reference") or "default", "error": str(e)}


# What fills the cache on the platform: the run form's checkbox, not the CLI's flag.
OFFLINE_HINT = "start a run once with “Offline” unticked"


def run_chunk(chunk_id: int, *, worker: str | None = None) -> str:
    """Claim, process and finish one chunk; returns what happened."""
    worker = worker or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    chunk = claim_chunk(chunk_id, worker=worker)
    if chunk is None:
        return "not claimable"  # done, or another worker has it
    try:
        results = _run_pipeline(chunk, worker)
    except Abandoned:
        return "taken over"
    except OfflineMiss as e:  # the pipeline's hint names its command-line flag
        why = str(e).replace("run once without --offline", OFFLINE_HINT)
        finish_chunk(chunk, worker=worker, error=f"OfflineMiss: {why}")
        return "failed"
    except Exception as e:  # a bad corpus path...: no retry helps
        finish_chunk(chunk, worker=worker, error=f"{type(e).__name__}: {e}")
        return "failed"
    failed = _failures(results)
    if failed:  # an outage is an error, never a result: try again, then fail with the reason
        finish_chunk(chunk, worker=worker, error=failed, retry=True, spent=results)
        outcome = "failed calls"
    else:
        outcome = "done" if finish_chunk(chunk, worker=worker, results=results) else "taken over"
    # A worker that died on another chunk of this run is noticed here too.
    requeue_stale_chunks(chunk.run)
    return outcome


def cancel_run(run: PipelineRun) -> bool:
    """Stop an unfinished run: its chunks are not run (a worker on one stops at its next
    heartbeat) and nothing is written into the project. False if the run was over."""
    with transaction.atomic():
        run = PipelineRun.objects.select_for_update().get(pk=run.pk)
        if run.is_over:
            return False
        run.chunks.filter(status__in=[PipelineChunk.QUEUED, *PipelineChunk.HELD]).update(
            status=PipelineChunk.CANCELLED, worker="", finished_at=timezone.now()
        )
        run.status = PipelineRun.CANCELLED
        run.finished_at = timezone.now()
        run.save()
        webhooks.run_finished(run)
    return True


def retry_run(run: PipelineRun) -> int:
    """Run the failed and cancelled chunks of a failed or cancelled run again, with fresh
    attempts (done chunks keep their results). Returns how many chunks were queued."""
    with transaction.atomic():
        run = PipelineRun.objects.select_for_update().get(pk=run.pk)
        if not run.can_retry:
            return 0
        again = run.chunks.filter(status__in=[PipelineChunk.FAILED, PipelineChunk.CANCELLED])
        chunk_ids = list(again.values_list("pk", flat=True))
        again.update(status=PipelineChunk.QUEUED, attempts=0, worker="", finished_at=None, done=0)
        run.status = PipelineRun.QUEUED
        run.finished_at = None
        run.scores = None
        run.save()
        transaction.on_commit(lambda: _enqueue(run.pk, chunk_ids))
    return len(chunk_ids)


@task()
def process_chunk(chunk_id: int) -> str:
    return run_chunk(chunk_id)


def replay_run(
    *,
    project: Project,
    results: list[ResponseResult],
    config: dict[str, Any],
    user: User | None = None,
) -> PipelineRun:
    """A finished run from results computed elsewhere (recorded outputs, a CLI run): one
    chunk, ingested like a worker would, no call made."""
    with transaction.atomic():
        run = PipelineRun.objects.create(
            project=project,
            created_by=user,
            config=config,
            total=len(results),
            status=PipelineRun.RUNNING,
            started_at=timezone.now(),
        )
        worker = "replay"
        chunk = PipelineChunk.objects.create(
            run=run,
            index=0,
            status=PipelineChunk.RUNNING,
            worker=worker,
            attempts=1,
            started_at=run.started_at,
            heartbeat_at=run.started_at,
        )
        docs = []
        for r in results:
            doc, _ = Document.objects.get_or_create(
                project=project,
                external_id=r.id,
                defaults={
                    "response": r.response,
                    "question": r.question or "",
                    "domain": r.domain,
                    "source_model": r.model,
                },
            )
            docs.append(doc.pk)
        PipelineChunk.objects.filter(pk=chunk.pk).update(document_ids=docs)
        finish_chunk(chunk, worker=worker, results=results)
    run.refresh_from_db()
    return run
