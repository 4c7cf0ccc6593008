"""Prolific through its API (issue 41), for a project's researchers: the project's
workspace (the operator's, by name), and per invite its study: create the draft, publish,
pause, pull submissions, approve, reject or return (on confirmation), pay bonuses,
reconcile. The page does the same through `prolific.services.act`."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..hiring import HiringPolicy, Invite
from ..prolific import services, workspaces
from ..prolific.client import REJECTION_CATEGORIES, ProlificError, WrongToken
from ..prolific.models import ProlificStudy
from ..prolific.urls import study_url
from .common import ERRORS, READ_ERRORS, researcher_project, user_of, valid
from .errors import ApiError


@extend_schema_serializer(component_name="ProlificWorkspace")
class WorkspaceSerializer(serializers.Serializer):
    workspace = serializers.CharField(allow_blank=True, help_text="a name the operator set up")
    workspaces = serializers.ListField(child=serializers.CharField(), read_only=True)


class ProlificWorkspaceApi(APIView):
    @staticmethod
    def _row(project_id: int) -> dict[str, Any]:
        policy = HiringPolicy.objects.get(project_id=project_id)
        return {"workspace": policy.prolific_workspace, "workspaces": list(workspaces.workspaces())}

    @extend_schema(
        operation_id="prolific_workspace", responses={200: WorkspaceSerializer, **READ_ERRORS}
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        HiringPolicy.of(project)
        return Response(self._row(project.pk))

    @extend_schema(
        operation_id="prolific_workspace_set",
        request=WorkspaceSerializer,
        responses={200: WorkspaceSerializer, **ERRORS},
    )
    def put(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        try:
            services.set_workspace(project, valid(WorkspaceSerializer, request.data)["workspace"])
        except ValueError as e:
            raise ApiError(400, "invalid", str(e), field="workspace") from None
        return Response(self._row(project.pk))


@extend_schema_serializer(component_name="ProlificAction")
class ActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=list(services.ACTIONS))
    # create
    name = serializers.CharField(required=False, max_length=200, default="")
    description = serializers.CharField(required=False, max_length=5000, default="")
    reward_cents = serializers.IntegerField(
        required=False, min_value=1, max_value=services.MAX_REWARD_CENTS, default=None
    )
    places = serializers.IntegerField(
        required=False, min_value=1, max_value=services.MAX_PLACES, default=None
    )
    estimated_minutes = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=24 * 60,
        default=None,
        help_text="default: the pilot's median active time x the quota",
    )
    # reject / return / release
    submissions = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, default=list, max_length=1000
    )
    category = serializers.ChoiceField(
        choices=list(REJECTION_CATEGORIES), required=False, default=""
    )
    message = serializers.CharField(required=False, max_length=5000, default="")
    reasons = serializers.ListField(
        child=serializers.CharField(max_length=500), required=False, default=list, max_length=20
    )
    confirm = serializers.BooleanField(
        required=False,
        default=False,
        help_text="reject, return, release: without it nothing is sent",
    )


@extend_schema_serializer(component_name="ProlificState")
class StateSerializer(serializers.Serializer):
    study = serializers.DictField(allow_null=True)
    submissions = serializers.ListField(child=serializers.DictField())
    bonuses = serializers.ListField(child=serializers.DictField())
    result = serializers.JSONField(required=False)


class ProlificStudyApi(APIView):
    @staticmethod
    def _invite(request: Request, project_id: int, invite_id: int) -> Invite:
        project = researcher_project(request, project_id)
        return get_object_or_404(Invite, project=project, pk=invite_id)

    @extend_schema(operation_id="prolific_study", responses={200: StateSerializer, **READ_ERRORS})
    def get(self, request: Request, project_id: int, invite_id: int) -> Response:
        return Response(services.state(self._invite(request, project_id, invite_id)))

    @extend_schema(
        operation_id="prolific_study_action",
        request=ActionSerializer,
        responses={200: StateSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int, invite_id: int) -> Response:
        invite = self._invite(request, project_id, invite_id)
        data = valid(ActionSerializer, request.data)
        if data["action"] == "create" and not (
            data["name"] and data["description"] and data["reward_cents"]
        ):
            raise ApiError(400, "invalid", "create needs name, description and reward_cents.")
        try:
            result = services.act(
                invite,
                data["action"],
                data,
                by=user_of(request),
                url=study_url(invite, request),
            )
        except ValueError as e:
            raise ApiError(400, "invalid", str(e)) from None
        except WrongToken as e:
            raise ApiError(502, "prolific_token", str(e)) from None
        except ProlificError as e:
            raise ApiError(502, "prolific", str(e)) from None
        if isinstance(result, ProlificStudy):
            result = {"study_id": result.study_id, "status": result.status}
        return Response({**services.state(invite), "result": result})
