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

from .. import hiring, kinds
from ..kinds.base import api_name
from ..models import Assignment, Membership
from ..operations import WITHDRAWN, WITHDRAWN_MESSAGE, Action, Result, answer, answers_data
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


def _assignment_for(request: Request, assignment_id: int) -> tuple[Assignment, Membership]:
    """The caller's assignment and their membership of its project; 409 when they may
    not work on it now."""
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
        raise _held(held)
    return assignment, membership


def _held(reason: str) -> ApiError:
    return ApiError(
        409,
        f"hiring_{reason}",
        {
            "training": "Finish your training items first (or wait for a researcher to let"
            " you through).",
            "returned": "Your time for this study ran out: your open items went back to the pool.",
            "screened_out": "You were screened out of this study: your answers cannot change.",
            "completed": "You completed this study: your answers cannot change any more.",
        }.get(reason, "Your work on this project is paused: no new items."),
    )


def _answer(
    assignment: Assignment, membership: Membership, data: dict[str, Any], action: Action
) -> Response:
    """operations.answer, its outcome as the API's response."""
    outcome = answer(assignment, membership, data, action)
    if outcome.result == Result.REFUSED:
        if outcome.reason == WITHDRAWN:
            raise ApiError(409, WITHDRAWN, WITHDRAWN_MESSAGE)
        raise _held(outcome.reason)
    if outcome.result == Result.INVALID:
        assert outcome.form is not None
        names = None if action == Action.SKIP else _field_names(outcome.form)
        raise form_error(outcome.form, field_names=names)
    if outcome.result == Result.CONFLICT or (
        outcome.result == Result.UNCHANGED and action == Action.SUBMIT
    ):
        raise ApiError(
            409,
            "already_submitted",
            {
                Action.SKIP: "A submitted assignment cannot be skipped.",
                Action.DRAFT: "This assignment was already submitted.",
            }.get(action, "This assignment was already submitted; send edit=true to change it."),
        )
    return Response(AssignmentDetailApi.body(assignment))


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
        assignment, _ = _assignment_for(request, assignment_id)
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
        assignment, membership = _assignment_for(request, assignment_id)
        answers = valid(AnswersInputSerializer, request.data)["answers"]
        return _answer(assignment, membership, answers_data(answers), Action.DRAFT)


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
        assignment, membership = _assignment_for(request, assignment_id)
        data = valid(self.InputSerializer, request.data)
        action = Action.RESUBMIT if data["edit"] else Action.SUBMIT
        return _answer(assignment, membership, answers_data(data["answers"]), action)


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
        assignment, membership = _assignment_for(request, assignment_id)
        data = valid(self.InputSerializer, request.data)
        return _answer(assignment, membership, data, Action.SKIP)
