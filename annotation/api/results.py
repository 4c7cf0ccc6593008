"""What researchers take out: the long-format answers, gold values, export files and
the report as JSON."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from django.http import HttpResponse
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import exports, formats, gold, kinds, reports
from ..reports.options import DEFAULT_BOOTSTRAP, MAX_BOOTSTRAP, MAX_SEED, ReportOptionsForm
from ..reports.planning import PlanOptionsForm, plan_project
from .common import ERRORS, PAGE_PARAMS, researcher_project
from .errors import ApiError, form_error, page_of, paginated

# --- researcher: answers, gold values, exports ---------------------------------------


def _moment(value: str, name: str, *, end: bool) -> dt.datetime:
    try:  # a well-formed but impossible value (2026-99-99, +99:00) raises ValueError
        moment = parse_datetime(value)
        day = parse_date(value) if moment is None else None
    except ValueError as e:
        raise ApiError(400, "invalid", f"{name} is not a possible moment ({e}).", field=name) from e
    if moment is None:
        if day is None:
            raise ApiError(
                400, "invalid", f"{name} must be a date or a date-time (ISO 8601).", field=name
            )
        moment = dt.datetime.combine(day, dt.time.max if end else dt.time.min)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment


class AnswerListApi(APIView):
    """The long format (one row per answer), pseudonymous."""

    @extend_schema_serializer(component_name="AnswerList")
    class OutputSerializer(serializers.Serializer):
        item = serializers.IntegerField()
        kind = serializers.CharField()
        document = serializers.CharField()
        domain = serializers.CharField()
        unit = serializers.CharField()
        field = serializers.CharField()
        value = serializers.CharField()
        annotator = serializers.CharField()
        status = serializers.CharField()
        list1_system = serializers.CharField(allow_null=True)
        list2_system = serializers.CharField(allow_null=True)
        guideline_version = serializers.IntegerField(allow_null=True)
        started_at = serializers.DateTimeField(allow_null=True)
        submitted_at = serializers.DateTimeField(allow_null=True)
        active_seconds = serializers.FloatField()
        answered_at = serializers.DateTimeField(allow_null=True)
        gold = serializers.CharField(allow_null=True)
        gold_provenance = serializers.CharField(allow_null=True)
        gold_method = serializers.CharField(allow_null=True)  # the method, or "adjudicated"
        gold_confidence = serializers.FloatField(allow_null=True)
        # "training" or "check": answers left out of gold and every statistic; "" otherwise
        item_role = serializers.CharField(allow_blank=True)

    @extend_schema(
        operation_id="answers_list",
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, enum=kinds.names()),
            OpenApiParameter("field", OpenApiTypes.STR),
            OpenApiParameter("annotator", OpenApiTypes.STR, description='Pseudonym, e.g. "A2"'),
            OpenApiParameter(
                "since",
                OpenApiTypes.STR,
                description="Answered on or after (ISO date or date-time)",
            ),
            OpenApiParameter(
                "until",
                OpenApiTypes.STR,
                description="Answered on or before (ISO date or date-time)",
            ),
            *PAGE_PARAMS,
        ],
        responses={200: page_of(OutputSerializer, "PaginatedAnswerList"), **ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        rows = filter_rows(exports.long_rows(project), request.query_params)
        return paginated(request, self, rows, self.OutputSerializer)


def filter_rows(rows: list[dict[str, Any]], params: Any) -> list[dict[str, Any]]:
    for name in ("kind", "field", "annotator"):
        if params.get(name):
            rows = [r for r in rows if r[name] == params[name]]
    if params.get("since"):
        since = _moment(params["since"], "since", end=False)
        rows = [r for r in rows if r["answered_at"] and parse_datetime(r["answered_at"]) >= since]  # type: ignore[operator]
    if params.get("until"):
        until = _moment(params["until"], "until", end=True)
        rows = [r for r in rows if r["answered_at"] and parse_datetime(r["answered_at"]) <= until]  # type: ignore[operator]
    return rows


class GoldListApi(APIView):
    """The gold value of every unit and field, with where it comes from, by the project's
    gold method (`method`: the method's name or "adjudicated"; `confidence`: the chosen
    value's vote share under majority, its posterior under a model, 1 when adjudicated)."""

    @extend_schema_serializer(component_name="GoldList")
    class OutputSerializer(serializers.Serializer):
        item = serializers.IntegerField()
        kind = serializers.CharField()
        unit = serializers.CharField()
        field = serializers.CharField()
        value = serializers.CharField(allow_null=True)
        provenance = serializers.ChoiceField(
            choices=[
                gold.UNANIMOUS,
                gold.MAJORITY,
                gold.ADJUDICATED,
                gold.TIE_RULE,
                gold.TIE,
                *gold.MODELS,
            ]
        )
        votes = serializers.DictField(child=serializers.IntegerField())
        disagreement = serializers.FloatField()
        note = serializers.CharField()
        method = serializers.ChoiceField(choices=[*gold.METHODS, gold.ADJUDICATED])
        confidence = serializers.FloatField(allow_null=True)

    @extend_schema(
        operation_id="gold_list",
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, enum=kinds.names()),
            OpenApiParameter("field", OpenApiTypes.STR),
            *PAGE_PARAMS,
        ],
        responses={200: page_of(OutputSerializer, "PaginatedGoldList"), **ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        kind = request.query_params.get("kind") or None
        if kind and kind not in kinds.names():
            raise ApiError(400, "invalid_choice", f"Unknown kind {kind!r}.", field="kind")
        golds = gold.gold_values(project, kind=kind)
        if request.query_params.get("field"):
            golds = [g for g in golds if g.field == request.query_params["field"]]
        return paginated(request, self, golds, self.OutputSerializer)


class ExportApi(APIView):
    """Whole-project files: the long and wide answer tables, and the interchange formats."""

    @extend_schema(
        operation_id="exports_retrieve",
        parameters=[
            OpenApiParameter(
                "name", OpenApiTypes.STR, OpenApiParameter.PATH, enum=sorted(formats.EXPORTS)
            ),
            *(
                OpenApiParameter(
                    param,
                    OpenApiTypes.STR,
                    enum=kinds.names() if param == "kind" else None,
                    description=formats.param_help(param),
                )
                for param in formats.PARAMS  # the writers' parameters (annotation/formats.py)
            ),
        ],
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/jsonl"): OpenApiTypes.STR,
            **ERRORS,
        },
    )
    def get(self, request: Request, project_id: int, name: str) -> HttpResponse:
        project = researcher_project(request, project_id)
        if name not in formats.EXPORTS:
            raise ApiError(
                404,
                "not_found",
                f"Unknown export {name!r}; one of {', '.join(sorted(formats.EXPORTS))}.",
            )
        try:
            text, content_type = formats.export(project, name, params=request.query_params)
        except ValueError as e:
            raise ApiError(400, "invalid", str(e)) from None
        response = HttpResponse(text, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="project-{project.pk}-{name}"'
        return response


class ReportApi(APIView):
    """The report page as JSON: agreement, verification, preference and effort tables."""

    @extend_schema(
        operation_id="report_retrieve",
        parameters=[
            OpenApiParameter(
                "annotators", OpenApiTypes.INT, many=True, description="only these (user ids)"
            ),
            OpenApiParameter("domains", OpenApiTypes.STR, many=True, description="only these"),
            OpenApiParameter("date_from", OpenApiTypes.DATE, description="submitted on or after"),
            OpenApiParameter("date_to", OpenApiTypes.DATE, description="submitted on or before"),
            OpenApiParameter("names", OpenApiTypes.BOOL, description="usernames instead of A<n>"),
            OpenApiParameter(
                "bootstrap",
                OpenApiTypes.INT,
                description=f"bootstrap resamples for the CIs (0-{MAX_BOOTSTRAP}, default "
                f"{DEFAULT_BOOTSTRAP})",
            ),
            OpenApiParameter("seed", OpenApiTypes.INT, description=f"0-{MAX_SEED}"),
            OpenApiParameter(
                "plan",
                OpenApiTypes.BOOL,
                description="add the planning section (slow; default off; also at /plan/)",
            ),
            OpenApiParameter(
                "plan_method",
                OpenApiTypes.STR,
                description="simulation (default) or kappasize (Rotondi & Donner, as kappaSize)",
            ),
            OpenApiParameter(
                "gold",
                OpenApiTypes.STR,
                description="gold method: majority, dawid_skene, mace or glad (default: the"
                " project's)",
            ),
            OpenApiParameter(
                "sensitivity",
                OpenApiTypes.BOOL,
                description="add the sensitivity section: the headline figures under each gold"
                " method (default off; the models are fitted by the task worker)",
            ),
        ],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        form = ReportOptionsForm(request.query_params or None, project=project)
        if form.is_bound and not form.is_valid():
            raise form_error(form)
        report = reports.cached_report(project, form.options(), with_charts=False)
        return Response(json.loads(reports.report_json(report)))


class PlanApi(APIView):
    """Planning the study: units per agreement field, comparisons per domain, budget."""

    @extend_schema(
        operation_id="plan_retrieve",
        parameters=[
            OpenApiParameter(name, OpenApiTypes.STR, description=str(field.help_text or name))
            for name, field in PlanOptionsForm.base_fields.items()
        ],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        form = PlanOptionsForm(request.query_params)
        if not form.is_valid():
            raise form_error(form)
        try:
            section = plan_project(project, form.options())
        except ValueError as error:
            raise ApiError(400, "invalid", str(error)) from None
        if section is None:
            raise ApiError(
                400,
                "nothing_to_plan",
                "The project has no answers to plan from: give assumed kappa and shares.",
            )
        return Response(
            {
                "notes": list(section.notes),
                "tables": [reports.table_json(t) for t in section.tables],
            }
        )
