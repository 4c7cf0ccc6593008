"""Pipeline runs in the background: django-tasks-db workers over the fake OpenAI and
Serper servers (real HTTP on 127.0.0.1, no network), chunks shared between workers, a
killed worker's chunk taken over without repeating a stored call, faults counted."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connections
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from annotation.kinds.comparison import comparison_items
from annotation.kinds.verification import verification_items
from annotation.models import (
    Claim,
    ClaimList,
    Document,
    Evidence,
    Item,
    Membership,
    PipelineChunk,
    PipelineRun,
    Project,
    System,
    Verdict,
)
from annotation.tasks import (
    cancel_run,
    claim_chunk,
    finish_chunk,
    retry_run,
    run_config,
    start_run,
)
from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.run import ClientConfig, PipelineConfig, build_clients, run_responses_sync
from pipeline.types import ResponseInput

REPO = Path(__file__).resolve().parents[2]
BIOS = [json.loads(line) for line in (REPO / "fixtures/pipeline/factscore_bios.jsonl").open()]
OPENAI_KEY = "sk-test-NEVER-STORED-openai"
SERPER_KEY = "serper-NEVER-STORED-key"


@pytest.fixture
def servers(settings, tmp_path: Path, monkeypatch) -> Iterator[tuple[FakeOpenAI, FakeSerper]]:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("SERPER_API_KEY", SERPER_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("PIPELINE_MODEL", raising=False)
    settings.PIPELINE_CACHE_PATH = str(tmp_path / "pipeline-cache.sqlite")
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    with FakeOpenAI(latency=0.01) as llm, FakeSerper(latency=0.01) as serper:
        settings.PIPELINE_SERPER_URL = serper.url
        settings.PIPELINE_ENDPOINTS = [{"name": "fake", "base_url": llm.base_url}]
        yield llm, serper


@pytest.fixture
def bios(transactional_db: None) -> Project:
    alice = User.objects.create_user("alice", password="pw-alice")
    project = Project.objects.create(name="bios")
    project.add_member(alice, Membership.RESEARCHER)
    for b in BIOS[:6]:
        Document.objects.create(
            project=project,
            external_id=b["id"],
            question=b["question"],
            response=b["response"],
            source_model=b["model"],
            domain=b["prompt_source"],
        )
    return project


def config_for(llm: FakeOpenAI, **extra: object) -> dict[str, object]:
    from django.conf import settings

    # the calls' deadline is a guard, far from any answer's time on a loaded machine
    options: dict[str, object] = {"timeout": 60.0, "backoff": 0.0, "chunk_size": 2}
    options.update(extra)
    # The operator's endpoint "fake" is this server (within the `servers` fixture's override).
    settings.PIPELINE_ENDPOINTS = [{"name": "fake", "base_url": llm.base_url}]
    return run_config(model="gpt-4o-mini", endpoint="fake", **options)  # type: ignore[arg-type]


def db_worker(worker_id: str, *, batch: bool = True) -> Worker:
    return Worker(
        queue_names=["default"],
        interval=0 if batch else 0.05,
        batch=batch,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id=worker_id,
        excluded_queue_names=[],
    )


def in_thread(worker: Worker) -> threading.Thread:
    def work() -> None:
        try:
            worker.run()
        finally:
            connections.close_all()

    thread = threading.Thread(target=work)
    thread.start()
    return thread


def drain(workers: int = 1) -> list[str]:
    """Run `workers` db_worker loops in threads until the queue is empty."""
    ids = [f"worker-{n}" for n in range(workers)]
    for t in [in_thread(db_worker(w)) for w in ids]:
        t.join(timeout=600)  # a guard against a hung worker, not a timing
    return ids


def chunk_tasks():  # type: ignore[no-untyped-def]
    return DBTaskResult.objects.filter(task_path__endswith=".process_chunk")


def extraction_prompts(llm: FakeOpenAI) -> list[str]:
    return [
        json.dumps(r["body"]["messages"])
        for r in llm.requests
        if "Sentence to be focused on" in json.dumps(r["body"])
    ]


@pytest.mark.slow
def test_the_background_task_ingests_a_run_into_the_project(servers, bios: Project) -> None:  # type: ignore[no-untyped-def]
    llm, serper = servers
    alice = User.objects.get(username="alice")
    run = start_run(project=bios, user=alice, config=config_for(llm))
    assert run.status == PipelineRun.QUEUED and run.total == 6
    assert run.chunks.count() == 3
    # one task per chunk, enqueued on commit, and the sweep for stale chunks, deferred
    assert chunk_tasks().count() == 3
    assert DBTaskResult.objects.exclude(pk__in=chunk_tasks()).get().run_after > timezone.now()

    call_command(
        "db_worker", "--batch", "--no-startup-delay", "--no-reload", "--interval=0", verbosity=0
    )

    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
    assert run.done == run.total == 6
    assert run.error_count == 0 and run.errors == []
    assert run.counts["responses"] == 6
    assert run.counts["claims"] > 6
    assert run.counts["llm_calls"] == len(llm.requests)
    assert run.counts["searches"] == len(serper.requests)
    assert run.tokens > 0
    extractor = System.objects.get(project=bios, name=f"pipeline:veriscore:gpt-4o-mini:run{run.pk}")
    verifier = System.objects.get(project=bios, name=run.verifier_name)
    assert extractor.pipeline_run == verifier.pipeline_run == run
    assert (extractor.kind, extractor.origin, extractor.model) == (
        "extractor",
        "pipeline",
        "gpt-4o-mini",
    )
    assert extractor.prompt_version == "veriscore-extract-v1"
    assert (verifier.kind, verifier.prompt_version) == ("verifier", "veriscore-verify-v2")
    assert ClaimList.objects.filter(system=extractor).count() == 6
    claims = Claim.objects.filter(claim_list__system=extractor)
    assert claims.count() == run.counts["claims"]
    assert Evidence.objects.filter(claim__in=claims).count() == run.counts["evidence"]
    assert Verdict.objects.filter(system=verifier).count() == run.counts["verdicts"]
    assert set(Verdict.objects.filter(system=verifier).values_list("label", flat=True)) <= {
        "supported",
        "unsupported",
        "unparsed",
    }
    first = claims.order_by("claim_list__document_id", "position").first()
    assert first is not None and first.sentence and first.sentence_index is not None
    # scores over the whole run, computed when the last chunk finished
    assert run.scores is not None
    assert {r["model"] for r in run.scores["rows"]} == {b["model"] for b in BIOS[:6]}
    assert len(run.scores["responses"]) == 6
    assert all(c.attempts == 1 and c.status == "done" for c in run.chunks.all())
    # what annotators need can be made from the run with the existing functions
    items = verification_items(project=bios, system=extractor, n=5, seed=0)
    assert len(items) == 5 and all(i.claim.evidence.exists() for i in items)  # type: ignore[union-attr]
    # a second extractor over the same documents gives comparison items
    atomic = start_run(project=bios, user=alice, config=config_for(llm, extractor="atomic"))
    drain()
    atomic.refresh_from_db()
    assert atomic.status == PipelineRun.FINISHED
    other = System.objects.get(project=bios, name=f"pipeline:atomic:gpt-4o-mini:run{atomic.pk}")
    assert len(comparison_items(project=bios, system_a=extractor, system_b=other)) == 6
    assert Item.objects.filter(project=bios).count() == 11


@pytest.mark.slow
def test_two_workers_share_one_run_and_claim_each_chunk_once(servers, bios: Project) -> None:  # type: ignore[no-untyped-def]
    llm, _ = servers
    llm.latency = 0.05
    run = start_run(project=bios, user=None, config=config_for(llm, chunk_size=1))
    assert run.chunks.count() == 6
    workers = drain(workers=2)
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED
    chunks = list(run.chunks.all())
    assert all(c.attempts == 1 and c.status == "done" for c in chunks)
    # both workers took part (the tasks are claimed one at a time from one queue)
    used = {r.worker_ids[0] for r in chunk_tasks()}
    assert used == set(workers)
    # no response was processed twice: every extraction prompt was sent exactly once
    prompts = extraction_prompts(llm)
    assert len(prompts) == len(set(prompts)) > 0
    assert ClaimList.objects.filter(system__name=run.extractor_name).count() == 6


def test_a_chunk_is_claimed_by_one_worker_only(servers, bios: Project) -> None:  # type: ignore[no-untyped-def]
    llm, _ = servers
    run = start_run(project=bios, user=None, config=config_for(llm))
    chunk = run.chunks.first()
    assert chunk is not None
    assert claim_chunk(chunk.pk, worker="w1") is not None
    assert claim_chunk(chunk.pk, worker="w2") is None
    chunk.refresh_from_db()
    assert (chunk.worker, chunk.attempts, chunk.status) == ("w1", 1, "running")


def test_a_killed_workers_chunk_is_taken_over_without_repeating_stored_calls(  # type: ignore[no-untyped-def]
    servers, bios: Project, settings
) -> None:
    llm, serper = servers
    run = start_run(project=bios, user=None, config=config_for(llm, chunk_size=6))
    chunk = run.chunks.get()
    # The first worker claims the chunk, gets every answer (each stored in the cache the
    # moment it arrives) and is killed before it could ingest anything.
    assert claim_chunk(chunk.pk, worker="killed") is not None
    clients = build_clients(
        ClientConfig(
            base_url=llm.base_url,
            api_key="x",
            model="gpt-4o-mini",
            serper_api_key="x",
            serper_url=serper.url,
            cache_path=settings.PIPELINE_CACHE_PATH,
            timeout=60.0,
            backoff=0.0,
        )
    )
    docs = Document.objects.filter(pk__in=chunk.document_ids).order_by("id")
    run_responses_sync(
        [
            ResponseInput(
                id=d.external_id,
                response=d.response,
                question=d.question,
                model=d.source_model,
                domain=d.domain,
            )
            for d in docs
        ],
        config=PipelineConfig(),
        llm=clients.llm,
        searcher=clients.searcher,
    )
    clients.close()
    calls_before = (len(llm.requests), len(serper.requests))
    assert ClaimList.objects.count() == 0
    # Its task is gone; the queued one is not run yet. Before the timeout, nobody may take it.
    DBTaskResult.objects.all().delete()
    assert claim_chunk(chunk.pk, worker="eager") is None
    PipelineChunk.objects.filter(pk=chunk.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.PIPELINE_CHUNK_TIMEOUT + 1)
    )
    from annotation.tasks import requeue_stale_chunks

    assert requeue_stale_chunks(run) == 1
    drain()
    run.refresh_from_db()
    chunk.refresh_from_db()
    assert run.status == PipelineRun.FINISHED
    assert (chunk.status, chunk.attempts) == ("done", 2)
    assert (len(llm.requests), len(serper.requests)) == calls_before  # nothing asked twice
    assert run.counts["llm_calls"] == 0 and run.counts["cached_llm_calls"] > 0
    assert ClaimList.objects.count() == 6


@pytest.mark.slow
def test_faults_from_the_fakes_end_in_a_finished_run_with_errors_counted(  # type: ignore[no-untyped-def]
    servers, bios: Project, settings
) -> None:
    # No hangs among the faults: a hang needs a deadline short enough to wait out, which
    # every other answer would have to beat on a loaded machine (a run against a dripping
    # endpoint meets its deadline in test_a_dripping_endpoint_cannot_keep_a_chunk_running).
    faults = ("429", "500", "garbage")
    with (
        FakeOpenAI(fault_rate=0.2, seed=3, faults=faults) as llm,
        FakeSerper(fault_rate=0.2, seed=3, faults=faults) as serper,
    ):
        settings.PIPELINE_SERPER_URL = serper.url
        settings.PIPELINE_ENDPOINTS = [{"name": "fake", "base_url": llm.base_url}]
        run = start_run(
            project=bios,
            user=None,
            config=config_for(llm, max_retries=1, chunk_size=3),
        )
        drain()
        faults = llm.faults_served() + serper.faults_served()
    run.refresh_from_db()
    assert faults > 0
    assert run.status == PipelineRun.FINISHED
    assert run.error_count > 0 and len(run.errors) == min(run.error_count, 200)
    assert run.counts["responses"] == 6 and run.scores is not None
    assert run.scores["incomplete"] == 0  # failed attempts were retried, none scored
    # calls paid for in failed attempts count too (none is counted twice)
    answered = sum(1 for r in llm.requests if not r["fault"])
    assert 0 < run.counts["llm_calls"] <= answered


def test_an_offline_miss_fails_the_chunk_and_the_run_says_why(servers, bios: Project) -> None:  # type: ignore[no-untyped-def]
    llm, _ = servers
    run = start_run(project=bios, user=None, config=config_for(llm, offline=True, chunk_size=6))
    drain()
    run.refresh_from_db()
    assert run.status == PipelineRun.FAILED
    assert "OfflineMiss" in run.errors[0]
    # the platform's words: the run form's checkbox, not the command line's flag
    assert "“Offline” unticked to fill the cache" in run.errors[0]
    assert "--offline" not in run.errors[0]
    assert llm.requests == []


def test_no_api_key_is_stored(servers, bios: Project) -> None:  # type: ignore[no-untyped-def]
    llm, _ = servers
    start_run(project=bios, user=None, config=config_for(llm, chunk_size=6))
    drain()
    dump = json.dumps(
        [list(m.objects.values()) for m in (PipelineRun, PipelineChunk, System, DBTaskResult)],
        default=str,
    )
    assert OPENAI_KEY not in dump and SERPER_KEY not in dump
    assert len(llm.requests) > 0


def test_the_config_is_validated() -> None:
    with pytest.raises(ValueError):
        run_config(extractor="nope")
    with pytest.raises(ValueError):
        run_config(retriever="bing")
    with pytest.raises(ValueError):
        run_config(api_key="sk-...")  # keys never go into a run's config
    with pytest.raises(ValueError):
        run_config(base_url="http://127.0.0.1:9/v1")  # nor URLs: a run names an endpoint
    with pytest.raises(ValueError, match="unknown endpoint"):
        run_config(endpoint="mine")


def test_a_worker_finishing_its_chunk_takes_up_a_dead_workers_chunk(  # type: ignore[no-untyped-def]
    servers, bios: Project, settings
) -> None:
    llm, _ = servers
    run = start_run(project=bios, user=None, config=config_for(llm, chunk_size=3))
    dead, alive = run.chunks.order_by("index")
    assert claim_chunk(dead.pk, worker="killed") is not None
    # it died with its task: only the other chunk's task is left in the queue
    assert chunk_tasks().filter(args_kwargs__args=[dead.pk]).delete()[0] == 1
    PipelineChunk.objects.filter(pk=dead.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.PIPELINE_CHUNK_TIMEOUT + 1)
    )
    drain()
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED
    assert [(c.status, c.attempts) for c in run.chunks.order_by("index")] == [
        ("done", 2),
        ("done", 1),
    ]


def work_until(condition, *, workers: int = 2, limit: float = 600.0) -> None:  # type: ignore[no-untyped-def]
    """Run db_worker loops (not in batch mode: deferred sweeps must run too) until
    `condition()` holds (`limit` s: a guard against a hang, not a timing), then stop them."""
    loops = [db_worker(f"loop-{n}", batch=False) for n in range(workers)]
    threads = [in_thread(w) for w in loops]
    try:
        deadline = time.monotonic() + limit
        while not condition():
            assert time.monotonic() < deadline, "the state was never reached"
            time.sleep(0.05)
    finally:
        for w in loops:
            w.running = False
        for t in threads:
            t.join(timeout=60)


def run_over(run: PipelineRun):  # type: ignore[no-untyped-def]
    return lambda: PipelineRun.objects.get(pk=run.pk).is_over


@pytest.mark.slow
def test_an_outage_fails_the_run_and_writes_nothing_into_the_project(  # type: ignore[no-untyped-def]
    servers, bios: Project, settings
) -> None:
    _, serper = servers
    down = FakeOpenAI().start()
    down.stop()  # nothing listens on its port any more
    run = start_run(project=bios, user=None, config=config_for(down, max_retries=0, chunk_size=3))
    drain()
    run.refresh_from_db()
    assert run.status == PipelineRun.FAILED
    chunks = list(run.chunks.all())
    assert [(c.status, c.attempts) for c in chunks] == [("failed", 3), ("failed", 3)]
    assert all("call(s) failed" in c.error and "Connection" in c.error for c in chunks)
    assert any("attempt 3" in e for e in run.errors)
    assert run.scores is None and run.counts["llm_calls"] == 0  # nothing answered, nothing paid
    assert not System.objects.filter(project=bios).exists()
    assert not ClaimList.objects.exists() and not Verdict.objects.exists()

    # the endpoint is back: a later run is complete and stands on its own
    llm, _ = servers
    later = start_run(project=bios, user=None, config=config_for(llm, chunk_size=3))
    drain()
    later.refresh_from_db()
    assert later.status == PipelineRun.FINISHED
    assert ClaimList.objects.filter(system__pipeline_run=later).count() == 6
    assert Claim.objects.filter(claim_list__system__name=later.extractor_name).count() > 6
    assert PipelineRun.current(bios) == later


def test_a_dripping_endpoint_cannot_keep_a_chunk_running(servers, bios: Project, settings) -> None:  # type: ignore[no-untyped-def]
    settings.PIPELINE_CHUNK_ATTEMPTS = 1
    with FakeOpenAI(drip=0.5) as dripping:
        run = start_run(
            project=bios,
            user=None,
            config=config_for(dripping, timeout=1.0, max_retries=0, chunk_size=6),
        )
        drain()
    run.refresh_from_db()
    assert run.status == PipelineRun.FAILED
    assert "no answer within 1 s" in run.chunks.get().error
    assert not ClaimList.objects.exists()


def test_a_chunk_without_progress_is_taken_over_by_the_workers_sweep(  # type: ignore[no-untyped-def]
    servers, bios: Project, settings
) -> None:
    # The endpoint drips and the run's own timeout is long: the worker is alive but its
    # calls make no progress. No page is visited; the workers' sweep takes it over, and
    # after its attempts the chunk fails with the reason.
    settings.PIPELINE_CHUNK_TIMEOUT = 1
    settings.PIPELINE_SWEEP_SECONDS = 0.2
    settings.PIPELINE_CHUNK_ATTEMPTS = 2
    with FakeOpenAI(drip=1.0) as dripping:
        run = start_run(
            project=bios, user=None, config=config_for(dripping, timeout=600, chunk_size=6)
        )
        work_until(run_over(run))
    run.refresh_from_db()
    chunk = run.chunks.get()
    assert run.status == PipelineRun.FAILED
    assert (chunk.status, chunk.attempts) == ("failed", 2)
    assert chunk.error.startswith("no progress for 1 s")
    assert not ClaimList.objects.exists()


@pytest.mark.slow
def test_a_killed_workers_chunk_is_swept_without_a_page_visit(  # type: ignore[no-untyped-def]
    servers, bios: Project, settings
) -> None:
    settings.PIPELINE_SWEEP_SECONDS = 0.2
    llm, _ = servers
    run = start_run(project=bios, user=None, config=config_for(llm, chunk_size=6))
    chunk = run.chunks.get()
    assert claim_chunk(chunk.pk, worker="killed") is not None
    chunk_tasks().delete()  # the worker died with its task; only the sweep is queued
    PipelineChunk.objects.filter(pk=chunk.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.PIPELINE_CHUNK_TIMEOUT + 1)
    )
    work_until(run_over(run), workers=1)
    run.refresh_from_db()
    chunk.refresh_from_db()
    assert run.status == PipelineRun.FINISHED
    assert (chunk.status, chunk.attempts) == ("done", 2)
    assert ClaimList.objects.filter(system__pipeline_run=run).count() == 6


def test_a_run_can_be_cancelled_and_its_failed_chunks_retried(  # type: ignore[no-untyped-def]
    servers, bios: Project
) -> None:
    llm, _ = servers
    run = start_run(project=bios, user=None, config=config_for(llm, chunk_size=3))
    first = run.chunks.order_by("index").first()
    assert first is not None and claim_chunk(first.pk, worker="busy") is not None
    assert cancel_run(run)
    assert not cancel_run(run)  # once over, nothing to cancel
    drain()  # the queued tasks find nothing to do
    run.refresh_from_db()
    assert run.status == PipelineRun.CANCELLED
    assert {c.status for c in run.chunks.all()} == {"cancelled"}
    assert not ClaimList.objects.exists() and llm.requests == []
    # the busy worker's late result is refused: the chunk is no longer its own
    assert not finish_chunk(first, worker="busy", results=[])

    assert retry_run(run) == 2
    drain()
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED
    assert ClaimList.objects.filter(system__pipeline_run=run).count() == 6
    assert retry_run(run) == 0  # a finished run has nothing to retry


@pytest.mark.slow
def test_a_reference_run_makes_the_released_requests_and_records_its_mode(
    servers, bios: Project, settings
) -> None:  # type: ignore[no-untyped-def]
    from .test_reference_runs import set_up_reference

    set_up_reference(settings)
    llm, _ = servers
    # answers in every shape: the released rule reads only those with the label first (a
    # fake that always reasons first leaves nothing parsed, and the run fails saying so)
    llm.verdicts = "varied"
    run = start_run(project=bios, user=None, config=config_for(llm, reference="veriscore"))
    drain()
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
    bodies = [r["body"] for r in llm.requests]
    assert bodies and all(b["seed"] == 1130 and b["temperature"] == 0 for b in bodies)
    assert any("Response:  <SOS>" in b["messages"][-1]["content"] for b in bodies)
    assert run.scores["run"]["mode"] == "veriscore"
    assert run.scores["run"]["splitter"] == "spacy:sentencizer"


def test_a_run_error_names_the_endpoint_not_its_url(servers, bios: Project) -> None:  # type: ignore[no-untyped-def]
    """Issue 38 (low): run errors showed the operator's internal search URL to researchers.
    A chunk's error keeps the endpoint's name and hides the operator's URLs."""
    llm, serper = servers
    run = start_run(project=bios, user=None, config=config_for(llm, chunk_size=6))
    chunk = run.chunks.get()
    assert claim_chunk(chunk.pk, worker="w1") is not None
    error = (
        f"ConnectError: {llm.base_url}/chat/completions refused; "
        f"search {serper.url}/search?q=x gave 500; see http://10.0.0.7:9200/corpus"
    )
    finish_chunk(chunk, worker="w1", error=error)
    chunk.refresh_from_db()
    assert chunk.error == (
        "ConnectError: the endpoint 'fake' refused; search the search service gave 500; see (a URL)"
    )
    for url in (llm.base_url, serper.url, "10.0.0.7"):
        assert url not in chunk.error


def test_a_killed_workers_task_row_is_failed_and_its_chunk_requeued(servers, bios: Project) -> None:  # type: ignore[no-untyped-def]
    """Issue 38 (low): `kill -9` left task rows RUNNING forever. When the chunk's worker
    stops reporting, its task row is failed (naming why) and a new task takes the chunk."""
    from annotation.tasks import process_chunk, requeue_stale_chunks

    llm, _ = servers
    run = start_run(project=bios, user=None, config=config_for(llm, chunk_size=6))
    chunk = run.chunks.get()
    row = DBTaskResult.objects.get(
        task_path=process_chunk.module_path, args_kwargs__args=[chunk.pk]
    )
    # the worker took the task and the chunk, then was killed
    DBTaskResult.objects.filter(pk=row.pk).update(status="RUNNING", started_at=timezone.now())
    assert claim_chunk(chunk.pk, worker="killed") is not None
    assert requeue_stale_chunks(run) == 0  # still reporting: nothing to do
    PipelineChunk.objects.filter(pk=chunk.pk).update(
        heartbeat_at=timezone.now() - timedelta(hours=1)
    )
    assert requeue_stale_chunks(run) == 1
    row.refresh_from_db()
    assert row.status == "FAILED" and "killed stopped reporting" in row.traceback
    fresh = DBTaskResult.objects.filter(
        task_path=process_chunk.module_path, args_kwargs__args=[chunk.pk], status="READY"
    )
    assert fresh.count() == 1
    assert not DBTaskResult.objects.filter(status="RUNNING").exists()


def test_a_search_results_javascript_link_is_never_stored(servers, bios: Project) -> None:  # type: ignore[no-untyped-def]
    """Issue 38 (low): a search result's link reaches Evidence.link through the one write
    path (ingest); one that is not http(s) is stored empty, kept in the document's
    metadata, and the finished run says so."""
    from annotation.ingest import REFUSED_LINKS

    llm, serper = servers
    answer = serper.answer

    def hostile(path: str, headers: dict[str, str], data: dict[str, Any]) -> tuple[int, Any]:
        status, body = answer(path, headers, data)
        if status == 200 and body.get("organic"):
            first = {**body["organic"][0], "link": "javascript:alert(document.cookie)"}
            body = {**body, "organic": [first, *body["organic"][1:]]}
        return status, body

    serper.answer = hostile
    run = start_run(project=bios, user=None, config=config_for(llm, chunk_size=6))
    drain()
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
    assert Evidence.objects.filter(claim__claim_list__system__pipeline_run=run).exists()
    assert not Evidence.objects.filter(link__istartswith="javascript:").exists()
    assert Evidence.objects.filter(link="").exists()
    assert run.errors and all(e.startswith("warning: result ") for e in run.errors)
    assert "must be an http(s) URL, not 'javascript:alert(document.cookie)'" in run.errors[0]
    noted = [d.metadata[REFUSED_LINKS] for d in bios.documents.all() if REFUSED_LINKS in d.metadata]
    assert noted and all(x["link"].startswith("javascript:") for n in noted for x in n)
