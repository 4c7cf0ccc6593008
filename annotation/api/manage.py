"""Managing a running study over the API (researchers of the project only; anyone else
gets 404): remove a member, withdraw or reassign items, delete items or the project,
list and restore deletions. The same functions as the manage page (annotation.manage)."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import manage
from ..models import Deletion, Membership, Project
from .common import ERRORS, READ_ERRORS, researcher_project, user_of, valid
from .errors import ApiError

MAX_IDS = 100_000


class MemberRemovedSerializer(serializers.Serializer):
    member = serializers.CharField(help_text="the pseudonym, kept with their answers")
    freed = serializers.IntegerField(help_text="unsubmitted items back to the pool")


class AssignmentWithdrawSerializer(serializers.Serializer):
    member = serializers.IntegerField(help_text="the membership id whose items are taken")
    items = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        allow_null=True,
        default=None,
        max_length=MAX_IDS,
        help_text="item ids; null or absent: all their unsubmitted items",
    )
    to = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="a membership id; null: the pool"
    )


class AssignmentWithdrawnSerializer(serializers.Serializer):
    withdrawn = serializers.IntegerField()
    reassigned = serializers.IntegerField()
    kept = serializers.IntegerField(help_text="submitted or skipped: never taken")


class ItemDeleteSerializer(serializers.Serializer):
    items = serializers.ListField(
        child=serializers.IntegerField(min_value=1), min_length=1, max_length=MAX_IDS
    )


class ProjectDeletionSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="null: nothing left to delete")
    whole_project = serializers.BooleanField()
    at = serializers.DateTimeField(allow_null=True)
    purge_after = serializers.DateTimeField(allow_null=True)
    summary = serializers.DictField(child=serializers.IntegerField())


class ProjectRestoredSerializer(serializers.Serializer):
    restored = serializers.BooleanField(help_text="false: restored already, nothing changed")


def _row(d: Deletion | None) -> dict[str, Any]:
    if d is None:
        return {"id": None, "whole_project": False, "at": None, "purge_after": None, "summary": {}}
    return {
        "id": d.pk,
        "whole_project": d.whole_project,
        "at": d.at,
        "purge_after": manage.purge_after(d),
        "summary": d.summary,
    }


def _member(project: Project, pk: int, field: str) -> Membership:
    m = project.memberships.filter(pk=pk).first()
    if m is None:
        raise ApiError(400, "invalid", f"No member {pk} in this project.", field=field)
    return m


class RemoveMemberApi(APIView):
    @extend_schema(
        operation_id="members_remove",
        request=None,
        responses={200: MemberRemovedSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int, membership_id: int) -> Response:
        project = researcher_project(request, project_id)
        member = get_object_or_404(Membership, project=project, pk=membership_id)
        try:
            freed = manage.remove_member(member, user_of(request))
        except manage.ManageError as e:
            raise ApiError(400, "invalid", str(e)) from e
        return Response({"member": member.pseudonym, "freed": freed})


class WithdrawApi(APIView):
    @extend_schema(
        operation_id="items_withdraw",
        request=AssignmentWithdrawSerializer,
        responses={200: AssignmentWithdrawnSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        data = valid(AssignmentWithdrawSerializer, request.data)
        member = _member(project, data["member"], "member")
        to = _member(project, data["to"], "to") if data["to"] is not None else None
        try:
            return Response(manage.withdraw(project, member, data["items"], to))
        except manage.ManageError as e:
            raise ApiError(400, "invalid", str(e), field="to") from e


class DeleteItemsApi(APIView):
    @extend_schema(
        operation_id="items_delete",
        request=ItemDeleteSerializer,
        responses={200: ProjectDeletionSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        ids = valid(ItemDeleteSerializer, request.data)["items"]
        return Response(_row(manage.delete_items(project, ids, user_of(request))))


class DeleteProjectApi(APIView):
    @extend_schema(
        operation_id="projects_delete",
        request=None,
        responses={200: ProjectDeletionSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        return Response(_row(manage.delete_project(project, user_of(request))))


class DeletionListApi(APIView):
    @extend_schema(
        operation_id="deletions_list",
        responses={200: ProjectDeletionSerializer(many=True), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = _any_project(request, project_id)
        return Response([_row(d) for d in project.deletions.all()])


def _any_project(request: Request, project_id: int) -> Project:
    """A project the caller researches, deleted or not (to restore it)."""
    user = user_of(request)
    return get_object_or_404(
        Project.objects.for_researcher(user) | Project.objects.for_researcher(user, deleted=True),
        pk=project_id,
    )


class ProjectArchiveSerializer(serializers.Serializer):
    archived = serializers.BooleanField(help_text="true: closed to annotators and joins")


class ProjectArchivedSerializer(serializers.Serializer):
    archived = serializers.BooleanField()
    changed = serializers.BooleanField(help_text="false: it was so already")


class ArchiveApi(APIView):
    @extend_schema(
        operation_id="projects_archive",
        request=ProjectArchiveSerializer,
        responses={200: ProjectArchivedSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        archived = valid(ProjectArchiveSerializer, request.data)["archived"]
        changed = manage.archive_project(project, archived)
        return Response({"archived": project.archived_at is not None, "changed": changed})


class RestoreApi(APIView):
    @extend_schema(
        operation_id="deletions_restore",
        request=None,
        responses={200: ProjectRestoredSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int, deletion_id: int) -> Response:
        project = _any_project(request, project_id)
        return Response({"restored": manage.restore(deletion_id, project) is not None})
