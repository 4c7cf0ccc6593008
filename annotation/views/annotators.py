"""The annotator page and the disagreement drill-down (issue 39), for the project's
researchers only (annotators are shown by pseudonym); their tables as CSV and JSON."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render

from ..models import Project
from ..reports.annotators import annotator_tables
from ..reports.disagreements import figure_table
from ..reports.tables import Table, table_csv, table_json
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
    return _download(project, tables[name], fmt)


def _download(project: Project, table: Table, fmt: str) -> HttpResponse:
    content = table_csv(table) if fmt == "csv" else json.dumps(table_json(table), indent=1)
    response = HttpResponse(content, content_type=FORMATS[fmt])
    response["Content-Disposition"] = (
        f'attachment; filename="project-{project.pk}-{table.name}.{fmt}"'
    )
    return response


@login_required
def disagreements(request: HtmxRequest, project_id: int) -> HttpResponse:
    """The units behind an agreement figure; ?format=csv or json downloads them."""
    project = project_for_researcher(request, project_id)
    try:
        table = figure_table(project, request.GET.dict())
    except ValueError as e:
        return HttpResponse(str(e), status=400, content_type="text/plain; charset=utf-8")
    fmt = request.GET.get("format", "")
    if fmt:
        if fmt not in FORMATS:
            raise Http404("Unknown export format.")
        return _download(project, table, fmt)
    query = request.GET.copy()
    query.pop("format", None)
    return render(
        request,
        "annotation/disagreements.html",
        {"project": project, "table": table, "query": query.urlencode()},
    )
