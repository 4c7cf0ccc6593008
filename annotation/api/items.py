"""Items: the list with their status, and creating items of a kind with the
assignment policy."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import kinds, operations
from ..forms import AdaptiveOverlapForm
from ..kinds.base import unit_field
from ..models import AdaptiveOverlap, Item, Project
from .common import ERRORS, PAGE_PARAMS, researcher_project, valid
from .errors import ApiError, form_error, page_of, paginated

ITEM_STATUSES = ["unassigned", "open", "done"]


class ItemListApi(APIView):
    @extend_schema_serializer(component_name="ItemList")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        kind = serializers.CharField()
        document = serializers.CharField(source="document.external_id")
        status = serializers.ChoiceField(choices=ITEM_STATUSES)
        assigned = serializers.IntegerField()
        submitted = serializers.IntegerField()
        skipped = serializers.IntegerField()
        system_a = serializers.CharField(source="list_a.system.name", allow_null=True, default=None)
        system_b = serializers.CharField(source="list_b.system.name", allow_null=True, default=None)
        claim = serializers.IntegerField(source="claim_id", allow_null=True)
        created_at = serializers.DateTimeField()

    @extend_schema(
        operation_id="items_list",
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, enum=kinds.names()),
            OpenApiParameter(
                "status",
                OpenApiTypes.STR,
                enum=ITEM_STATUSES,
                description="unassigned; open (an assignment is pending or a "
                "draft); done (every assignment submitted or skipped)",
            ),
            *PAGE_PARAMS,
        ],
        responses={200: page_of(OutputSerializer, "PaginatedItemList"), **ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        items = (
            Item.objects.filter(project=project)
            .select_related("document", "list_a__system", "list_b__system")
            .with_progress()
            .order_by("id")
        )
        kind = request.query_params.get("kind")
        if kind:
            if kind not in kinds.names():
                raise ApiError(400, "invalid_choice", f"Unknown kind {kind!r}.", field="kind")
            items = items.filter(kind=kind)
        status = request.query_params.get("status")
        if status == "unassigned":
            items = items.filter(assigned=0)  # type: ignore[misc]
        elif status == "open":
            items = items.filter(n_open__gt=0)  # type: ignore[misc]
        elif status == "done":
            items = items.filter(assigned__gt=0, n_open=0)  # type: ignore[misc]
        elif status:
            raise ApiError(400, "invalid_choice", f"Unknown status {status!r}.", field="status")
        for item in items:  # cheap: the page is built from the same annotated rows
            item.status = "unassigned" if not item.assigned else "open" if item.n_open else "done"  # type: ignore[attr-defined]
        return paginated(request, self, list(items), self.OutputSerializer)


class PolicyInputSerializer(serializers.Serializer):
    """How the new items are spread over the project's annotators."""

    # k and fraction are checked where every surface checks them (models.check_policy)
    k = serializers.IntegerField(default=2, help_text="annotators per overlap item (1 to all)")
    all_annotators = serializers.BooleanField(default=False, help_text="k = all annotators")
    fraction = serializers.FloatField(
        default=0.2, help_text="share of items with k annotators (0-1)"
    )
    seed = serializers.IntegerField(default=0, min_value=-(2**62), max_value=2**62)


class ItemsCreatedSerializer(serializers.Serializer):
    items_created = serializers.IntegerField()
    assignments_created = serializers.IntegerField()
    item_ids = serializers.ListField(child=serializers.IntegerField())


def _serializer_field(field: Any) -> serializers.Field:
    """A kind's items-form field as an (optional) API input field, for the schema."""
    from django import forms as django_forms

    if isinstance(field, django_forms.ModelChoiceField):
        return serializers.IntegerField(
            required=False, help_text=f"{field.label or 'System'} (a system id)"
        )
    if isinstance(field, django_forms.MultipleChoiceField):
        return serializers.ListField(
            child=serializers.ChoiceField(choices=[c for c, _ in field.choices]),  # type: ignore[misc, union-attr]
            required=False,
        )
    if isinstance(field, django_forms.IntegerField):
        return serializers.IntegerField(
            required=False,
            min_value=field.min_value,  # type: ignore[arg-type]
            help_text=str(field.label or ""),
        )
    return serializers.CharField(required=False)


def _items_input() -> type[serializers.Serializer]:
    """Policy fields plus every kind's own fields (the items forms of the project page)."""
    policy = set(PolicyInputSerializer().fields)
    extra: dict[str, Any] = {}
    for spec in kinds.all_specs():
        for name, field in spec.items_form(Project(pk=0)).fields.items():
            if name not in policy:
                extra.setdefault(name, _serializer_field(field))
    return type("ItemsCreateInput", (PolicyInputSerializer,), extra)


class ItemsCreateApi(APIView):
    """Items of one kind, then the assignment policy: k annotators on a seeded fraction f of
    the items, one elsewhere. comparison: one item per document with lists from both
    systems (system_a, system_b); verification: a seeded sample of n claims with search
    results of one system (system, n, stratify); segment: one item per document; atomic:
    one item per claim list of one system (system). Every kind takes n: a seeded sample
    of at most n of the items not made yet."""

    InputSerializer = extend_schema_serializer(component_name="ItemsCreateInput")(_items_input())

    @extend_schema(
        operation_id="items_create",
        request=InputSerializer,
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, OpenApiParameter.PATH, enum=kinds.names())
        ],
        responses={201: ItemsCreatedSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int, kind: str) -> Response:
        project = researcher_project(request, project_id)
        if kind not in kinds.names():
            raise ApiError(
                404, "not_found", f"Unknown kind {kind!r}; one of {', '.join(kinds.names())}."
            )
        data = valid(self.InputSerializer, request.data)
        form = kinds.get(kind).items_form(project, data)
        if not form.is_valid():
            raise form_error(form)
        try:
            items, n = operations.create_items(project, form)
        except ValueError as e:
            raise ApiError(400, "invalid", str(e)) from None
        return Response(
            {
                "items_created": len(items),
                "assignments_created": n,
                "item_ids": [i.pk for i in items],
            },
            status=201,
        )


@extend_schema_serializer(component_name="PolicyAdaptiveOverlap")
class AdaptiveOverlapSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="the item field watched, kind.field")
    start = serializers.IntegerField(help_text="annotators every item starts with (k)")
    up_to = serializers.IntegerField(help_text="at most this many (m)")


class AdaptiveOverlapApi(APIView):
    """The project's adaptive overlap: start with k annotators per item, add one while
    they disagree on the field, up to m. 404 while there is none; DELETE turns it off."""

    @staticmethod
    def _row(p: AdaptiveOverlap) -> dict[str, Any]:
        return {"field": f"{p.kind}.{p.field}", "start": p.start, "up_to": p.up_to}

    @extend_schema(
        operation_id="adaptive_overlap_retrieve",
        responses={200: AdaptiveOverlapSerializer, **ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        policy = AdaptiveOverlap.objects.filter(project=project).first()
        if policy is None:
            raise ApiError(404, "not_found", "This project has no adaptive overlap.")
        return Response(self._row(policy))

    @extend_schema(
        operation_id="adaptive_overlap_update",
        request=AdaptiveOverlapSerializer,
        responses={200: AdaptiveOverlapSerializer, **ERRORS},
    )
    def put(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        form = AdaptiveOverlapForm(
            valid(AdaptiveOverlapSerializer, request.data), choices=operations.adaptive_fields()
        )
        if not form.is_valid():
            raise form_error(form)
        return Response(self._row(form.save(project)))

    @extend_schema(operation_id="adaptive_overlap_destroy", responses={204: None, **ERRORS})
    def delete(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        AdaptiveOverlap.objects.filter(project=project).delete()
        return Response(status=204)


class ItemPreviewApi(APIView):
    """An item as its annotators see it (the page and the assignment API show the same):
    the document's question and response, what its kind lets annotators see, and the
    questions asked. Never a system, a verdict or anyone's answer. Researchers of the
    project only; it writes nothing (no assignment, no answer, no draft)."""

    # built with type(): a declared `label` would shadow Serializer.label
    FieldSerializer = extend_schema_serializer(component_name="ItemPreviewField")(
        type(
            "FieldSerializer",
            (serializers.Serializer,),
            {
                "unit": serializers.CharField(help_text='"item", "evidence:<rank>", "fact:<n>"'),
                "field": serializers.CharField(),
                "label": serializers.CharField(help_text="the question as the page asks it"),
                "choices": serializers.ListField(
                    child=serializers.CharField(), help_text="the values; empty: free text"
                ),
            },
        )
    )

    # plus what the kinds let annotators see (KindSpec.view_keys); null for other kinds
    OutputSerializer = extend_schema_serializer(component_name="ItemPreview")(
        type(
            "OutputSerializer",
            (serializers.Serializer,),
            {
                "id": serializers.IntegerField(),
                "project": serializers.IntegerField(),
                "kind": serializers.CharField(),
                "question": serializers.CharField(),
                "response": serializers.CharField(),
                "fields": FieldSerializer(many=True),
                **{
                    key: serializers.JSONField(allow_null=True, help_text=text)
                    for spec in kinds.all_specs()
                    for key, text in spec.view_keys.items()
                },
            },
        )
    )

    @extend_schema(operation_id="items_preview", responses={200: OutputSerializer, **ERRORS})
    def get(self, request: Request, project_id: int, item_id: int) -> Response:
        project = researcher_project(request, project_id)  # 404 for everyone else
        item = get_object_or_404(kinds.preview_items(project), pk=item_id)
        _spec, view, form = kinds.preview(item)  # writes nothing
        body: dict[str, Any] = {
            "id": item.pk,
            "project": project.pk,
            "kind": item.kind,
            "question": item.document.question,
            "response": item.document.response,
            "fields": [_asked(name, field) for name, field in form.fields.items()],
        }
        body.update({key: None for s in kinds.all_specs() for key in s.view_keys})
        body.update(view)
        return Response(body)


def _asked(name: str, field: Any) -> dict[str, Any]:
    """One question of an answer form as the preview lists it."""
    unit, field_name = unit_field(name)
    choices = getattr(field, "choices", None) or []
    return {
        "unit": unit,
        "field": field_name,
        "label": str(field.label or field_name),
        "choices": [str(value) for value, _ in choices if value != ""],
    }
