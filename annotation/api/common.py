"""Shared by the API modules: error responses of the schema, pagination parameters,
the user-scoped lookups (404 for what the caller may not see) and input validation."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.request import Request

from ..models import Membership, Project
from .errors import ErrorSerializer

ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="Invalid input"),
    401: OpenApiResponse(ErrorSerializer, description="Not authenticated"),
    403: OpenApiResponse(ErrorSerializer, description="Forbidden (CSRF on session writes)"),
    404: OpenApiResponse(ErrorSerializer, description="No such object, or not yours"),
}
READ_ERRORS = {k: v for k, v in ERRORS.items() if k != 400}
PAGE_PARAMS = [
    OpenApiParameter("page", OpenApiTypes.INT, description="Page number (from 1)"),
    OpenApiParameter("page_size", OpenApiTypes.INT, description="Rows per page (max 1000)"),
]


def user_of(request: Request) -> User:
    """The caller: these endpoints need a login (DRF answers 401 before the view runs)."""
    assert isinstance(request.user, User), "an endpoint that needs a login"
    return request.user


def researcher_project(request: Request, project_id: int) -> Project:
    return get_object_or_404(Project.objects.for_researcher(user_of(request)), pk=project_id)


def annotator_membership(request: Request, project_id: int) -> Membership:
    """The caller's annotator membership of the project, or 404."""
    return get_object_or_404(
        # The hire (hiring.hire_of) with it: annotator requests ask for it.
        Membership.objects.select_related("project", "hire"),
        project_id=project_id,
        user=user_of(request),
        role=Membership.ANNOTATOR,
        project__deleted_at=None,
        project__archived_at=None,
    )


def valid(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    s = serializer_class(data=data)
    s.is_valid(raise_exception=True)
    return dict(s.validated_data)
