"""Pipeline runs: start one on a project's documents, watch it (htmx polling), cancel
it, retry its failed chunks."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from ..forms import PipelineRunForm
from ..models import PipelineChunk, PipelineRun
from ..operations import NoDocuments, start_pipeline_run
from ..reports.pipeline_scores import stored_scores
from ..tasks import cancel_run, requeue_stale_chunks, retry_run
from .common import HtmxRequest, project_for_researcher

# htmx stops polling when a response has this status (and still swaps it in).
STOP_POLLING = 286


@login_required
def pipeline_runs(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    form = PipelineRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            run = start_pipeline_run(project=project, user=request.user, data=form.cleaned_data)
        except NoDocuments as e:
            messages.error(request, str(e))
        else:
            return redirect("pipeline_run", project_id=project.pk, run_id=run.pk)
    return render(
        request,
        "annotation/pipeline_runs.html",
        {
            "project": project,
            "form": form,
            "runs": project.pipeline_runs.all(),
            "current": PipelineRun.current(project),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def pipeline_run(request: HtmxRequest, project_id: int, run_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    run = get_object_or_404(PipelineRun, pk=run_id, project=project)
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "cancel":
            if not cancel_run(run):
                messages.error(request, "The run is already over.")
        elif action == "retry":
            if not retry_run(run):
                messages.error(request, "Only a failed or cancelled run can be retried.")
        else:
            messages.error(request, "Unknown action.")
        if not request.htmx:
            return redirect("pipeline_run", project_id=project.pk, run_id=run.pk)
        run.refresh_from_db()
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
            "failed_chunks": run.chunks.filter(status=PipelineChunk.FAILED),
            "current": PipelineRun.current(project),
            "scores": stored_scores(run.scores),
        },
    )
    if request.htmx and run.is_over and request.method == "GET":
        response.status_code = STOP_POLLING
    return response
