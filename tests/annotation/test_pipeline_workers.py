"""Several real `manage.py db_worker` processes on one run, against the configured
database (the suite's second pass runs it on PostgreSQL, where tasks are claimed with
SELECT ... FOR UPDATE SKIP LOCKED): each task is run by one worker, a worker killed in
the middle of its chunk leaves it running, the stale chunk is swept and another worker
finishes it; every document ends up ingested exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from annotation.models import ClaimList, PipelineChunk, PipelineRun, Project
from annotation.tasks import requeue_stale_chunks, start_run
from pipeline.fakes import FakeOpenAI, FakeSerper

from . import test_pipeline_runs
from .test_pipeline_runs import OPENAI_KEY, SERPER_KEY, config_for

pytestmark = pytest.mark.slow

bios = test_pipeline_runs.bios  # the fixture: six FActScore biographies

REPO = Path(__file__).resolve().parents[2]
WORKERS = 3
DEADLINE = 300  # a guard against a hung test, not a timing assumption


class GatedOpenAI(FakeOpenAI):
    """Holds every answer until the test opens the gate, so each worker is caught
    in the middle of its chunk."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gate = threading.Event()

    def _respond(self, *args: Any) -> tuple[int, bytes, dict[str, str]]:
        self.gate.wait(DEADLINE)
        return super()._respond(*args)


def database_env() -> dict[str, str]:
    """The test database, for another process."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return {"SQLITE_PATH": str(db["NAME"])}
    auth = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        auth += ":" + quote(db["PASSWORD"], safe="")
    return {"DATABASE_URL": f"postgres://{auth}@{db['HOST']}:{db['PORT']}/{db['NAME']}"}


def wait_for(what: str, ready: Callable[[], bool], procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not ready():
        for p in procs:
            if p.poll() not in (None, -signal.SIGKILL):
                pytest.fail(f"a worker exited with {p.returncode} while waiting for {what}")
        if time.monotonic() > deadline:
            pytest.fail(f"not reached in {DEADLINE}s: {what}")
        time.sleep(0.1)


@pytest.fixture
def llm(settings, tmp_path: Path, monkeypatch) -> Iterator[GatedOpenAI]:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("SERPER_API_KEY", SERPER_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("PIPELINE_MODEL", raising=False)
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    with GatedOpenAI() as fake, FakeSerper() as serper:
        monkeypatch.setenv("PIPELINE_SERPER_URL", serper.url)
        monkeypatch.setenv("PIPELINE_CACHE_PATH", str(tmp_path / "pipeline-cache.sqlite"))
        # the operator's endpoint "fake", for the worker processes as for this one
        monkeypatch.setenv(
            "PIPELINE_ENDPOINTS", json.dumps([{"name": "fake", "base_url": fake.base_url}])
        )
        yield fake
        fake.gate.set()


@pytest.fixture
def workers(
    llm: GatedOpenAI, bios: Project, tmp_path: Path
) -> Iterator[list[subprocess.Popen[bytes]]]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
    env.update(database_env(), TASKS_BACKEND="django_tasks_db.DatabaseBackend", LOG_LEVEL="ERROR")
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "db_worker",
                "--no-startup-delay",
                "--no-reload",
                "--interval",
                "0.1",
                "--worker-id",
                f"worker-{n}",
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(tmp_path / f"worker-{n}.log").open("wb"),
        )
        for n in range(WORKERS)
    ]
    yield procs
    llm.gate.set()
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def test_worker_processes_share_a_run_and_a_killed_workers_chunk_is_finished_by_another(
    llm: GatedOpenAI, bios: Project, workers: list[subprocess.Popen[bytes]]
) -> None:
    run = start_run(project=bios, user=None, config=config_for(llm, chunk_size=1, timeout=60.0))
    assert run.chunks.count() == 6

    def running() -> list[PipelineChunk]:
        return list(run.chunks.filter(status=PipelineChunk.RUNNING))

    # Every worker has claimed a chunk and waits for the LLM: three different chunks.
    wait_for(
        "each worker holding a chunk",
        lambda: len({c.worker for c in running()}) == WORKERS,
        workers,
    )
    victim = workers[0]
    held = [c for c in running() if f":{victim.pid}:" in c.worker]
    assert len(held) == 1
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    llm.gate.set()

    dead = held[0]
    others = run.chunks.exclude(pk=dead.pk)
    wait_for(
        "the other chunks done",
        lambda: others.filter(status=PipelineChunk.DONE).count() == 5,
        workers,
    )
    dead.refresh_from_db()
    assert (dead.status, dead.attempts) == (PipelineChunk.RUNNING, 1)  # nobody took it early
    # Its worker stopped reporting long ago: the sweep (as the run page does) requeues it.
    PipelineChunk.objects.filter(pk=dead.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.PIPELINE_CHUNK_TIMEOUT + 1)
    )
    assert requeue_stale_chunks(run) == 1
    wait_for(
        "the run finished",
        lambda: PipelineRun.objects.get(pk=run.pk).status != PipelineRun.RUNNING,
        workers,
    )

    run.refresh_from_db()
    dead.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
    assert run.done == run.total == 6
    assert (dead.status, dead.attempts) == (PipelineChunk.DONE, 2)
    assert f":{victim.pid}:" not in dead.worker
    assert all(c.attempts == 1 and c.status == PipelineChunk.DONE for c in others)
    # each task ran on one worker only; the killed worker's task stays "running" forever
    tasks = list(DBTaskResult.objects.filter(task_path__endswith=".process_chunk"))
    assert len(tasks) == 7 and all(len(t.worker_ids) == 1 for t in tasks)
    assert len({t.worker_ids[0] for t in tasks}) == WORKERS
    # every document ingested exactly once
    extracted = ClaimList.objects.filter(system__pipeline_run=run, system__name=run.extractor_name)
    assert extracted.count() == 6
    assert len(set(extracted.values_list("document_id", flat=True))) == 6
    assert run.counts["responses"] == 6
