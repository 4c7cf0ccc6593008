"""{% pipeline_section project %}: the "Run the pipeline" form and recent runs, for the
project page (whose view stays unaware of pipeline runs)."""

from __future__ import annotations

from typing import Any

from django import template

from ..forms import PipelineRunForm
from ..models import PipelineRun, Project

register = template.Library()


@register.inclusion_tag("annotation/_pipeline_section.html", takes_context=True)
def pipeline_section(context: template.Context, project: Project) -> dict[str, Any]:
    return {
        "project": project,
        "form": PipelineRunForm(),
        "runs": project.pipeline_runs.all()[:5],
        "current": PipelineRun.current(project),
        "csrf_token": context.get("csrf_token"),
    }
