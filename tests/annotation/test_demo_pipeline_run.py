"""`load_demo` includes a finished pipeline run replayed from recorded real outputs, and
`make demo`'s fake provider lets a newcomer run the pipeline without any key."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation import endpoints
from annotation.forms import PipelineRunForm
from annotation.management.commands.load_demo import DEMO_PROJECT
from annotation.models import Claim, Document, Evidence, PipelineRun, Project, Verdict
from pipeline.fakes import FakeOpenAI, FakeSerper


def test_the_demo_has_a_finished_run_without_any_key(db: None, client: Client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name in ("OPENAI_API_KEY", "SERPER_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    call_command("load_demo")
    project = Project.objects.get(name=DEMO_PROJECT)
    run = PipelineRun.objects.get(project=project)
    assert run.status == PipelineRun.FINISHED and run.total == 1
    assert run.counts["claims"] == 25 and run.counts["verdicts"] == 25
    claims = Claim.objects.filter(claim_list__system__name=run.extractor_name)
    assert claims.count() == 25
    assert Evidence.objects.filter(claim__in=claims).count() == run.counts["evidence"] > 200
    assert Verdict.objects.filter(system__name=run.verifier_name).count() == 25
    # the run's response is the document already imported for verification, not a copy
    assert (
        Document.objects.filter(project=project, source_model="gpt-4o", domain="ShareGPT").count()
        == 1
    )
    row = run.scores["rows"][0]
    assert (row["model"], row["domain"], row["responses"]) == ("gpt-4o", "ShareGPT", 1)
    assert 0 < row["veriscore"] <= 100
    call_command("load_demo")
    assert PipelineRun.objects.count() == 1
    client.force_login(project.memberships.get(role="researcher").user)
    page = client.get(reverse("pipeline_run", args=[project.pk, run.pk])).content.decode()
    assert "Finished" in page and "VERIScore" in page and "recorded real outputs" in page
    assert "Run the pipeline" in client.get(reverse("project", args=[project.pk])).content.decode()


@pytest.mark.slow  # the whole demo project through the pipeline: about 20 s
def test_a_newcomer_runs_the_pipeline_on_the_demos_fake_provider_without_any_key(  # type: ignore[no-untyped-def]
    transactional_db: None, client: Client, settings, tmp_path, monkeypatch
) -> None:
    """What `make demo` sets up (PIPELINE_DEMO_FAKE, the fake Serper), then the project
    page's form as offered, submitted unchanged, and the real worker command."""
    for name in ("OPENAI_BASE_URL", "PIPELINE_MODEL", "PIPELINE_ENDPOINTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-operators-key-never-for-the-fake")
    monkeypatch.setenv("SERPER_API_KEY", "none-for-the-fake")
    settings.PIPELINE_ENDPOINTS = []
    settings.PIPELINE_CACHE_PATH = str(tmp_path / "pipeline-cache.sqlite")
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    with FakeOpenAI() as llm, FakeSerper() as serper:
        settings.PIPELINE_DEMO_FAKE = f"127.0.0.1:{llm.port}"
        settings.PIPELINE_SERPER_URL = serper.url
        out = io.StringIO()
        call_command("load_demo", stdout=out)
        assert "'fake' (model 'deterministic-fake') is a deterministic fake" in out.getvalue()
        project = Project.objects.get(name=DEMO_PROJECT)
        client.force_login(project.memberships.get(role="researcher").user)
        page = client.get(reverse("project", args=[project.pk])).content.decode()
        assert "a deterministic fake server for the demo, not a model" in page
        # the fake is offered first, with its one model: the form as it comes runs on it
        data = {}  # what the browser sends: each field's initial value, else its first choice
        for name, field in PipelineRunForm().fields.items():
            value = field.initial or next(iter(getattr(field, "choices", [])), (None,))[0]
            if value:
                data[name] = value
        assert (data["endpoint"], data["model"]) == ("fake", "deterministic-fake")
        assert endpoints.get("fake").api_key() is None  # the operator's key stays home
        response = client.post(reverse("pipeline_runs", args=[project.pk]), data)
        run = PipelineRun.objects.exclude(config__model="veriscore-recorded").get()
        assert response.status_code == 302 and response.url.endswith(f"/runs/{run.pk}/")
        call_command(
            "db_worker", "--batch", "--no-startup-delay", "--no-reload", "--interval=0", verbosity=0
        )
        run.refresh_from_db()
        assert run.status == PipelineRun.FINISHED, run.errors
        assert run.done == run.total == project.documents.count()
        assert run.error_count == 0 and run.counts["llm_calls"] == len(llm.requests) > 0
        assert run.counts["searches"] == len(serper.requests) > 0
        assert run.extractor_name == f"pipeline:veriscore:deterministic-fake:run{run.pk}"
        assert Claim.objects.filter(claim_list__system__name=run.extractor_name).count() > 100
        assert Verdict.objects.filter(system__name=run.verifier_name).count() > 100
        shown = client.get(reverse("pipeline_run", args=[project.pk, run.pk])).content.decode()
        assert "Finished" in shown and "deterministic-fake" in shown and "VERIScore" in shown
