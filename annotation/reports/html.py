"""The whole report as one HTML file: CSS and SVG inline, no links back to the site
(the report page's download and `agreement_report --format html`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from django.contrib.staticfiles import finders
from django.http import HttpRequest
from django.template.loader import render_to_string

from ..models import Project
from .tables import Report


def site_css() -> str:
    path = finders.find("annotation/site.css")
    return Path(path).read_text(encoding="utf-8") if isinstance(path, str) else ""


def standalone_html(project: Project, report: Report, request: HttpRequest | None = None) -> str:
    report = replace(  # no link back to the site (the drill-down's)
        report,
        sections=tuple(
            replace(s, tables=tuple(replace(t, links=()) for t in s.tables))
            for s in report.sections
        ),
    )
    return render_to_string(
        "annotation/report_file.html",
        {"project": project, "report": report, "css": site_css(), "standalone": True},
        request=request,
    )
