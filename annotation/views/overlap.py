"""The researcher's adaptive-overlap page (issue 30): see, set or turn off the policy."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render

from .. import operations
from ..forms import AdaptiveOverlapForm
from ..models import AdaptiveOverlap
from .common import HtmxRequest, project_for_researcher


@login_required
def adaptive_overlap_page(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    policy = AdaptiveOverlap.objects.filter(project=project).first()
    choices = operations.adaptive_fields()
    initial = (
        {"field": f"{policy.kind}.{policy.field}", "start": policy.start, "up_to": policy.up_to}
        if policy
        else None
    )
    form = AdaptiveOverlapForm(None, choices=choices)
    form.initial = initial or {"start": 2, "up_to": 3}
    if request.method == "POST":
        if request.POST.get("action") == "off":
            AdaptiveOverlap.objects.filter(project=project).delete()
            messages.success(request, "Adaptive overlap is off.")
            return redirect("adaptive_overlap", project_id=project.pk)
        form = AdaptiveOverlapForm(request.POST, choices=choices)
        if form.is_valid():
            form.save(project)
            messages.success(request, "Adaptive overlap saved.")
            return redirect("adaptive_overlap", project_id=project.pk)
    return render(
        request,
        "annotation/adaptive_overlap.html",
        {"project": project, "policy": policy, "form": form},
    )
