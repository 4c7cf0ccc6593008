"""The annotator's queue and assignments: read, draft, submit, skip. Blinded like the
pages: texts only, never a system, a verdict or someone else's answer."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import forms, hiring, kinds
from ..kinds.base import api_name
from ..models import Assignment
from ..operations import answers_form
from .common import ERRORS, PAGE_PARAMS, READ_ERRORS, annotator_membership, user_of, valid
from .errors import ApiError, ErrorSerializer, form_error, page_of, paginated

# --- annotator: queue, assignment, draft, submit -------------------------------------


class AnswerSerializer(serializers.Serializer):
    unit = serializers.CharField(
        max_length=50, help_text='"item", "evidence:<rank>" or "segment:<position>"'
    )
    field = serializers.CharField(max_length=50)
    value = serializers.CharField(allow_blank=True, trim_whitespace=False)


class AssignmentListApi(APIView):
    @extend_schema_serializer(component_name="AssignmentList")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        project = serializers.IntegerField(source="item.project_id")
        kind = serializers.CharField(source="item.kind")
        status = serializers.CharField()
        position = serializers.IntegerField()
        submitted_at = serializers.DateTimeField(allow_null=True)

    @extend_schema(
        operation_id="assignments_queue",
        description="The caller's own queue, in order.",
        parameters=[
            OpenApiParameter("project", OpenApiTypes.INT),
            OpenApiParameter("status", OpenApiTypes.STR, enum=[s for s, _ in Assignment.STATUSES]),
            *PAGE_PARAMS,
        ],
        responses={200: page_of(OutputSerializer, "PaginatedAssignmentList"), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        rows = (
            Assignment.objects.visible_to(user_of(request))
            .select_related("item__project", "item__document")
            .order_by("item__project_id", "position", "id")
        )
        project = request.query_params.get("project")
        if project:
            if not project.isdigit():
                raise ApiError(400, "invalid", "project must be an id.", field="project")
            rows = rows.filter(item__project_id=int(project))
        status = request.query_params.get("status")
        if status:
            if status not in dict(Assignment.STATUSES):
                raise ApiError(400, "invalid_choice", f"Unknown status {status!r}.", field="status")
            rows = rows.filter(status=status)
        return paginated(request, self, rows, self.OutputSerializer)


def _assignment_for(request: Request, assignment_id: int) -> Assignment:
    assignment = get_object_or_404(
        # What the kind's view shows comes with it (the claim lists, the claim).
        Assignment.objects.visible_to(user_of(request)).select_related(
            "item__project", "item__document", "item__list_a", "item__list_b", "item__claim"
        ),
        pk=assignment_id,
    )
    membership = annotator_membership(request, assignment.item.project_id)
    if not membership.has_acknowledged:
        raise ApiError(
            409,
            "instructions_not_acknowledged",
            "Read the project's instructions (version "
            f"{membership.project.instructions_version}) and acknowledge them: "
            f"POST /api/projects/{membership.project_id}/instructions/acknowledge/.",
        )
    held = hiring.blocked(membership, assignment)
    if held:
        raise ApiError(
            409,
            f"hiring_{held}",
            "Finish your training items first (or wait for a researcher to let you through)."
            if held == "training"
            else "Your work on this project is paused: no new items.",
        )
    return assignment


def _answered(request: Request, assignment: Assignment) -> None:
    """Training results and the automatic pause follow each answer (hiring.after_submit)."""
    hiring.after_submit(annotator_membership(request, assignment.item.project_id))


class AssignmentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    project = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    position = serializers.IntegerField()
    skip_reason = serializers.CharField()
    question = serializers.CharField()
    response = serializers.CharField()
    answers = AnswerSerializer(many=True, help_text="Your own answers (draft or submitted)")


class AssignmentDetailApi(APIView):
    # plus what the kinds let annotators see (KindSpec.view_keys); null for other kinds
    OutputSerializer = extend_schema_serializer(component_name="AssignmentDetail")(
        type(
            "OutputSerializer",
            (AssignmentSerializer,),
            {
                key: serializers.JSONField(allow_null=True, help_text=text)
                for spec in kinds.all_specs()
                for key, text in spec.view_keys.items()
            },
        )
    )

    @staticmethod
    def body(assignment: Assignment) -> dict[str, Any]:
        """Blinded: texts only, never a system, a verdict or someone else's answer."""
        item, doc = assignment.item, assignment.item.document
        body: dict[str, Any] = {
            "id": assignment.pk,
            "project": item.project_id,
            "kind": item.kind,
            "status": assignment.status,
            "position": assignment.position,
            "skip_reason": assignment.skip_reason,
            "question": doc.question,
            "response": doc.response,
            "answers": [
                {"unit": a.unit, "field": a.field, "value": a.value}
                for a in assignment.answers.all()
            ],
        }
        body.update({key: None for spec in kinds.all_specs() for key in spec.view_keys})
        body.update(kinds.view(assignment))
        return body

    @extend_schema(
        operation_id="assignments_retrieve",
        responses={200: OutputSerializer, 409: ErrorSerializer, **READ_ERRORS},
    )
    def get(self, request: Request, assignment_id: int) -> Response:
        assignment = _assignment_for(request, assignment_id)
        assignment.record_activity()
        return Response(self.body(assignment))


def _field_names(form: Any) -> dict[str, str]:
    """Form field name -> "<unit>.<field>" for error messages."""
    return {name: api_name(name) for name in form.fields}


class AnswersInputSerializer(serializers.Serializer):
    answers = AnswerSerializer(many=True)


class AssignmentDraftApi(APIView):
    """Keep what is there so far: any text, and only valid choices (like the page)."""

    @extend_schema(
        operation_id="assignments_draft",
        request=AnswersInputSerializer,
        responses={200: AssignmentDetailApi.OutputSerializer, 409: ErrorSerializer, **ERRORS},
    )
    def post(self, request: Request, assignment_id: int) -> Response:
        assignment = _assignment_for(request, assignment_id)
        answers = valid(AnswersInputSerializer, request.data)["answers"]
        values = answers_form(assignment, answers).draft_values()
        if not assignment.save_draft(
            values, guideline_version=assignment.item.project.instructions_version
        ):
            raise ApiError(409, "already_submitted", "This assignment was already submitted.")
        return Response(AssignmentDetailApi.body(assignment))


class AssignmentSubmitApi(APIView):
    @extend_schema_serializer(component_name="AssignmentSubmitInput")
    class InputSerializer(AnswersInputSerializer):
        edit = serializers.BooleanField(
            default=False, help_text="Replace a previous submission (like editing on the page)"
        )

    @extend_schema(
        operation_id="assignments_submit",
        request=InputSerializer,
        responses={200: AssignmentDetailApi.OutputSerializer, 409: ErrorSerializer, **ERRORS},
    )
    def post(self, request: Request, assignment_id: int) -> Response:
        assignment = _assignment_for(request, assignment_id)
        data = valid(self.InputSerializer, request.data)
        form = answers_form(assignment, data["answers"])
        if not form.is_valid():
            raise form_error(form, field_names=_field_names(form))
        version = assignment.item.project.instructions_version
        if data["edit"]:
            assignment.resubmit(form.answer_values(), guideline_version=version)
        elif not assignment.submit(form.answer_values(), guideline_version=version):
            raise ApiError(
                409,
                "already_submitted",
                "This assignment was already submitted; send edit=true to change it.",
            )
        _answered(request, assignment)
        return Response(AssignmentDetailApi.body(assignment))


class AssignmentSkipApi(APIView):
    @extend_schema_serializer(component_name="AssignmentSkipInput")
    class InputSerializer(serializers.Serializer):
        reason = serializers.CharField(max_length=500)

    @extend_schema(
        operation_id="assignments_skip",
        request=InputSerializer,
        responses={200: AssignmentDetailApi.OutputSerializer, 409: ErrorSerializer, **ERRORS},
    )
    def post(self, request: Request, assignment_id: int) -> Response:
        assignment = _assignment_for(request, assignment_id)
        form = forms.SkipForm(valid(self.InputSerializer, request.data))
        if not form.is_valid():
            raise form_error(form)
        if not assignment.skip(form.cleaned_data["reason"]):
            raise ApiError(409, "already_submitted", "A submitted assignment cannot be skipped.")
        _answered(request, assignment)
        return Response(AssignmentDetailApi.body(assignment))
