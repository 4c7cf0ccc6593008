from __future__ import annotations

from django.contrib.auth.models import User

from annotation.models import PipelineChunk, PipelineRun, Project
from annotation.tasks import replay_run

from .api_helpers import token_client


def test_a_researcher_starts_a_run_and_follows_it(
    alpha: Project, users: dict[str, User], monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-should-not-leak")
    client = token_client(users["alice"])
    response = client.post(
        f"/api/projects/{alpha.pk}/pipeline-runs/",
        {"model": "gpt-4o-mini", "label_mode": "ternary", "chunk_size": 3},
        format="json",
    )
    assert response.status_code == 201, response.content
    run = response.json()
    assert run["status"] == "queued" and run["total"] == alpha.documents.count() == 4
    assert run["config"]["label_mode"] == "ternary" and run["done"] == 0
    assert PipelineChunk.objects.filter(run_id=run["id"]).count() == 2  # 4 documents, 3 per chunk
    detail = client.get(f"/api/projects/{alpha.pk}/pipeline-runs/{run['id']}/")
    assert detail.status_code == 200 and detail.json()["scores"] is None
    listed = client.get(f"/api/projects/{alpha.pk}/pipeline-runs/").json()
    assert [r["id"] for r in listed["results"]] == [run["id"]]
    for body in (
        response.content,
        detail.content,
        listed and client.get(f"/api/projects/{alpha.pk}/pipeline-runs/").content,
    ):
        assert b"sk-secret" not in body


def test_bad_settings_are_refused_with_the_field(alpha: Project, users: dict[str, User]) -> None:
    client = token_client(users["alice"])
    response = client.post(
        f"/api/projects/{alpha.pk}/pipeline-runs/",
        {"model": "m", "extractor": "magic"},
        format="json",
    )
    assert response.status_code == 400 and response.json()["field"] == "extractor"
    for field in ("base_url", "api_key"):  # a run names an endpoint, never a URL or a key
        response = client.post(
            f"/api/projects/{alpha.pk}/pipeline-runs/",
            {"model": "m", field: "http://127.0.0.1:9/v1"},
            format="json",
        )
        assert response.status_code == 400 and response.json()["field"] == field
    response = client.post(
        f"/api/projects/{alpha.pk}/pipeline-runs/",
        {"model": "m", "endpoint": "http://127.0.0.1:9/v1"},
        format="json",
    )
    assert response.status_code == 400 and response.json()["field"] == "endpoint"
    assert not PipelineRun.objects.exists()


def test_a_finished_run_has_its_scores(alpha: Project, users: dict[str, User]) -> None:
    from django.conf import settings

    from pipeline.formats import load_results

    results = load_results(settings.BASE_DIR / "fixtures" / "pipeline" / "data_sample.jsonl")
    run = replay_run(
        project=alpha, user=users["alice"], results=results, config={"model": "gpt-4o"}
    )
    data = (
        token_client(users["alice"]).get(f"/api/projects/{alpha.pk}/pipeline-runs/{run.pk}/").json()
    )
    assert data["status"] == "finished" and data["done"] == data["total"] == 1
    assert data["counts"]["claims"] == 25 and data["scores"]


def test_a_researcher_cancels_and_retries_a_run(alpha: Project, users: dict[str, User]) -> None:
    client = token_client(users["alice"])
    runs = f"/api/projects/{alpha.pk}/pipeline-runs"
    run = client.post(f"{runs}/", {"model": "m"}, format="json").json()
    base = f"{runs}/{run['id']}"
    assert client.post(f"{base}/retry/").status_code == 409  # a queued run has nothing to retry
    cancelled = client.post(f"{base}/cancel/")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = client.post(f"{base}/cancel/")
    assert again.status_code == 409 and again.json()["code"] == "run_over"
    retried = client.post(f"{base}/retry/")
    assert retried.status_code == 200 and retried.json()["status"] == "queued"
    chunks = PipelineChunk.objects.filter(run_id=run["id"])
    assert set(chunks.values_list("status", flat=True)) == {"queued"}
    assert retried.json()["current"] is False


def test_only_the_projects_researchers_cancel_or_retry(
    alpha: Project, users: dict[str, User]
) -> None:
    runs = f"/api/projects/{alpha.pk}/pipeline-runs"
    alice = token_client(users["alice"])
    run = alice.post(f"{runs}/", {"model": "m"}, format="json").json()
    for who in ("bob", "carol", "dave", "erin"):
        client = token_client(users[who])
        for action in ("cancel", "retry"):
            response = client.post(f"{runs}/{run['id']}/{action}/")
            assert response.status_code in (403, 404), (who, action, response.status_code)
    assert PipelineRun.objects.get(pk=run["id"]).status == "queued"
    assert alice.post(f"{runs}/999999/cancel/").status_code == 404
