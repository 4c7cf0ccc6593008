"""Issue 43, defect 1: the run page, the report's Pipeline scores section and its CSV
score the same responses of a run with the run's mode and fixed K (one VERIScore)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation import reports
from annotation.ingest import import_file
from annotation.management.commands.load_demo import DEMO_PROJECT
from annotation.models import (
    ClaimList,
    Document,
    Item,
    Membership,
    PipelineRun,
    Project,
    System,
)
from annotation.tasks import run_config, start_run
from pipeline.fakes import FakeOpenAI, FakeSerper
from tests.conftest import peer_file


@pytest.fixture
def servers(settings, tmp_path: Path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai")
    monkeypatch.setenv("SERPER_API_KEY", "serper-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("PIPELINE_MODEL", raising=False)
    settings.PIPELINE_CACHE_PATH = str(tmp_path / "pipeline-cache.sqlite")
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    with FakeOpenAI() as llm, FakeSerper() as serper:
        settings.PIPELINE_SERPER_URL = serper.url
        settings.PIPELINE_ENDPOINTS = [{"name": "fake", "base_url": llm.base_url}]
        yield llm, serper


def run_on_chatgpt(fixed_k: float | None = None) -> tuple[Project, PipelineRun, User]:
    alice = User.objects.create_user("alice", password="pw-alice")
    project = Project.objects.create(name="chatgpt")
    project.add_member(alice, Membership.RESEARCHER)
    path = peer_file("factscore_labeled/ChatGPT.jsonl")
    import_file(project=project, text=path.read_bytes(), file=path.name)
    config = run_config(
        model="gpt-4o-mini",
        endpoint="fake",
        chunk_size=500,
        timeout=5.0,
        backoff=0.0,
        fixed_k=fixed_k,
    )
    run = start_run(project=project, user=alice, config=config)
    call_command(
        "db_worker", "--batch", "--no-startup-delay", "--no-reload", "--interval=0", verbosity=0
    )
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
    return project, run, alice


COLUMN = {"k": "K", "veriscore": "VERIScore"}  # the report's column of a run-page key


def detail(project: Project, run: PipelineRun) -> list[dict]:
    report = reports.build_report(project, bootstrap=0)
    slug = reports.verifiers.slugify
    name = f"veriscore-{slug(run.verifier_name)}-{slug(run.extractor_name)}-detail"
    return report.table(name).as_dicts()


@pytest.mark.slow
def test_the_report_scores_a_runs_responses_as_the_run_page_does(  # type: ignore[no-untyped-def]
    servers, transactional_db: None, client: Client
) -> None:
    """FActScore's ChatGPT file on the fake: 24 of its responses get no claim; the report
    left them out silently (159 responses, 64.68, vs the run page's 183, 56.2)."""
    project, run, alice = run_on_chatgpt()
    responses = run.scores["responses"]
    claimless = [r for r in responses if not r["abstained"] and r["claims"] == 0]
    assert claimless, "the ChatGPT file has responses without a claim"
    (page_row,) = run.scores["rows"]
    (report_row,) = detail(project, run)
    for key in ("responses", "abstained", "k", "veriscore", "precision", "recall"):
        assert report_row[COLUMN.get(key, key)] == pytest.approx(page_row[key]), key
    assert report_row["claimless"] == len(claimless)
    # the run page states them too
    client.force_login(alice)
    page = client.get(reverse("pipeline_run", args=[project.pk, run.pk])).content.decode()
    assert f"{len(claimless)} response(s) without a claim" in page
    assert "Without a claim" in page
    # the report's page and its CSV of the table: the same numbers, the same note
    report_page = client.get(reverse("report", args=[project.pk]))
    assert report_page.status_code == 200
    assert f"{len(claimless)} response(s) without a claim" in report_page.content.decode()
    slug = reports.verifiers.slugify
    name = f"veriscore-{slug(run.verifier_name)}-{slug(run.extractor_name)}-detail"
    body = client.get(reverse("report_table", args=[project.pk, name, "csv"])).content.decode()
    (row,) = list(csv.DictReader(io.StringIO(body)))
    assert int(row["responses"]) == page_row["responses"]
    assert int(row["claimless"]) == len(claimless)
    assert float(row["VERIScore"]) == pytest.approx(page_row["veriscore"], abs=0.01)


def test_a_runs_verifier_is_scored_with_the_runs_fixed_k_and_its_claimless_lists(
    verification: list[Item],
) -> None:
    """verifier-one's verdicts: Biography S = 2 of 2, ELI5 1 of 2. Made by a run with
    fixed K = 4, the report scores them with K = 4 (not the median 2), and a claimless
    list of the extractor is one of its responses (F1 0, its 0 claims in K), as in the run."""
    project = verification[0].project
    run = PipelineRun.objects.create(
        project=project, config={"fixed_k": 4.0}, status=PipelineRun.FINISHED
    )
    System.objects.filter(project=project, name="verifier-one").update(pipeline_run=run)
    extractor = System.objects.get(project=project, name="extractor-v")
    doc = Document.objects.create(
        project=project,
        external_id="empty",
        domain="Biography",
        response="Hm.",
        source_model="model-x",
    )
    ClaimList.objects.create(document=doc, system=extractor)
    report = reports.build_report(project, bootstrap=0)
    rows = {r["model"]: r for r in report.table("veriscore-verifier-one-extractor-v").as_dicts()}
    assert rows["K"]["Biography"] == 4
    # Biography: (F1(P 1, R 0.5) = 2/3 + 0) / 2; ELI5: P 0.5, R 0.25 -> 1/3
    assert rows["model-x"]["Biography"] == pytest.approx(100 / 3)
    assert rows["model-x"]["ELI5"] == pytest.approx(100 / 3)
    detail = {
        r["domain"]: r for r in report.table("veriscore-verifier-one-extractor-v-detail").as_dicts()
    }
    assert (detail["Biography"]["responses"], detail["Biography"]["claimless"]) == (2, 1)
    assert detail["ELI5"]["claimless"] == 0
    # verifier-two was imported (no run): the default mode, K the upper median (2, 0 -> 2)
    two = {r["model"]: r for r in report.table("veriscore-verifier-two-extractor-v").as_dicts()}
    assert two["K"]["Biography"] == 2
    note = report.table("veriscore-verifier-one-extractor-v-detail").note
    assert "1 response(s) without a claim" in note and "scored F1@K = 0" in note


def test_the_demos_report_has_the_rows_of_its_run_page(db: None) -> None:
    """The demo's run: its page had three rows, the report two with other values."""
    call_command("load_demo")
    project = Project.objects.get(name=DEMO_PROJECT)
    run = PipelineRun.objects.get(project=project)
    page = {(r["model"], r["domain"]): r for r in run.scores["rows"]}
    report = {(r["model"], r["domain"]): r for r in detail(project, run)}
    assert report.keys() == page.keys()
    for key, row in page.items():
        assert report[key]["responses"] == row["responses"]
        assert report[key]["VERIScore"] == pytest.approx(row["veriscore"])
