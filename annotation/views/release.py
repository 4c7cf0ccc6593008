"""The release page: a project published as a dataset (researchers only)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render

from .. import release
from .common import HtmxRequest, project_for_researcher


@login_required
def project_release(request: HtmxRequest, project_id: int) -> HttpResponseBase:
    """The licence, the card's header and its free-text parts (filled with the project's
    defaults, to edit); the release's zip is the answer to a valid form."""
    project = project_for_researcher(request, project_id)
    form = release.ReleaseForm(request.POST if request.method == "POST" else None, project=project)
    error = ""
    if request.method == "POST" and form.is_valid():
        try:
            handle, name = release.release_zip(project, form.options())
        except release.ReleaseRefused as e:
            error = str(e)
        else:
            return FileResponse(handle, as_attachment=True, filename=name)
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "annotation/release.html",
        {"project": project, "form": form, "error": error, "tables": release.TABLES},
        status=status,
    )
