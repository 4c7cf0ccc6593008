"""The release page: a project published as a dataset (researchers only). The form is
checked at once; the release is built by the task worker (release/jobs.py) while its
page shows the progress, then offers the zip."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render

from .. import release
from ..models import ReleaseJob
from ..release import jobs
from .common import HtmxRequest, project_for_researcher

RECENT = 10  # builds listed on the page


@login_required
def project_release(request: HtmxRequest, project_id: int) -> HttpResponseBase:
    """The licence, the card's header and its free-text parts (filled with the project's
    defaults, to edit); a valid form enqueues the build and goes to its progress page
    (the same build asked for again goes to the first one's)."""
    project = project_for_researcher(request, project_id)
    form = release.ReleaseForm(request.POST if request.method == "POST" else None, project=project)
    error = ""
    if request.method == "POST" and form.is_valid():
        try:
            job, _ = jobs.start_release(project=project, user=request.user, options=form.options())
        except release.ReleaseRefused as e:
            error = str(e)
        else:
            return redirect("release_job", project_id=project.pk, job_id=job.pk)
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "annotation/release.html",
        {
            "project": project,
            "form": form,
            "error": error,
            "tables": release.TABLES,
            "builds": project.release_jobs.all()[:RECENT],
        },
        status=status,
    )


@login_required
def release_job(request: HtmxRequest, project_id: int, job_id: int) -> HttpResponse:
    """A release's build: its progress (polled by htmx until it is over), then the zip's
    link or the error."""
    project = project_for_researcher(request, project_id)
    job = jobs.settle(get_object_or_404(ReleaseJob, pk=job_id, project=project))
    template = "annotation/release_job.html" + ("#job-status" if request.htmx else "")
    context = {
        "project": project,
        "job": job,
        "progress": jobs.progress_text(job),
        "total": len(jobs.TABLE_NAMES),
    }
    response = render(request, template, context)
    if request.htmx and job.is_over:
        response.status_code = 286  # htmx stops polling
    return response


@login_required
def release_download(request: HtmxRequest, project_id: int, job_id: int) -> FileResponse:
    project = project_for_researcher(request, project_id)
    job = get_object_or_404(ReleaseJob, pk=job_id, project=project, status=ReleaseJob.FINISHED)
    try:
        handle = open(job.path, "rb")
    except OSError:
        raise Http404("The zip was removed from the server: build the release again.") from None
    return FileResponse(handle, as_attachment=True, filename=jobs.zip_name(job))
