"""Report pages and exports, for the project's researchers only (404 for anyone else)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.csp import csp_override

from .. import exports, reports
from ..models import Project
from ..reports.html import standalone_html
from ..reports.options import ReportOptions, ReportOptionsForm
from .common import HtmxRequest, project_for_researcher

TABLE_FORMATS = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "tex": "application/x-tex; charset=utf-8",
}


def _options(request: HtmxRequest, project: Project) -> tuple[ReportOptionsForm, ReportOptions]:
    form = ReportOptionsForm(request.GET or None, project=project)
    if form.is_bound and not form.is_valid():
        raise Http404("Invalid report filter.")
    return form, form.options()


def _report(
    request: HtmxRequest, project_id: int
) -> tuple[Project, ReportOptionsForm, reports.Report]:
    project = project_for_researcher(request, project_id)
    form, options = _options(request, project)
    return project, form, reports.cached_report(project, options)


def _download(content: str, *, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
@csp_override(settings.CSP_INLINE_STYLES)  # type: ignore[arg-type]  # the <style> in report*.html
def report_page(request: HtmxRequest, project_id: int) -> HttpResponse:
    """The report. A browser opening it while the report is not in the cache gets the page
    at once with a progress note, and the page asks for the report's body (htmx; this view
    again), built then; other clients (scripts, curl) get the whole page as before."""
    project = project_for_researcher(request, project_id)
    form, options = _options(request, project)
    context = {"project": project, "form": form, "query": request.GET.urlencode()}
    if request.htmx:
        report = reports.cached_report(project, options)
        return render(
            request,
            "annotation/_report_body.html",
            {**context, "report": report, "standalone": False},
        )
    navigation = request.headers.get("Sec-Fetch-Mode") == "navigate"
    if navigation and not reports.is_cached(project, options):
        return render(request, "annotation/report.html", {**context, "pending": True})
    report = reports.cached_report(project, options)
    return render(
        request, "annotation/report.html", {**context, "report": report, "standalone": False}
    )


@login_required
@csp_override(settings.CSP_INLINE_STYLES)  # type: ignore[arg-type]  # the <style> in report*.html
def report_html(request: HtmxRequest, project_id: int) -> HttpResponse:
    """The whole report in one file: CSS and SVG inline, no links back to the site."""
    project, _form, report = _report(request, project_id)
    return _download(
        standalone_html(project, report, request),
        content_type="text/html; charset=utf-8",
        filename=f"project-{project.pk}-report.html",
    )


@login_required
def report_json(request: HtmxRequest, project_id: int) -> HttpResponse:
    project, _form, report = _report(request, project_id)
    return _download(
        reports.report_json(report),
        content_type="application/json",
        filename=f"project-{project.pk}-report.json",
    )


@login_required
def report_table(request: HtmxRequest, project_id: int, name: str, fmt: str) -> HttpResponse:
    if fmt not in TABLE_FORMATS:
        raise Http404("Unknown export format.")
    project = project_for_researcher(request, project_id)
    _form, options = _options(request, project)
    try:  # from the cache: the rendered table, or only this table unpickled
        content = reports.cached_table_text(project, name, fmt, options)
    except KeyError:
        raise Http404("No such table in this report.") from None
    return _download(
        content, content_type=TABLE_FORMATS[fmt], filename=f"project-{project.pk}-{name}.{fmt}"
    )


@login_required
def report_wide(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    _form, options = _options(request, project)
    content = exports.wide_csv(project, filters=options.filters, real_names=options.real_names)
    return _download(
        content,
        content_type="text/csv; charset=utf-8",
        filename=f"project-{project.pk}-diagnosis.csv",
    )
