"""`load_demo` includes a finished pipeline run replayed from recorded real outputs."""

from __future__ import annotations

import time

from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.management.commands.load_demo import DEMO_PROJECT
from annotation.models import Claim, Document, Evidence, PipelineRun, Project, Verdict


def test_the_demo_has_a_finished_run_without_any_key(db: None, client: Client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name in ("OPENAI_API_KEY", "SERPER_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    start = time.monotonic()
    call_command("load_demo")
    assert time.monotonic() - start < 10
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
