"""The annotator page (issue 39): each annotator's work and reliability, for the project's
researchers only (annotators are shown by pseudonym); its tables as CSV and JSON."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render

from ..reports.annotators import annotator_tables
from ..reports.tables import table_csv, table_json
from .common import HtmxRequest, project_for_researcher

FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json"}


@login_required
def annotators_page(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    return render(
        request,
        "annotation/annotators.html",
        {"project": project, "tables": annotator_tables(project)},
    )


@login_required
def annotators_table(request: HtmxRequest, project_id: int, name: str, fmt: str) -> HttpResponse:
    if fmt not in FORMATS:
        raise Http404("Unknown export format.")
    project = project_for_researcher(request, project_id)
    tables = {t.name: t for t in annotator_tables(project)}
    if name not in tables:
        raise Http404("No such table.")
    table = tables[name]
    content = table_csv(table) if fmt == "csv" else json.dumps(table_json(table), indent=1)
    response = HttpResponse(content, content_type=FORMATS[fmt])
    response["Content-Disposition"] = f'attachment; filename="project-{project.pk}-{name}.{fmt}"'
    return response
