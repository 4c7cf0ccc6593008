"""A researcher previews an item as its annotators see it (issue 43): the item through its
kind's view and page template, as the instructions show a worked example, read-only and
empty. Nothing is written: no assignment, no answer, no draft."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET

from .. import kinds
from .common import HtmxRequest, project_for_researcher


@login_required
@require_GET
def item_preview(request: HtmxRequest, project_id: int, item_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)  # 404 for annotators and others
    item = get_object_or_404(kinds.preview_items(project), pk=item_id)
    spec, view, form = kinds.preview(item)  # writes nothing
    context = {
        "project": project,
        "document": item.document,
        "form": form,
        "example": "Preview: the item as an annotator sees it (nothing is saved)",
        "idp": "preview-",
        **spec.page_context(view, form),
    }
    form.auto_id = "preview-id_%s"
    return render(
        request,
        "annotation/item_preview.html",
        {
            "project": project,
            "item": item,
            "title": spec.title,
            "html": render_to_string(spec.template + "#item", context, request=request),
        },
    )
