"""Platform runs through the Batch API, and VeriFastScore runs, against the fakes."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation import tasks
from annotation.models import ClaimList, PipelineChunk, PipelineRun, Project, System, Verdict
from annotation.tasks import start_run
from pipeline.fakes import FakeOpenAI

from .test_pipeline_runs import bios, config_for, run_over, servers, work_until  # noqa: F401


@pytest.mark.slow
def test_a_chunk_waiting_on_a_batch_is_waiting_not_stalled(  # type: ignore[no-untyped-def]
    servers,  # noqa: F811
    bios: Project,  # noqa: F811
    settings,
) -> None:
    # The provider holds the batch for 8 s, twice the progress deadline: the worker's polls
    # are its progress, so the chunk is neither taken over nor failed, and the run ends
    # with VeriFastScore's claims and verdicts in the project.
    settings.PIPELINE_CHUNK_TIMEOUT = 4
    settings.PIPELINE_SWEEP_SECONDS = 0.2
    settings.PIPELINE_CHUNK_ATTEMPTS = 1
    with FakeOpenAI(batch_delay=8.0) as llm:
        config = config_for(
            llm, extractor="verifastscore", batch=True, batch_poll=0.2, chunk_size=6
        )
        run = start_run(project=bios, user=None, config=config)
        work_until(run_over(run))
        assert len(llm.batches) == 1
        assert not [r for r in llm.requests if r["path"].endswith("/chat/completions")]
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
    assert run.chunks.get().attempts == 1
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
) -> None:
    # The worker polls the provider every 9 s and the batch takes 6 s: between two polls
    # nothing is answered for longer than the progress deadline (5 s). The chunk is
    # "waiting" meanwhile (the run page says so), its worker's heartbeat goes on, and the
    # sweep (every 0.2 s) never takes it over: one attempt, and the run finishes.
    import openai  # noqa: F401  (imported by the worker: seconds on a busy machine, no progress)

    settings.PIPELINE_CHUNK_TIMEOUT = 5
    settings.PIPELINE_SWEEP_SECONDS = 0.2
    settings.PIPELINE_CHUNK_ATTEMPTS = 1
    monkeypatch.setattr(tasks, "HEARTBEAT_SECONDS", 0.5)
    client.force_login(User.objects.get(username="alice"))
    with FakeOpenAI(batch_delay=6.0) as llm:
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

        def watch() -> bool:
            chunk = run.chunks.get()
            if chunk.status == PipelineChunk.WAITING and not seen:
                seen.append(client.get(f"/p/{bios.pk}/runs/{run.pk}/").content.decode())
            return PipelineRun.objects.get(pk=run.pk).is_over

        work_until(watch)
        assert len(llm.batches) == 1
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
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
