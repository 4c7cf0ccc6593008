"""A project's webhooks: add, remove, see the deliveries, send one again (researchers
of the project only; annotation.webhooks does the work)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from .. import webhooks
from ..models import Webhook, WebhookDelivery
from .common import HtmxRequest, project_for_researcher

DELIVERIES_SHOWN = 100


@login_required
def webhook_list(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    form = webhooks.WebhookForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        hook = Webhook.objects.create(
            project=project,
            url=form.cleaned_data["url"],
            events=form.cleaned_data["events"],
            created_by=request.user,
        )
        messages.success(request, "Webhook added: its secret is on its page.")
        return redirect("webhook", project_id=project.pk, hook_id=hook.pk)
    webhooks.requeue_due(project.pk)  # deliveries a killed worker left behind
    return render(
        request,
        "annotation/webhooks.html",
        {"project": project, "form": form, "hooks": project.webhooks.all()},
    )


@login_required
def webhook(request: HtmxRequest, project_id: int, hook_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    hook = get_object_or_404(Webhook, project=project, pk=hook_id)
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "delete":
            hook.delete()
            messages.success(request, "Webhook removed.")
            return redirect("webhooks", project_id=project.pk)
        if action == "redeliver":
            raw = str(request.POST.get("delivery", ""))
            number = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 18 else 0
            delivery = get_object_or_404(WebhookDelivery, hook=hook, pk=number)
            if webhooks.redeliver(delivery):
                messages.success(request, f"Delivery {delivery.pk} will be sent again.")
            else:
                messages.error(request, f"Delivery {delivery.pk} is being sent right now.")
        return redirect("webhook", project_id=project.pk, hook_id=hook.pk)
    deliveries = hook.deliveries.all()[:DELIVERIES_SHOWN]
    return render(
        request,
        "annotation/webhook.html",
        {"project": project, "hook": hook, "deliveries": deliveries},
    )
