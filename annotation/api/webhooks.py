"""A project's webhooks and their deliveries (researchers of the project only). The
secret is shown on creation and on the hook's own row: it signs every delivery."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import webhooks
from ..models import Webhook, WebhookDelivery
from .common import ERRORS, PAGE_PARAMS, READ_ERRORS, researcher_project, user_of, valid
from .errors import ApiError, form_error, page_of, paginated


@extend_schema_serializer(component_name="WebhookInput")
class WebhookInputSerializer(serializers.Serializer):
    url = serializers.CharField(max_length=500)
    events = serializers.ListField(child=serializers.ChoiceField(choices=Webhook.EVENTS))


@extend_schema_serializer(component_name="Webhook")
class WebhookSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField())
    secret = serializers.CharField()
    active = serializers.BooleanField()
    created_at = serializers.DateTimeField()


@extend_schema_serializer(component_name="WebhookDelivery")
class DeliverySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    event = serializers.CharField()
    status = serializers.CharField()
    attempts = serializers.IntegerField()
    response_code = serializers.IntegerField(allow_null=True)
    next_attempt_at = serializers.DateTimeField()
    delivered_at = serializers.DateTimeField(allow_null=True)
    payload = serializers.JSONField()
    log = serializers.JSONField()


def _row(hook: Webhook) -> dict[str, Any]:
    return {
        "id": hook.pk,
        "url": hook.url,
        "events": hook.events,
        "secret": hook.secret,
        "active": hook.active,
        "created_at": hook.created_at,
    }


def _hook(request: Request, project_id: int, hook_id: int) -> Webhook:
    project = researcher_project(request, project_id)
    return get_object_or_404(Webhook, project=project, pk=hook_id)


class WebhookListApi(APIView):
    @extend_schema(
        operation_id="webhooks_list", responses={200: WebhookSerializer(many=True), **READ_ERRORS}
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        return Response([_row(h) for h in project.webhooks.all()])

    @extend_schema(
        operation_id="webhooks_create",
        request=WebhookInputSerializer,
        responses={201: WebhookSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        form = webhooks.WebhookForm(valid(WebhookInputSerializer, request.data))
        if not form.is_valid():
            raise form_error(form)
        hook = Webhook.objects.create(
            project=project,
            url=form.cleaned_data["url"],
            events=form.cleaned_data["events"],
            created_by=user_of(request),
        )
        return Response(_row(hook), status=201)


class WebhookApi(APIView):
    @extend_schema(
        operation_id="webhooks_retrieve", responses={200: WebhookSerializer, **READ_ERRORS}
    )
    def get(self, request: Request, project_id: int, hook_id: int) -> Response:
        return Response(_row(_hook(request, project_id, hook_id)))

    @extend_schema(operation_id="webhooks_destroy", responses={204: None, **READ_ERRORS})
    def delete(self, request: Request, project_id: int, hook_id: int) -> Response:
        _hook(request, project_id, hook_id).delete()
        return Response(status=204)


class DeliveryListApi(APIView):
    @extend_schema(
        operation_id="webhook_deliveries_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of(DeliverySerializer, "PaginatedWebhookDeliveryList"), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int, hook_id: int) -> Response:
        hook = _hook(request, project_id, hook_id)
        webhooks.requeue_due(hook.project_id)
        return paginated(request, self, hook.deliveries.order_by("-id"), DeliverySerializer)


class RedeliverApi(APIView):
    @extend_schema(
        operation_id="webhook_deliveries_redeliver",
        request=None,
        responses={200: DeliverySerializer, 409: ERRORS[400], **READ_ERRORS},  # 409: busy
    )
    def post(self, request: Request, project_id: int, hook_id: int, delivery_id: int) -> Response:
        hook = _hook(request, project_id, hook_id)
        delivery = get_object_or_404(WebhookDelivery, hook=hook, pk=delivery_id)
        if not webhooks.redeliver(delivery):
            raise ApiError(409, "busy", "the delivery is being sent right now; try again soon")
        delivery.refresh_from_db()
        return Response(DeliverySerializer(delivery).data)
