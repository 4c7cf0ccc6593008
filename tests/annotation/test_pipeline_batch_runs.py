"""Platform runs through the Batch API, and VeriFastScore runs, against the fakes."""

from __future__ import annotations

from annotation.models import ClaimList, PipelineRun, Project, System, Verdict
from annotation.tasks import start_run
from pipeline.fakes import FakeOpenAI

from .test_pipeline_runs import bios, config_for, run_over, servers, work_until  # noqa: F401


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
