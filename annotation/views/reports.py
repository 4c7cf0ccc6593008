"""Report pages and exports, for the project's researchers only (404 for anyone else)."""

from __future__ import annotations

import json
from datetime import date

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.csp import csp_override

from .. import reports
from ..models import Project
from .common import HtmxRequest, project_for_researcher

MAX_BOOTSTRAP = 10000
TABLE_FORMATS = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "tex": "application/x-tex; charset=utf-8",
}


class ReportFilterForm(forms.Form):
    annotators = forms.TypedMultipleChoiceField(
        coerce=int, required=False, widget=forms.CheckboxSelectMultiple
    )
    domains = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    names = forms.BooleanField(required=False, label="Show usernames")
    bootstrap = forms.IntegerField(
        required=False, min_value=0, max_value=MAX_BOOTSTRAP, label="Bootstrap resamples"
    )
    seed = forms.IntegerField(required=False, min_value=0)

    def __init__(self, *args: object, project: Project, real_names: bool, **kwargs: object):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["annotators"].choices = reports.annotator_choices(  # type: ignore[attr-defined]
            project, real_names=real_names
        )
        self.fields["domains"].choices = [  # type: ignore[attr-defined]
            (d, d or "(no domain)") for d in reports.domains_of(project)
        ]


def _options(request: HtmxRequest, project: Project) -> tuple[ReportFilterForm, dict[str, object]]:
    real_names = request.GET.get("names") in ("1", "on", "true")
    form = ReportFilterForm(request.GET or None, project=project, real_names=real_names)
    data: dict[str, object] = {}
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
    elif form.is_bound:
        raise Http404("Invalid report filter.")
    date_from: date | None = data.get("date_from")  # type: ignore[assignment]
    date_to: date | None = data.get("date_to")  # type: ignore[assignment]
    bootstrap = data.get("bootstrap")
    seed = data.get("seed")
    options: dict[str, object] = {
        "filters": reports.Filters(
            annotators=tuple(data.get("annotators") or ()),  # type: ignore[arg-type]
            domains=tuple(data.get("domains") or ()),  # type: ignore[arg-type]
            date_from=date_from,
            date_to=date_to,
        ),
        "real_names": real_names,
        "bootstrap": 1000 if bootstrap is None else bootstrap,
        "seed": 0 if seed is None else seed,
    }
    return form, options


def _report(
    request: HtmxRequest, project_id: int
) -> tuple[Project, ReportFilterForm, reports.Report]:
    project = project_for_researcher(request, project_id)
    form, options = _options(request, project)
    return project, form, reports.build_report(project, **options)  # type: ignore[arg-type]


def _download(content: str, *, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
@csp_override(settings.CSP_INLINE_STYLES)  # matplotlib's SVG has style attributes
def report_page(request: HtmxRequest, project_id: int) -> HttpResponse:
    project, form, report = _report(request, project_id)
    return render(
        request,
        "annotation/report.html",
        {
            "project": project,
            "form": form,
            "report": report,
            "query": request.GET.urlencode(),
            "standalone": False,
        },
    )


@login_required
@csp_override(settings.CSP_INLINE_STYLES)  # matplotlib's SVG has style attributes
def report_html(request: HtmxRequest, project_id: int) -> HttpResponse:
    """The whole report in one file: CSS and SVG inline, no links back to the site."""
    project, _form, report = _report(request, project_id)
    css = reports_static_css()
    html = render_to_string(
        "annotation/report_file.html",
        {
            "project": project,
            "report": report,
            "css": css,
            "standalone": True,
        },
        request=request,
    )
    return _download(
        html, content_type="text/html; charset=utf-8", filename=f"project-{project.pk}-report.html"
    )


def reports_static_css() -> str:
    from django.contrib.staticfiles import finders

    path = finders.find("annotation/site.css")
    if not path:
        return ""
    with open(path, encoding="utf-8") as f:  # type: ignore[arg-type]
        return f.read()


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
    project, _form, report = _report(request, project_id)
    try:
        table = report.table(name)
    except KeyError:
        raise Http404("No such table in this report.") from None
    if fmt == "csv":
        content = reports.table_csv(table)
    elif fmt == "json":
        content = json.dumps(reports.table_json(table), indent=1)
    else:
        content = reports.table_latex(table)
    return _download(
        content, content_type=TABLE_FORMATS[fmt], filename=f"project-{project.pk}-{name}.{fmt}"
    )


@login_required
def report_wide(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    _form, options = _options(request, project)
    content = reports.wide_csv(
        project,
        filters=options["filters"],  # type: ignore[arg-type]
        real_names=bool(options["real_names"]),
    )
    return _download(
        content,
        content_type="text/csv; charset=utf-8",
        filename=f"project-{project.pk}-diagnosis.csv",
    )


def table_url(project_id: int, name: str, fmt: str, query: str) -> str:
    url = reverse("report_table", args=[project_id, name, fmt])
    return f"{url}?{query}" if query else url
