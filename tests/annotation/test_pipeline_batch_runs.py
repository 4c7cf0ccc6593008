"""Platform runs through the Batch API, and VeriFastScore runs, against the fakes."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from annotation import tasks
from annotation.models import ClaimList, PipelineChunk, PipelineRun, Project, System, Verdict
from annotation.tasks import start_run
from pipeline.fakes import FakeOpenAI
from pipeline.ratelimits import Clock
from pipeline.run import ClientConfig, Clients

from .test_pipeline_runs import bios, config_for, run_over, servers, work_until  # noqa: F401


class SteppedClock(Clock):
    """The test's time: the provider's batches, the worker's polls (its LLM client's clock)
    and the chunks' heartbeats and staleness (tasks.clock) follow it, and only the test
    moves it, a second at a time. A busy machine slows these tests; it cannot make a
    chunk look stalled, nor a batch finish early."""

    def __init__(self) -> None:
        super().__init__()
        self.t = 0.0
        self.origin_at = timezone.now()

    def now(self) -> float:
        return self.t

    def at(self) -> datetime:
        return self.origin_at + timedelta(seconds=self.t)

    async def sleep(self, seconds: float) -> None:
        until = self.t + seconds
        while self.t < until:
            await asyncio.sleep(0.01)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[SteppedClock]:
    """The stepped clock for the workers' staleness and their LLM clients (the outside
    world's time); openai imported before the workers start, as they import it. At the
    end it runs out, so a worker a failed test left waiting on it ends."""
    import openai  # noqa: F401

    clock = SteppedClock()
    monkeypatch.setattr(tasks, "clock", clock.at)
    build = tasks.build_clients

    def build_clients(config: ClientConfig) -> Clients:
        clients = build(config)
        clients.llm.clock = clock  # its batches are polled every batch_poll s of the clock
        return clients

    monkeypatch.setattr(tasks, "build_clients", build_clients)
    yield clock
    clock.t = math.inf


def tick(clock: SteppedClock, run: PipelineRun) -> bool:
    """Move the clock a second if the run's chunk waits on its batch and its worker has
    reported at the current time (its heartbeat); whether the run is over."""
    chunk = run.chunks.get()
    if chunk.status == PipelineChunk.WAITING and chunk.heartbeat_at >= clock.at():
        clock.t += 1.0
    return PipelineRun.objects.get(pk=run.pk).is_over


@pytest.mark.slow
def test_a_chunk_waiting_on_a_batch_is_waiting_not_stalled(  # type: ignore[no-untyped-def]
    servers,  # noqa: F811
    bios: Project,  # noqa: F811
    settings,
    monkeypatch,
    clock: SteppedClock,
) -> None:
    # The provider holds the batch for 8 s of the clock, twice the progress deadline; the
    # clock moves only while the worker reports (its polls are its progress), so the chunk
    # is neither taken over nor failed (the sweep looks every 0.2 s), and the run ends
    # with VeriFastScore's claims and verdicts in the project.
    settings.PIPELINE_CHUNK_TIMEOUT = 4
    settings.PIPELINE_SWEEP_SECONDS = 0.2
    settings.PIPELINE_CHUNK_ATTEMPTS = 1
    monkeypatch.setattr(tasks, "HEARTBEAT_SECONDS", 0.2)
    with FakeOpenAI(batch_delay=8.0, clock=clock) as llm:
        config = config_for(
            llm, extractor="verifastscore", batch=True, batch_poll=0.2, chunk_size=6
        )
        run = start_run(project=bios, user=None, config=config)
        work_until(lambda: tick(clock, run))
        assert len(llm.batches) == 1
        assert not [r for r in llm.requests if r["path"].endswith("/chat/completions")]
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
    assert run.chunks.get().attempts == 1
    assert clock.t >= 2 * settings.PIPELINE_CHUNK_TIMEOUT  # the batch took that long
    extractor = System.objects.get(name=f"pipeline:verifastscore:gpt-4o-mini:run{run.pk}")
    assert ClaimList.objects.filter(system=extractor).count() == 6
    assert Verdict.objects.filter(system__name=run.verifier_name).count() == run.counts["claims"]


@pytest.mark.slow
def test_the_run_form_starts_a_batch_run_whose_chunk_waits_and_is_never_taken_over(  # type: ignore[no-untyped-def]
    servers,  # noqa: F811
    bios: Project,  # noqa: F811
    settings,
    client,
    monkeypatch,
    clock: SteppedClock,
) -> None:
    # The worker polls the provider every 9 s of the clock and the batch takes 6 s: between
    # two polls nothing is answered for longer than the progress deadline (5 s). The chunk
    # is "waiting" meanwhile (the run page says so), its worker's heartbeat goes on (the
    # clock moves only on it: without it the second poll never comes), and the sweep
    # (every 0.2 s) never takes it over: one attempt, and the run finishes.
    settings.PIPELINE_CHUNK_TIMEOUT = 5
    settings.PIPELINE_SWEEP_SECONDS = 0.2
    settings.PIPELINE_CHUNK_ATTEMPTS = 1
    monkeypatch.setattr(tasks, "HEARTBEAT_SECONDS", 0.2)
    client.force_login(User.objects.get(username="alice"))
    with FakeOpenAI(batch_delay=6.0, clock=clock) as llm:
        settings.PIPELINE_ENDPOINTS = [{"name": "fake", "base_url": llm.base_url}]
        page = client.get(f"/p/{bios.pk}/runs/")
        assert 'name="batch"' in page.content.decode()
        form = {
            "extractor": "verifastscore",
            "label_mode": "binary",
            "endpoint": "fake",
            "model": "gpt-4o-mini",
            "retriever": "serper",
            "chunk_size": "6",
            "batch": "on",
            "batch_poll": "9",
        }
        r = client.post(f"/p/{bios.pk}/runs/", form)
        assert r.status_code == 302, r.content.decode()[:2000]
        run = PipelineRun.objects.get(project=bios)
        assert run.config["batch"] is True and run.config["batch_poll"] == 9
        seen: list[str] = []
        polls: list[float] = []  # the clock's time of each poll (only this loop moves it)
        read = [0]  # the provider's requests looked at

        def watch() -> bool:
            chunk = run.chunks.get()
            if chunk.status == PipelineChunk.WAITING and not seen:
                seen.append(client.get(f"/p/{bios.pk}/runs/{run.pk}/").content.decode())
            requests = llm.requests[read[0] :]
            read[0] += len(requests)
            polls.extend(clock.t for r in requests if "/batches/" in r["path"])
            return tick(clock, run)

        work_until(watch)
        assert len(llm.batches) == 1
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
    assert len(polls) == 2 and polls[1] - polls[0] > settings.PIPELINE_CHUNK_TIMEOUT, polls
    assert seen, "the chunk was never seen waiting"
    assert "Waiting on the provider: 1 chunk in a batch" in seen[0]
    assert "0: waiting" in seen[0] and "Batch API" in seen[0]
    chunk = run.chunks.get()
    assert (chunk.status, chunk.attempts, chunk.error) == (PipelineChunk.DONE, 1, "")
    assert not run.errors
    done_page = client.get(f"/p/{bios.pk}/runs/{run.pk}/").content.decode()
    assert "Waiting on the provider" not in done_page


def test_a_run_without_the_batch_option_keeps_no_batch_settings(  # type: ignore[no-untyped-def]
    servers,  # noqa: F811
    bios: Project,  # noqa: F811
    client,
) -> None:
    llm, _ = servers
    client.force_login(User.objects.get(username="alice"))
    form = {
        "extractor": "veriscore",
        "label_mode": "binary",
        "endpoint": "fake",
        "model": "gpt-4o-mini",
        "retriever": "serper",
        "chunk_size": "3",
        "batch_poll": "30",  # ignored without the Batch API
    }
    assert client.post(f"/p/{bios.pk}/runs/", form).status_code == 302
    config = PipelineRun.objects.get(project=bios).config
    assert "batch" not in config and "batch_poll" not in config


def test_the_api_starts_a_batch_run(  # type: ignore[no-untyped-def]
    servers,  # noqa: F811
    bios: Project,  # noqa: F811
    client,
) -> None:
    client.force_login(User.objects.get(username="alice"))
    body = {"model": "gpt-4o-mini", "endpoint": "fake", "batch": True, "batch_poll": 30}
    r = client.post(
        f"/api/projects/{bios.pk}/pipeline-runs/", body, content_type="application/json"
    )
    assert r.status_code == 201, r.content
    assert (r.json()["config"]["batch"], r.json()["config"]["batch_poll"]) == (True, 30)
    r = client.post(
        f"/api/projects/{bios.pk}/pipeline-runs/",
        {**body, "batch_poll": 0},
        content_type="application/json",
    )
    assert r.status_code == 400 and r.json()["field"] == "batch_poll", r.content
