"""The "Run the pipeline" form and the run page with its polled status fragment."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from annotation.models import PipelineChunk, PipelineRun, Project, System
from annotation.tasks import replay_run, run_config
from pipeline.formats import load_results
from pipeline.types import UNPARSED, ResponseResult, Verdict
from tests.annotation.test_pipeline_runs import REPO
from tests.conftest import login

SECRET = "sk-test-SECRET-never-in-a-page"


@pytest.fixture(autouse=True)
def keys(monkeypatch, settings) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("SERPER_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


@pytest.fixture
def finished(alpha: Project) -> PipelineRun:
    results = load_results(REPO / "fixtures/pipeline/data_sample.jsonl")
    return replay_run(project=alpha, results=results, config=run_config(model="recorded"))


@pytest.fixture
def running(alpha: Project) -> PipelineRun:
    run = PipelineRun.objects.create(
        project=alpha, config=run_config(), total=4, status=PipelineRun.RUNNING
    )
    PipelineChunk.objects.create(
        run=run,
        index=0,
        document_ids=[],
        status="running",
        worker="w",
        done=1,
        heartbeat_at=timezone.now(),
    )
    return run


def run_url(run: PipelineRun) -> str:
    return reverse("pipeline_run", args=[run.project_id, run.pk])


def test_the_project_page_offers_the_form(client: Client, alpha: Project, users) -> None:  # type: ignore[no-untyped-def]
    page = login(client, users["alice"]).get(reverse("project", args=[alpha.pk])).content.decode()
    assert "Run the pipeline" in page
    for name in (
        "extractor",
        "label_mode",
        "model",
        "endpoint",
        "retriever",
        "offline",
        "chunk_size",
    ):
        assert f'name="{name}"' in page
    assert 'value="default"' in page and "127.0.0.1:9" not in page  # names, never URLs
    assert SECRET not in page


def test_starting_a_run_enqueues_one_task_per_chunk(  # type: ignore[no-untyped-def]
    client: Client, alpha: Project, users, django_capture_on_commit_callbacks
) -> None:
    login(client, users["alice"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("pipeline_runs", args=[alpha.pk]),
            {
                "extractor": "atomic",
                "label_mode": "ternary",
                "model": "llama3.1:8b",
                "endpoint": "default",
                "retriever": "serper",
                "chunk_size": "3",
            },
        )
    run = PipelineRun.objects.get(project=alpha)
    assert response.status_code == 302 and response["Location"] == run_url(run)
    assert run.created_by == users["alice"] and run.status == PipelineRun.QUEUED
    assert (
        run.config["extractor"] == "atomic"
        and run.config["endpoint"] == "default"
        and "base_url" not in run.config
    )
    assert run.total == 4 and [len(c.document_ids) for c in run.chunks.all()] == [3, 1]
    assert DBTaskResult.objects.filter(task_path__endswith=".process_chunk").count() == 2
    assert SECRET not in str(run.config)
    page = client.get(run_url(run)).content.decode()
    assert "Queued" in page and "db_worker" in page and 'hx-trigger="every 2s"' in page
    assert SECRET not in page


def test_a_bad_form_starts_nothing(client: Client, alpha: Project, users) -> None:  # type: ignore[no-untyped-def]
    login(client, users["alice"])
    response = client.post(
        reverse("pipeline_runs", args=[alpha.pk]),
        {
            "extractor": "veriscore",
            "label_mode": "binary",
            "model": "m",
            "endpoint": "http://attacker.example/v1",
            "retriever": "serper",
            "chunk_size": "0",
        },
    )
    assert response.status_code == 200
    assert "errorlist" in response.content.decode()
    assert not PipelineRun.objects.exists()


def test_the_finished_run_shows_counts_and_scores_and_stops_polling(  # type: ignore[no-untyped-def]
    client: Client, finished: PipelineRun, users
) -> None:
    login(client, users["alice"])
    page = client.get(run_url(finished)).content.decode()
    assert finished.status == PipelineRun.FINISHED
    assert "VERIScore" in page and "ShareGPT" in page and "gpt-4o" in page
    assert "pipeline:veriscore:recorded" in page
    assert "hx-trigger" not in page
    fragment = client.get(run_url(finished), headers={"HX-Request": "true"})
    assert fragment.status_code == 286  # htmx stops polling
    html = fragment.content.decode()
    assert html.lstrip().startswith('<div id="run-status"') and "<html" not in html
    assert "VERIScore" in html


def test_the_fragment_of_a_running_run_keeps_polling(
    client: Client, running: PipelineRun, users
) -> None:  # type: ignore[no-untyped-def]
    login(client, users["alice"])
    fragment = client.get(run_url(running), headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    html = fragment.content.decode()
    assert 'hx-trigger="every 2s"' in html and "1 / 4 responses" in html


def test_polling_requeues_a_chunk_whose_worker_stopped_reporting(  # type: ignore[no-untyped-def]
    client: Client, running: PipelineRun, users, settings
) -> None:
    old = timezone.now() - timedelta(seconds=settings.PIPELINE_CHUNK_TIMEOUT + 5)
    running.chunks.update(heartbeat_at=old)
    login(client, users["alice"]).get(run_url(running), headers={"HX-Request": "true"})
    assert running.chunks.get().status == PipelineChunk.QUEUED
    assert DBTaskResult.objects.count() == 1


@pytest.mark.parametrize("who", ["bob", "carol", "dave", "erin"])
def test_only_the_projects_researchers_see_runs(  # type: ignore[no-untyped-def]
    client: Client, finished: PipelineRun, users, beta: Project, who: str
) -> None:
    login(client, users[who])
    assert client.get(run_url(finished)).status_code == 404
    assert client.get(run_url(finished), headers={"HX-Request": "true"}).status_code == 404
    assert client.get(reverse("pipeline_runs", args=[finished.project_id])).status_code == 404
    response = client.post(
        reverse("pipeline_runs", args=[finished.project_id]),
        {
            "extractor": "veriscore",
            "label_mode": "binary",
            "model": "m",
            "retriever": "serper",
            "chunk_size": "5",
        },
    )
    assert response.status_code == 404
    assert PipelineRun.objects.count() == 1


def test_anonymous_visitors_are_sent_to_log_in(client: Client, finished: PipelineRun) -> None:
    for url in (run_url(finished), reverse("pipeline_runs", args=[finished.project_id])):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_a_run_of_another_project_is_not_found(
    client: Client, finished: PipelineRun, users, beta: Project
) -> None:  # type: ignore[no-untyped-def]
    login(client, users["erin"])
    url = reverse("pipeline_run", args=[beta.pk, finished.pk])
    assert client.get(url).status_code == 404


def test_the_runs_page_lists_runs(client: Client, finished: PipelineRun, users) -> None:  # type: ignore[no-untyped-def]
    page = (
        login(client, users["alice"])
        .get(reverse("pipeline_runs", args=[finished.project_id]))
        .content.decode()
    )
    assert f"#{finished.pk}" in page and "Finished" in page
    assert User.objects.filter(username="alice").exists()


def test_a_researcher_cancels_a_run_and_retries_it_from_the_run_page(  # type: ignore[no-untyped-def]
    client: Client, running: PipelineRun, users, django_capture_on_commit_callbacks
) -> None:
    login(client, users["alice"])
    page = client.get(run_url(running)).content.decode()
    assert 'value="cancel"' in page and 'value="retry"' not in page
    response = client.post(run_url(running), {"action": "cancel"})
    assert response.status_code == 302 and response["Location"] == run_url(running)
    running.refresh_from_db()
    assert running.status == PipelineRun.CANCELLED
    assert running.chunks.get().status == PipelineChunk.CANCELLED
    fragment = client.get(run_url(running), headers={"HX-Request": "true"})
    html = fragment.content.decode()
    assert fragment.status_code == 286 and "Cancelled" in html and 'value="retry"' in html

    with django_capture_on_commit_callbacks(execute=True):
        retried = client.post(run_url(running), {"action": "retry"}, headers={"HX-Request": "true"})
    assert retried.status_code == 200 and 'hx-trigger="every 2s"' in retried.content.decode()
    running.refresh_from_db()
    assert running.status == PipelineRun.QUEUED
    assert running.chunks.get().status == PipelineChunk.QUEUED
    assert DBTaskResult.objects.filter(task_path__endswith=".process_chunk").count() == 1


def test_a_finished_run_is_current_and_cannot_be_cancelled_or_retried(  # type: ignore[no-untyped-def]
    client: Client, finished: PipelineRun, users
) -> None:
    login(client, users["alice"])
    page = client.get(run_url(finished)).content.decode()
    assert "current run" in page and 'value="cancel"' not in page and 'value="retry"' not in page
    for action in ("cancel", "retry"):
        client.post(run_url(finished), {"action": action})
    finished.refresh_from_db()
    assert finished.status == PipelineRun.FINISHED
    project_page = client.get(reverse("project", args=[finished.project_id])).content.decode()
    assert "<strong>current</strong>" in project_page
    assert f"pipeline:veriscore:recorded:run{finished.pk}" in project_page


@pytest.mark.parametrize("who", ["bob", "carol", "dave", "erin"])
def test_only_the_projects_researchers_cancel_or_retry(  # type: ignore[no-untyped-def]
    client: Client, running: PipelineRun, users, beta: Project, who: str
) -> None:
    login(client, users[who])
    for action in ("cancel", "retry"):
        assert client.post(run_url(running), {"action": action}).status_code == 404
    running.refresh_from_db()
    assert running.status == PipelineRun.RUNNING


def _unparsed(result: ResponseResult, id: str, model: str) -> ResponseResult:
    other = copy.deepcopy(result)
    other.id, other.model = id, model
    for c in other.claims:
        c.verdict = Verdict(UNPARSED, "Having read the results, the claim is supported.", False)
    return other


def test_a_row_with_nothing_measured_shows_a_dash_not_a_zero(  # type: ignore[no-untyped-def]
    client: Client, alpha: Project, users
) -> None:
    [sample] = load_results(REPO / "fixtures/pipeline/data_sample.jsonl")
    results = [sample, _unparsed(sample, "other", "model-b")]
    run = replay_run(project=alpha, results=results, config=run_config(model="recorded"))
    assert run.status == PipelineRun.FINISHED
    row = next(r for r in run.scores["rows"] if r["model"] == "model-b")  # type: ignore[index]
    assert row["veriscore"] is None and row["precision"] is None and row["responses"] == 0
    page = login(client, users["alice"]).get(run_url(run)).content.decode()
    cells = page.split("model-b", 1)[1].split("</tr>", 1)[0]
    assert cells.count("—") == 4 and "0.0" not in cells
    assert "1 incomplete response(s) (failed calls or unparsed verdicts)" in page


def test_a_run_without_one_parsed_verdict_fails_and_writes_nothing(alpha: Project) -> None:
    [sample] = load_results(REPO / "fixtures/pipeline/data_sample.jsonl")
    run = replay_run(
        project=alpha,
        results=[_unparsed(sample, "x", "model-b")],
        config=run_config(model="recorded"),
    )
    assert run.status == PipelineRun.FAILED and run.scores is None
    assert "none of the 25 verifier answer(s) could be parsed" in run.errors[0]
    assert not System.objects.filter(project=alpha, pipeline_run=run).exists()
