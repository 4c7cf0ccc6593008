"""A project released as a dataset: GET the card's defaults, POST to build the zip."""

from __future__ import annotations

from typing import Any

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import release
from .common import ERRORS, researcher_project
from .errors import ApiError, form_error


class ReleaseApi(APIView):
    """Researchers only. GET: the free-text parts of the card as written from the project
    (edit them and send them back), the licences and the source data's licence files to
    choose from. POST: the release's zip (application/zip): items, annotations, gold,
    metric_outputs and agreement in Parquet and JSON lines, README.md and croissant.json."""

    @extend_schema_serializer(component_name="ProjectReleaseInput")
    class InputSerializer(serializers.Serializer):
        license = serializers.ChoiceField(choices=release.LICENCES, required=False)
        languages = serializers.CharField(required=False, help_text="ISO 639, comma-separated")
        task_categories = serializers.ListField(
            child=serializers.ChoiceField(choices=release.TASK_CATEGORIES), required=False
        )
        pretty_name = serializers.CharField(required=False, allow_blank=True)
        summary = serializers.CharField(required=False, allow_blank=True)
        limitations = serializers.CharField(required=False, allow_blank=True)
        source_data = serializers.CharField(required=False, allow_blank=True)
        demographics = serializers.CharField(required=False, allow_blank=True)
        citation = serializers.CharField(required=False, allow_blank=True)
        source_licences = serializers.ListField(child=serializers.CharField(), required=False)
        bootstrap = serializers.IntegerField(required=False, min_value=0, max_value=10_000)

    @extend_schema_serializer(component_name="ProjectReleaseDefaults")
    class DefaultsSerializer(serializers.Serializer):
        defaults = serializers.DictField(child=serializers.CharField())
        licences = serializers.ListField(child=serializers.CharField())
        task_categories = serializers.ListField(child=serializers.CharField())
        source_licences = serializers.ListField(child=serializers.CharField())

    @extend_schema(operation_id="release_defaults", responses={200: DefaultsSerializer, **ERRORS})
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        return Response(
            {
                "defaults": release.card_defaults(project),
                "licences": list(release.LICENCES),
                "task_categories": list(release.TASK_CATEGORIES),
                "source_licences": release.available_licences(),
            }
        )

    @extend_schema(
        operation_id="release_create",
        request=InputSerializer,
        responses={(200, "application/zip"): OpenApiTypes.BINARY, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> FileResponse:
        project = researcher_project(request, project_id)
        raw = request.data
        if not isinstance(raw, dict):
            raise ApiError(400, "invalid", "Send an object of the release's options.")
        data: Any = raw.copy()  # a form's QueryDict stays one (its lists kept)
        data.setdefault("license", "cc-by-4.0")
        data.setdefault("languages", "en")
        form = release.ReleaseForm(data, project=project)
        if not form.is_valid():
            raise form_error(form)
        try:
            handle, name = release.release_zip(project, form.options())
        except release.ReleaseRefused as e:
            raise ApiError(400, "invalid", str(e)) from None
        return FileResponse(handle, as_attachment=True, filename=name)
