"""Pipeline runs: list, start, watch, cancel, retry."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import endpoints, forms
from ..models import PipelineRun
from ..operations import NoDocuments, start_pipeline_run
from ..tasks import cancel_run, requeue_stale_chunks, retry_run
from .common import ERRORS, PAGE_PARAMS, READ_ERRORS, researcher_project, user_of, valid
from .errors import ApiError, ErrorSerializer, form_error, page_of, paginated

# The run form's extractors (the schema's PipelineRunExtractorEnum).
EXTRACTORS = [value for value, _ in forms.PipelineRunForm.base_fields["extractor"].choices]  # type: ignore[attr-defined]

# --- pipeline runs -----------------------------------------------------------------------


class PipelineRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=[s for s, _ in PipelineRun.STATUSES])
    config = serializers.DictField(help_text="what was run; never an API key")
    total = serializers.IntegerField(help_text="responses in the run")
    done = serializers.IntegerField(help_text="responses processed so far")
    percent = serializers.IntegerField()
    counts = serializers.DictField()
    tokens = serializers.IntegerField()
    cost = serializers.FloatField(help_text="USD, from the model price table")
    error_count = serializers.IntegerField()
    errors = serializers.ListField(child=serializers.CharField())  # type: ignore[assignment]
    extractor = serializers.CharField(source="extractor_name", help_text="system of the claims")
    verifier = serializers.CharField(source="verifier_name", help_text="system of the verdicts")
    current = serializers.BooleanField(
        source="is_current", help_text="the project's latest finished run"
    )
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class PipelineRunListApi(APIView):
    """A project's pipeline runs; POST starts one over all its documents (the page's form;
    keys come from the workers' environment, never from the request)."""

    @extend_schema_serializer(component_name="PipelineRunListInput")
    class InputSerializer(serializers.Serializer):
        extractor = serializers.ChoiceField(choices=EXTRACTORS, default="veriscore")
        label_mode = serializers.ChoiceField(choices=["binary", "ternary"], default="binary")
        reference = serializers.ChoiceField(
            choices=["veriscore", "verifastscore"],
            required=False,
            help_text="requests and scores exactly as the released code (set up by the "
            "operator); the extractor must be the same method",
        )
        endpoint = serializers.CharField(
            max_length=100,
            required=False,
            default=endpoints.first,
            help_text="the name of an endpoint the operator configured (never a URL); "
            "default: the first one",
        )
        model = serializers.CharField(max_length=200)
        retriever = serializers.ChoiceField(choices=["serper", "bm25"], default="serper")
        offline = serializers.BooleanField(default=False)
        chunk_size = serializers.IntegerField(min_value=1, max_value=1000, default=10)
        fixed_k = serializers.FloatField(min_value=1, required=False, allow_null=True, default=None)
        batch = serializers.BooleanField(
            default=False, help_text="the provider's Batch API: half the price, answers later"
        )
        batch_poll = serializers.FloatField(
            min_value=1, required=False, allow_null=True, default=None, help_text="seconds"
        )

    @extend_schema(
        operation_id="pipeline_runs_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of(PipelineRunSerializer, "PaginatedPipelineRunList"), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        return paginated(request, self, list(project.pipeline_runs.all()), PipelineRunSerializer)

    @extend_schema(
        operation_id="pipeline_runs_create",
        request=InputSerializer,
        responses={201: PipelineRunSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        given = request.data if isinstance(request.data, dict) else {}
        unknown = sorted(set(given) - set(self.InputSerializer().fields))
        if unknown:  # e.g. base_url or api_key: a run names an endpoint and nothing else
            raise ApiError(
                400,
                "unknown_field",
                f"Unknown field {unknown[0]!r}; a run chooses an endpoint by name.",
                field=unknown[0],
            )
        data = valid(self.InputSerializer, request.data)
        form = forms.PipelineRunForm(
            {k: v for k, v in data.items() if v is not None and v is not False}
        )
        if not form.is_valid():
            raise form_error(form)
        try:
            run = start_pipeline_run(project=project, user=user_of(request), data=form.cleaned_data)
        except NoDocuments as e:
            raise ApiError(400, "no_documents", str(e)) from None
        return Response(PipelineRunSerializer(run).data, status=201)


class PipelineRunDetailApi(APIView):
    """A run's status and progress; when finished, `scores` holds F1@K per response and
    VERIScore per (model, domain), null where nothing was measured (never 0)."""

    @extend_schema_serializer(component_name="PipelineRunDetail")
    class OutputSerializer(PipelineRunSerializer):
        scores = serializers.JSONField(allow_null=True)

    @extend_schema(
        operation_id="pipeline_runs_retrieve", responses={200: OutputSerializer, **READ_ERRORS}
    )
    def get(self, request: Request, project_id: int, run_id: int) -> Response:
        run = _run_of(request, project_id, run_id)
        if not run.is_over and requeue_stale_chunks(run):
            run.refresh_from_db()
        return Response(self.OutputSerializer(run).data)


def _run_of(request: Request, project_id: int, run_id: int) -> PipelineRun:
    project = researcher_project(request, project_id)
    run = PipelineRun.objects.filter(pk=run_id, project=project).first()
    if run is None:
        raise ApiError(404, "not_found", "No such pipeline run.")
    return run


class PipelineRunCancelApi(APIView):
    """Cancel an unfinished run: no chunk runs any more and nothing is written into the
    project (409 when the run is already over)."""

    @extend_schema(
        operation_id="pipeline_runs_cancel",
        request=None,
        responses={200: PipelineRunSerializer, 409: ErrorSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int, run_id: int) -> Response:
        run = _run_of(request, project_id, run_id)
        if not cancel_run(run):
            raise ApiError(409, "run_over", f"The run is already {run.status}.")
        run.refresh_from_db()
        return Response(PipelineRunSerializer(run).data)


class PipelineRunRetryApi(APIView):
    """Run the failed (or cancelled) chunks of a failed or cancelled run again; done
    chunks keep their results (409 for a run that is queued, running or finished)."""

    @extend_schema(
        operation_id="pipeline_runs_retry",
        request=None,
        responses={200: PipelineRunSerializer, 409: ErrorSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int, run_id: int) -> Response:
        run = _run_of(request, project_id, run_id)
        if not retry_run(run):
            raise ApiError(409, "not_retryable", f"A {run.status} run cannot be retried.")
        run.refresh_from_db()
        return Response(PipelineRunSerializer(run).data)
