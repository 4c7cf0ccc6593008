"""Documents, imports (at once or as a background job), systems."""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..formats import IMPORT_CHOICES
from ..import_jobs import fail_if_abandoned
from ..import_options import ImportOptions, ImportOptionsError
from ..ingest import ImportFailed, preview_file, preview_upload
from ..models import Document, ImportJob
from ..operations import import_data
from .common import ERRORS, PAGE_PARAMS, READ_ERRORS, researcher_project, user_of, valid
from .errors import import_error, page_of, paginated

# --- documents, systems, items -----------------------------------------------------


IMPORT_FORMATS = list(IMPORT_CHOICES)  # the formats registry's (annotation/formats.py)


class DocumentListApi(APIView):
    @extend_schema_serializer(component_name="DocumentList")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        external_id = serializers.CharField()
        domain = serializers.CharField()
        question = serializers.CharField()
        response = serializers.CharField()
        source_model = serializers.CharField()
        metadata = serializers.JSONField()

    @extend_schema(
        operation_id="documents_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of(OutputSerializer, "PaginatedDocumentList"), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        return paginated(
            request,
            self,
            Document.objects.filter(project=project).order_by("id"),
            self.OutputSerializer,
        )


class DocumentImportApi(APIView):
    """Bulk import in any format `ingest` reads; validated whole, written atomically."""

    parser_classes = [MultiPartParser, FormParser, JSONParser]

    @extend_schema_serializer(component_name="DocumentImportInput")
    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(required=False, help_text="A JSONL file (multipart upload)")
        mapping = serializers.FileField(
            required=False, help_text="A mapping file (YAML or JSON) for any other layout"
        )
        content = serializers.CharField(
            required=False, trim_whitespace=False, help_text="The JSONL text, instead of a file"
        )
        filename = serializers.CharField(
            required=False,
            default="upload.jsonl",
            help_text="Name used in error messages with `content`",
        )
        format = serializers.ChoiceField(choices=IMPORT_FORMATS, default="auto")
        system = serializers.CharField(required=False, allow_blank=True, default="")
        source_model = serializers.CharField(required=False, allow_blank=True, default="")
        verifier = serializers.CharField(required=False, allow_blank=True, default="")
        domain = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            help_text="FELM: the domain of a per-domain file",
        )
        update = serializers.BooleanField(  # type: ignore[assignment]
            required=False,
            default=False,
            help_text="Replace stored documents and lists that differ",
        )
        dry_run = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Validate only: the number of records, the warnings and the first "
            "records as they would be stored (canonical JSONL records); nothing is imported",
        )

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if not attrs.get("file") and not attrs.get("content"):
                raise serializers.ValidationError({"file": "Send a file or the content."})
            try:
                attrs["options"] = ImportOptions.from_data(attrs)
            except ImportOptionsError as e:
                raise serializers.ValidationError(
                    {e.field: e.message}, code="invalid_option"
                ) from None
            return attrs

    @extend_schema_serializer(component_name="DocumentImport")
    class OutputSerializer(serializers.Serializer):
        format = serializers.CharField()
        documents_created = serializers.IntegerField()
        documents_existing = serializers.IntegerField()
        claim_lists_created = serializers.IntegerField()
        claim_lists_existing = serializers.IntegerField()
        claims_created = serializers.IntegerField()
        verdicts_created = serializers.IntegerField()
        documents_updated = serializers.IntegerField()
        claim_lists_replaced = serializers.IntegerField()
        evidence_created = serializers.IntegerField()
        segments_created = serializers.IntegerField()
        warnings = serializers.ListField(child=serializers.DictField())
        summary = serializers.CharField()

    @extend_schema(
        operation_id="documents_import",
        request={"multipart/form-data": InputSerializer, "application/json": InputSerializer},
        responses={201: OutputSerializer, 200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        data = valid(self.InputSerializer, request.data)
        if data["dry_run"]:
            return _dry_run(data)
        try:
            summary = import_data(
                project=project,
                user=user_of(request),
                options=data["options"],
                upload=data.get("file"),
                text=data.get("content", ""),
                filename=data["filename"],
            )
        except ImportFailed as e:
            raise import_error(e.errors) from None
        if isinstance(summary, ImportJob):
            return Response(_job_body(summary), status=202)
        body = {k: v for k, v in vars(summary).items() if k in self.OutputSerializer().fields}
        body["warnings"] = [vars(w) for w in summary.warnings]
        return Response({**body, "summary": str(summary)}, status=201)


def _dry_run(data: dict[str, Any]) -> Response:
    try:
        if data.get("file"):
            preview = preview_upload(upload=data["file"], options=data["options"])
        else:
            preview = preview_file(
                text=data["content"], file=data["filename"], options=data["options"]
            )
    except ImportFailed as e:
        raise import_error(e.errors) from None
    return Response(
        {
            "format": preview.format,
            "records": preview.records,
            "warnings": [vars(w) for w in preview.warnings],
            "preview": preview.first,
        }
    )


def _job_body(job: ImportJob) -> dict[str, Any]:
    return {
        "job": job.pk,
        "status": job.status,
        "phase": job.phase,
        "records": job.records,
        "summary": job.summary,
        "errors": job.errors,
        "url": reverse("api_import_job", args=[job.project_id, job.pk]),
    }


class ImportJobApi(APIView):
    """A background import (an upload above IMPORT_BACKGROUND_MB): its status."""

    @extend_schema(operation_id="import_job", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request: Request, project_id: int, job_id: int) -> Response:
        project = researcher_project(request, project_id)
        job = get_object_or_404(ImportJob, pk=job_id, project=project)
        fail_if_abandoned(job)  # a worker killed mid-import: failed, nothing written
        return Response(_job_body(job))


class SystemListApi(APIView):
    @extend_schema_serializer(component_name="SystemList")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()
        kind = serializers.CharField()
        origin = serializers.CharField()
        model = serializers.CharField()
        prompt_version = serializers.CharField()
        claim_lists = serializers.IntegerField(source="n_claim_lists")

    @extend_schema(
        operation_id="systems_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of(OutputSerializer, "PaginatedSystemList"), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        systems = project.systems.annotate(n_claim_lists=Count("claim_lists")).order_by("id")
        return paginated(request, self, systems, self.OutputSerializer)
