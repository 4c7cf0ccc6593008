"""Projects, their members, the instructions' worked examples, acknowledging them."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import forms, hiring, kinds, operations
from ..members import CREATE_PROJECTS, MemberError, add_member
from ..models import Membership, Project
from .common import (
    ERRORS,
    PAGE_PARAMS,
    READ_ERRORS,
    annotator_membership,
    researcher_project,
    user_of,
    valid,
)
from .errors import ApiError, form_error, page_of, paginated

# --- projects and members ----------------------------------------------------------


class ProjectListApi(APIView):
    @extend_schema_serializer(component_name="ProjectListInput")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        description = serializers.CharField(required=False, allow_blank=True, default="")
        instructions = serializers.CharField(required=False, allow_blank=True, default="")
        answer_max_chars = serializers.IntegerField(
            required=False,
            default=forms.ANSWER_DEFAULT,
            help_text="The longest free-text answer, in characters "
            f"(1 to {forms.ANSWER_MAX_CHARS:,}).",
        )

    @extend_schema_serializer(component_name="ProjectList")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()
        description = serializers.CharField()
        instructions = serializers.CharField()
        instructions_version = serializers.IntegerField()
        answer_max_chars = serializers.IntegerField()
        role = serializers.CharField(allow_null=True)

    @staticmethod
    def _rows(user: User, projects: QuerySet[Project]) -> list[dict[str, Any]]:
        roles = dict(Membership.objects.filter(user=user).values_list("project_id", "role"))
        return [
            {
                "id": p.pk,
                "name": p.name,
                "description": p.description,
                "instructions": p.instructions,
                "instructions_version": p.instructions_version,
                "answer_max_chars": p.answer_max_chars,
                "role": roles.get(p.pk),
            }
            for p in projects
        ]

    @extend_schema(
        operation_id="projects_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of(OutputSerializer, "PaginatedProjectList"), **READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        user = user_of(request)
        rows = self._rows(user, Project.objects.visible_to(user).order_by("id"))
        return paginated(request, self, rows, self.OutputSerializer)

    @extend_schema(
        operation_id="projects_create",
        request=InputSerializer,
        responses={201: OutputSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        if not user_of(request).has_perm(CREATE_PROJECTS):
            raise ApiError(403, "permission_denied", "You may not create projects.")
        data = valid(self.InputSerializer, request.data)
        form = forms.ProjectForm(data)
        if not form.is_valid():
            raise form_error(form)
        project = Project.create_with_owner(form.save(commit=False), user_of(request))
        return Response(
            self._rows(user_of(request), Project.objects.filter(pk=project.pk))[0], status=201
        )


class ProjectSettingsApi(APIView):
    """A project's settings after its creation: name, description, the longest
    free-text answer (`answer_max_chars`, 1 to 1,000,000 characters) and the gold method
    (`gold_method`: majority, dawid_skene, mace or glad). PUT changes the
    fields it names, validated as the settings page's form; researchers only."""

    @extend_schema_serializer(component_name="ProjectSettingsInput")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, required=False)
        description = serializers.CharField(required=False, allow_blank=True)
        answer_max_chars = serializers.IntegerField(required=False)
        gold_method = serializers.CharField(
            required=False,
            help_text="How gold is decided where no one adjudicated: one of "
            + ", ".join(forms.GOLD_METHODS)
            + " (majority vote, Dawid-Skene, MACE, GLAD).",
        )

    @extend_schema_serializer(component_name="ProjectSettings")
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()
        description = serializers.CharField()
        answer_max_chars = serializers.IntegerField()
        gold_method = serializers.CharField()

    @staticmethod
    def _row(project: Project) -> dict[str, Any]:
        return {
            "id": project.pk,
            "name": project.name,
            "description": project.description,
            "answer_max_chars": project.answer_max_chars,
            "gold_method": project.gold_method,
        }

    @extend_schema(
        operation_id="project_settings_retrieve", responses={200: OutputSerializer, **ERRORS}
    )
    def get(self, request: Request, project_id: int) -> Response:
        return Response(self._row(researcher_project(request, project_id)))

    @extend_schema(
        operation_id="project_settings_update",
        request=InputSerializer,
        responses={200: OutputSerializer, **ERRORS},
    )
    def put(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        data = {**self._row(project), **valid(self.InputSerializer, request.data)}
        form = forms.ProjectSettingsForm(data, instance=project)
        if not form.is_valid():
            raise form_error(form)
        form.save()
        return Response(self._row(project))


class MemberListApi(APIView):
    @extend_schema_serializer(component_name="MemberListInput")
    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        role = serializers.ChoiceField(choices=Membership.ROLES, default=Membership.ANNOTATOR)
        password = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            write_only=True,
            help_text="Only to create a new account; leave out to add an existing user.",
        )

    @extend_schema_serializer(component_name="MemberList")
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        role = serializers.CharField()
        pseudonym = serializers.CharField()
        acknowledged_version = serializers.IntegerField()

    @staticmethod
    def _row(m: Membership) -> dict[str, Any]:
        return {
            "username": m.user.username,
            "role": m.role,
            "pseudonym": m.pseudonym,
            "acknowledged_version": m.acknowledged_version,
        }

    @extend_schema(
        operation_id="members_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of(OutputSerializer, "PaginatedMemberList"), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        rows = [self._row(m) for m in project.memberships.select_related("user")]
        return paginated(request, self, rows, self.OutputSerializer)

    @extend_schema(
        operation_id="members_add",
        request=InputSerializer,
        responses={201: OutputSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        form = forms.MemberForm(valid(self.InputSerializer, request.data))
        if not form.is_valid():
            raise form_error(form)
        try:
            membership = add_member(project=project, by=user_of(request), **form.cleaned_data)
        except MemberError as e:
            raise ApiError(e.status, e.code, e.message, field=e.field) from e
        return Response(self._row(membership), status=201)


class InstructionsAcknowledgeApi(APIView):
    @extend_schema_serializer(component_name="InstructionsAcknowledge")
    class OutputSerializer(serializers.Serializer):
        instructions_version = serializers.IntegerField()
        acknowledged_version = serializers.IntegerField()

    @extend_schema(
        operation_id="instructions_acknowledge",
        request=None,
        responses={200: OutputSerializer, **READ_ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        membership = annotator_membership(request, project_id)
        membership.acknowledge()
        return Response(
            {
                "instructions_version": membership.project.instructions_version,
                "acknowledged_version": membership.acknowledged_version,
            }
        )


@extend_schema_serializer(component_name="InstructionsExampleUnit")
class ExampleUnitSerializer(serializers.Serializer):
    unit = serializers.CharField()
    field = serializers.CharField()
    value = serializers.CharField()


class InstructionExamplesApi(APIView):
    """The worked examples under the project's instructions, for its annotators: each
    item as the assignment API shows one (blinded: texts only), in stored order, with
    its reference answer and the explanation."""

    OutputSerializer = extend_schema_serializer(component_name="InstructionsExample")(
        type(
            "OutputSerializer",
            (serializers.Serializer,),
            {
                "number": serializers.IntegerField(help_text="Example 1, 2, ..."),
                "kind": serializers.CharField(),
                "question": serializers.CharField(),
                "response": serializers.CharField(),
                "reference": ExampleUnitSerializer(many=True),
                "explanation": serializers.CharField(),
                **{
                    key: serializers.JSONField(allow_null=True, help_text=text)
                    for spec in kinds.all_specs()
                    for key, text in spec.view_keys.items()
                },
            },
        )
    )

    @extend_schema(
        operation_id="instruction_examples_list",
        responses={200: OutputSerializer(many=True), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        membership = annotator_membership(request, project_id)
        rows = []
        for n, ex in enumerate(hiring.examples(membership.project), start=1):
            row: dict[str, Any] = {
                "number": n,
                "kind": ex.item.kind,
                "question": ex.item.document.question,
                "response": ex.item.document.response,
                "reference": [
                    {"unit": u, "field": f, "value": v} for (u, f), v in sorted(ex.answers.items())
                ],
                "explanation": ex.explanation,
            }
            row.update({key: None for spec in kinds.all_specs() for key in spec.view_keys})
            row.update(kinds.view(ex.shown))
            rows.append(row)
        return Response(rows)


# --- agreement weights -------------------------------------------------------------


class AgreementWeightsApi(APIView):
    """A researcher's own distances (Krippendorff's squared differences, for alpha) and
    agreement weights (weighted Cohen's kappa per pair) per agreement field, over the
    field's categories in order: {"kind.field": {"distance": [[...]], "weights": [[...]]}}.
    PUT replaces them all ({} clears them); the report uses them."""

    @extend_schema(operation_id="agreement_weights_retrieve", responses={200: dict, **ERRORS})
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        return Response(
            {
                "fields": operations.agreement_fields(project),
                "agreement_weights": project.agreement_weights or {},
            }
        )

    @extend_schema(
        operation_id="agreement_weights_update", request=dict, responses={200: dict, **ERRORS}
    )
    def put(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        try:
            stored = operations.set_agreement_weights(project, request.data)
        except ValueError as error:
            raise ApiError(400, "invalid", str(error)) from None
        return Response(
            {"fields": operations.agreement_fields(project), "agreement_weights": stored}
        )
