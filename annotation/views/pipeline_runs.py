"""Pipeline runs: start one on a project's documents, watch it (htmx polling)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from ..forms import PipelineRunForm
from ..models import PipelineRun
from ..tasks import requeue_stale_chunks, run_config, start_run
from .common import HtmxRequest, project_for_researcher

# htmx stops polling when a response has this status (and still swaps it in).
STOP_POLLING = 286


@login_required
def pipeline_runs(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    form = PipelineRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if not project.documents.exists():
            messages.error(request, "The project has no documents to run the pipeline on.")
        else:
            run = start_run(
                project=project, user=request.user, config=run_config(**form.cleaned_data)
            )
            return redirect("pipeline_run", project_id=project.pk, run_id=run.pk)
    return render(
        request,
        "annotation/pipeline_runs.html",
        {
            "project": project,
            "form": form,
            "runs": project.pipeline_runs.all(),
        },
    )


@login_required
def pipeline_run(request: HtmxRequest, project_id: int, run_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    run = get_object_or_404(PipelineRun, pk=run_id, project=project)
    if not run.is_over and requeue_stale_chunks(run):
        run.refresh_from_db()
    template = "annotation/pipeline_run.html"
    if request.htmx:
        template += "#run-status"
    response = render(
        request,
        template,
        {
            "project": project,
            "run": run,
            "chunks": run.chunks.all() if not run.is_over else None,
            "scores": run.scores,
        },
    )
    if request.htmx and run.is_over:
        response.status_code = STOP_POLLING
    return response
