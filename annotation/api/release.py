"""A project released as a dataset: GET the card's defaults, POST to enqueue the build
(release/jobs.py), GET the job's status until it is finished, then GET its zip."""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import release
from ..models import ReleaseJob
from ..release import jobs
from .common import ERRORS, researcher_project, user_of
from .errors import ApiError, form_error


class ReleaseApi(APIView):
    """Researchers only. GET: the free-text parts of the card as written from the project
    (edit them and send them back), the licences and the source data's licence files to
    choose from. POST: the build, enqueued for the task worker (202, or 200 with the job
    already asked for: the same options at the same data version build once); poll its
    `url` until `status` is finished, then GET its `download`: the release's zip
    (application/zip): items, annotations, gold, metric_outputs and agreement in Parquet
    and JSON lines, README.md, study.json and croissant.json."""

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
        responses={(202, "application/json"): OpenApiTypes.OBJECT, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
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
            job, created = jobs.start_release(
                project=project, user=user_of(request), options=form.options()
            )
        except release.ReleaseRefused as e:
            raise ApiError(400, "invalid", str(e)) from None
        return Response(job_body(job), status=202 if created else 200)


def job_body(job: ReleaseJob) -> dict[str, Any]:
    args = [job.project_id, job.pk]
    return {
        "job": job.pk,
        "status": job.status,
        "progress": jobs.progress_text(job),
        "phase": job.phase,
        "tables_done": job.tables_done,
        "tables": len(jobs.TABLE_NAMES),
        "rows": job.rows,
        "data_version": job.data_version,
        "error": job.error,
        "url": reverse("api_release_job", args=args),
        "download": reverse("api_release_download", args=args)
        if job.status == ReleaseJob.FINISHED
        else None,
    }


class ReleaseJobApi(APIView):
    """A release's build: its status and progress; `download` once it is finished."""

    @extend_schema(operation_id="release_job", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request: Request, project_id: int, job_id: int) -> Response:
        project = researcher_project(request, project_id)
        job = get_object_or_404(ReleaseJob, pk=job_id, project=project)
        return Response(job_body(jobs.settle(job)))


class ReleaseDownloadApi(APIView):
    """A finished build's zip (404 before, or once the zip was removed)."""

    @extend_schema(
        operation_id="release_download",
        responses={(200, "application/zip"): OpenApiTypes.BINARY, **ERRORS},
    )
    def get(self, request: Request, project_id: int, job_id: int) -> FileResponse:
        project = researcher_project(request, project_id)
        job = get_object_or_404(ReleaseJob, pk=job_id, project=project, status=ReleaseJob.FINISHED)
        try:
            handle = open(job.path, "rb")
        except OSError:
            raise Http404 from None
        return FileResponse(handle, as_attachment=True, filename=jobs.zip_name(job))
