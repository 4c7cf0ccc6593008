"""Pipeline runs in the background (django.tasks).

A run is split into chunks of documents and starting it enqueues one `process_chunk`
task per chunk, so any number of workers (`python manage.py db_worker`) share one run.
A worker claims its chunk with a conditional UPDATE (queued, or running with a heartbeat
older than PIPELINE_CHUNK_TIMEOUT), runs the pipeline on it, and ingests the results and
marks the chunk done in one transaction. A chunk whose worker was killed is taken over
by the next claim; the pipeline's SQLite answer cache (PIPELINE_CACHE_PATH) means the
answers the dead worker had already received are not asked for again. The last chunk to
finish computes the run's scores (K needs every response of a domain).

A run names one of the operator's endpoints (annotation.endpoints); the worker resolves
its URL and key from settings and its own environment at run time, so the run's config
never holds a URL or a key.
"""

from __future__ import annotations

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
from django.tasks import task
from django.utils import timezone

from pipeline.formats import scores_json
from pipeline.run import (
    ClientConfig,
    PipelineConfig,
    build_clients,
    run_responses_sync,
    score_results,
)
from pipeline.types import (
    ERROR,
    SUPPORTED,
    UNPARSED,
    Claim,
    ClaimResult,
    ResponseInput,
    ResponseResult,
    Verdict,
)

from . import endpoints
from .ingest import ingest_results
from .models import MAX_RUN_ERRORS, Document, PipelineChunk, PipelineRun, Project

HEARTBEAT_SECONDS = 2.0
DEFAULT_CHUNK_SIZE = 10


def run_config(
    *,
    extractor: str = "veriscore",
    label_mode: str = "binary",
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
    PipelineConfig(extractor=extractor, label_mode=label_mode)  # raises on a bad value
    endpoints.check(endpoint, model)  # raises on an unknown endpoint or model
    if retriever not in ("serper", "bm25"):
        raise ValueError(f"unknown retriever {retriever!r}")
    if chunk_size < 1:
        raise ValueError("the chunk size must be at least 1")
    unknown = set(client_options) - {"timeout", "max_retries", "backoff", "concurrency"}
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(sorted(unknown))}")
    return {
        "extractor": extractor,
        "label_mode": label_mode,
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
        transaction.on_commit(lambda: [process_chunk.enqueue(pk) for pk in chunk_ids])
    return run


def _stale_before(now: datetime) -> datetime:
    return now - timedelta(seconds=settings.PIPELINE_CHUNK_TIMEOUT)


def claim_chunk(chunk_id: int, *, worker: str, now: datetime | None = None) -> PipelineChunk | None:
    """Take the chunk if it is queued, or running under a worker that stopped reporting.
    One UPDATE ... WHERE: of two workers racing for it, exactly one gets a row."""
    now = now or timezone.now()
    claimable = Q(status=PipelineChunk.QUEUED) | Q(
        status=PipelineChunk.RUNNING, heartbeat_at__lt=_stale_before(now)
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
    """Enqueue a new task for every chunk whose worker stopped reporting (killed, or its
    machine went away). Called while the run page polls; safe to call any time."""
    now = now or timezone.now()
    stale = Q(status=PipelineChunk.RUNNING, heartbeat_at__lt=_stale_before(now))
    n = 0
    for pk in run.chunks.filter(stale).values_list("pk", flat=True):
        if PipelineChunk.objects.filter(stale, pk=pk).update(
            status=PipelineChunk.QUEUED, worker=""
        ):
            process_chunk.enqueue(pk)
            n += 1
    return n


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
    options = {
        k: config[k] for k in ("timeout", "max_retries", "backoff", "concurrency") if k in config
    }
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


def _run_pipeline(chunk: PipelineChunk, worker: str) -> list[ResponseResult]:
    """The pipeline on the chunk's documents, in a thread, while this thread reports a
    heartbeat and progress (the ORM may not be called from the pipeline's event loop)."""
    config = chunk.run.config
    clients = build_clients(_client_config(config))
    done = [0]

    def progress(n: int, _total: int) -> None:
        done[0] = n

    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            future = pool.submit(
                run_responses_sync,
                _inputs(chunk),
                config=PipelineConfig(
                    extractor=config["extractor"], label_mode=config["label_mode"]
                ),
                llm=clients.llm,
                searcher=clients.searcher,
                progress=progress,
            )
            while True:
                try:
                    return future.result(timeout=HEARTBEAT_SECONDS)
                except FutureTimeout:
                    PipelineChunk.objects.filter(pk=chunk.pk, worker=worker).update(
                        heartbeat_at=timezone.now(), done=done[0]
                    )
    finally:
        clients.close()


def _response_summary(r: ResponseResult) -> dict[str, Any]:
    return {
        "id": r.id,
        "model": r.model,
        "domain": r.domain,
        "abstained": r.abstained,
        "labels": [c.verdict.label if c.verdict else None for c in r.claims],
    }


def _add_counts(run: PipelineRun, results: list[ResponseResult]) -> None:
    counts: dict[str, int] = dict(run.counts or {})
    labels = [c.verdict.label if c.verdict else None for r in results for c in r.claims]

    def add(key: str, n: int) -> None:
        counts[key] = counts.get(key, 0) + n

    add("responses", len(results))
    add("abstained", sum(r.abstained for r in results))
    add("claims", len(labels))
    add("evidence", sum(len(c.evidence) for r in results for c in r.claims))
    add("verdicts", sum(1 for x in labels if x not in (None, ERROR)))
    add("supported", sum(1 for x in labels if x == SUPPORTED))
    add("unparsed", sum(1 for x in labels if x == UNPARSED))
    add("unverified", sum(1 for x in labels if x in (None, ERROR)))
    add("llm_calls", sum(r.usage.calls for r in results))
    add("cached_llm_calls", sum(r.usage.cached_calls for r in results))
    add("searches", sum(r.usage.search_calls for r in results))
    add("cached_searches", sum(r.usage.cached_search_calls for r in results))
    run.counts = counts
    run.tokens += sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in results)
    run.cost += sum(endpoints.run_cost(run.config, r.usage) for r in results)


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
) -> bool:
    """Ingest the chunk's results and mark it done (or failed) in one transaction; the
    last chunk finishes the run. False when another worker took the chunk over."""
    with transaction.atomic():
        # The run's row lock serialises finishing workers on PostgreSQL (SQLite's
        # IMMEDIATE transactions already do), so exactly one sees the last chunk done.
        run = PipelineRun.objects.select_for_update().get(pk=chunk.run_id)
        owned = PipelineChunk.objects.filter(
            pk=chunk.pk, worker=worker, status=PipelineChunk.RUNNING
        ).exists()
        if not owned:
            return False
        now = timezone.now()
        if results is not None:
            ingest_results(
                project=run.project,
                results=results,
                extractor_name=run.extractor_name,
                verifier_name=run.verifier_name,
                config={k: v for k, v in run.config.items() if k != "chunk_size"},
            )
            _add_counts(run, results)
            _add_errors(run, [f"{r.id}: {e}" for r in results for e in r.errors])
            PipelineChunk.objects.filter(pk=chunk.pk).update(
                status=PipelineChunk.DONE,
                done=len(results),
                finished_at=now,
                heartbeat_at=now,
                summary=[_response_summary(r) for r in results],
            )
        else:
            _add_errors(run, [f"chunk {chunk.index}: {error}"])
            PipelineChunk.objects.filter(pk=chunk.pk).update(
                status=PipelineChunk.FAILED, finished_at=now, heartbeat_at=now
            )
        if not run.chunks.exclude(status__in=[PipelineChunk.DONE, PipelineChunk.FAILED]).exists():
            finalize(run)
        run.save()
    return True


def finalize(run: PipelineRun) -> None:
    """Scores over every chunk's responses, and the final status (not saved here)."""
    summaries = [s for c in run.chunks.filter(status=PipelineChunk.DONE) for s in c.summary]
    results = [
        ResponseResult(
            id=s["id"],
            response="",
            question=None,
            model=s["model"],
            domain=s["domain"],
            abstained=s["abstained"],
            extractor="",
            extraction_model="",
            verification_model="",
            prompt_version="",
            label_mode="",
            retriever="",
            claims=[
                ClaimResult(Claim("", -1, ""), verdict=Verdict(x, "", True) if x else None)
                for x in s["labels"]
            ],
        )
        for s in summaries
    ]
    fixed_k = run.config.get("fixed_k")
    table = score_results(results, fixed_k=float(fixed_k) if fixed_k else None)
    run.scores = scores_json(table) if results else None
    failed = run.chunks.filter(status=PipelineChunk.FAILED).exists()
    run.status = PipelineRun.FAILED if failed else PipelineRun.FINISHED
    run.finished_at = timezone.now()
    if run.started_at is None:
        run.started_at = run.finished_at


def run_chunk(chunk_id: int, *, worker: str | None = None) -> str:
    """Claim, process and finish one chunk; returns what happened."""
    worker = worker or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    chunk = claim_chunk(chunk_id, worker=worker)
    if chunk is None:
        return "not claimable"  # done, or another worker has it
    try:
        results = _run_pipeline(chunk, worker)
    except Exception as e:  # an offline cache miss, a bad corpus path, ...: the run goes on
        finish_chunk(chunk, worker=worker, error=f"{type(e).__name__}: {e}")
        return "failed"
    finished = finish_chunk(chunk, worker=worker, results=results)
    # A worker that died on another chunk of this run is noticed here too, not only
    # while someone watches the run page.
    requeue_stale_chunks(chunk.run)
    return "done" if finished else "taken over"


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
