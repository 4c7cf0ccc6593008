"""REST endpoints. Each class calls the same lookups, forms, model methods and functions
as the HTML views; permissions and blinding are decided here, as in the pages:
objects a user may not see answer 404, exactly like the pages.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Count, Q, QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import endpoints, exports, formats, forms, gold, hiring, kinds
from ..import_jobs import fail_if_abandoned, is_large, start_import
from ..ingest import FORMATS, ImportFailed, check_upload_size, decode, import_file, import_upload
from ..kinds.base import api_name
from ..labelstudio import answers_data
from ..members import CREATE_PROJECTS, MemberError, add_member
from ..models import Assignment, Document, ImportJob, Item, Membership, PipelineRun, Project
from ..tasks import cancel_run, requeue_stale_chunks, retry_run, run_config, start_run
from ..views.common import assignment_for_annotator, membership_for, project_for_researcher
from .errors import ApiError, ErrorSerializer, form_error, import_error, page_of, paginated

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


def _researcher_project(request: Request, project_id: int) -> Project:
    return project_for_researcher(request, project_id)  # type: ignore[arg-type]


def _valid(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    s = serializer_class(data=data)
    s.is_valid(raise_exception=True)
    return dict(s.validated_data)


# --- projects and members ----------------------------------------------------------


class ProjectListApi(APIView):
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        description = serializers.CharField(required=False, allow_blank=True, default="")
        instructions = serializers.CharField(required=False, allow_blank=True, default="")

    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        name = serializers.CharField()
        description = serializers.CharField()
        instructions = serializers.CharField()
        instructions_version = serializers.IntegerField()
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
        projects = Project.objects.filter(memberships__user=request.user).distinct()
        if request.user.is_superuser:
            projects = Project.objects.all()
        return paginated(
            request, self, self._rows(request.user, projects.order_by("id")), self.OutputSerializer
        )

    @extend_schema(
        operation_id="projects_create",
        request=InputSerializer,
        responses={201: OutputSerializer, **ERRORS},
    )
    def post(self, request: Request) -> Response:
        if not request.user.has_perm(CREATE_PROJECTS):
            raise ApiError(403, "permission_denied", "You may not create projects.")
        data = _valid(self.InputSerializer, request.data)
        form = forms.ProjectForm(data)
        if not form.is_valid():
            raise form_error(form)
        project = Project.create_with_owner(form.save(commit=False), request.user)
        return Response(
            self._rows(request.user, Project.objects.filter(pk=project.pk))[0], status=201
        )


class MemberListApi(APIView):
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
        project = _researcher_project(request, project_id)
        rows = [self._row(m) for m in project.memberships.select_related("user")]
        return paginated(request, self, rows, self.OutputSerializer)

    @extend_schema(
        operation_id="members_add",
        request=InputSerializer,
        responses={201: OutputSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = _researcher_project(request, project_id)
        form = forms.MemberForm(_valid(self.InputSerializer, request.data))
        if not form.is_valid():
            raise form_error(form)
        try:
            membership = add_member(project=project, by=request.user, **form.cleaned_data)
        except MemberError as e:
            raise ApiError(e.status, e.code, e.message, field=e.field) from e
        return Response(self._row(membership), status=201)


class InstructionsAcknowledgeApi(APIView):
    class OutputSerializer(serializers.Serializer):
        instructions_version = serializers.IntegerField()
        acknowledged_version = serializers.IntegerField()

    @extend_schema(
        operation_id="instructions_acknowledge",
        request=None,
        responses={200: OutputSerializer, **READ_ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        membership = membership_for(request, project_id, Membership.ANNOTATOR)  # type: ignore[arg-type]
        membership.acknowledge()
        return Response(
            {
                "instructions_version": membership.project.instructions_version,
                "acknowledged_version": membership.acknowledged_version,
            }
        )


# --- documents, systems, items -----------------------------------------------------


class DocumentListApi(APIView):
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
        project = _researcher_project(request, project_id)
        return paginated(
            request,
            self,
            Document.objects.filter(project=project).order_by("id"),
            self.OutputSerializer,
        )


class DocumentImportApi(APIView):
    """Bulk import in any format `ingest` reads; validated whole, written atomically."""

    parser_classes = [MultiPartParser, FormParser, JSONParser]

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
        format = serializers.ChoiceField(choices=["auto", *FORMATS], default="auto")
        system = serializers.CharField(required=False, allow_blank=True, default="")
        source_model = serializers.CharField(required=False, allow_blank=True, default="")
        verifier = serializers.CharField(required=False, allow_blank=True, default="")
        domain = serializers.CharField(
            required=False,
            allow_blank=True,
            default="",
            help_text="FELM: the domain of a per-domain file",
        )
        update = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Replace stored documents and lists that differ",
        )

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if not attrs.get("file") and not attrs.get("content"):
                raise serializers.ValidationError({"file": "Send a file or the content."})
            return attrs

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
        responses={201: OutputSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = _researcher_project(request, project_id)
        data = _valid(self.InputSerializer, request.data)
        options = {
            "fmt": data["format"],
            "system": data["system"].strip(),
            "source_model": data["source_model"].strip(),
            "verifier": data["verifier"].strip(),
            "domain": data["domain"].strip(),
            "update": data["update"],
        }
        try:
            if data.get("mapping"):
                options["mapping"] = decode(data["mapping"].read(), data["mapping"].name)
                options["mapping_file"] = data["mapping"].name
            if data.get("file") and is_large(data["file"]):
                check_upload_size(data["file"])
                job = start_import(
                    project=project, user=request.user, upload=data["file"], options=options
                )
                return Response(_job_body(job), status=202)
            if data.get("file"):
                summary = import_upload(project=project, upload=data["file"], **options)
            else:
                summary = import_file(
                    project=project, text=data["content"], file=data["filename"], **options
                )
        except ImportFailed as e:
            raise import_error(e.errors) from None
        body = {k: v for k, v in vars(summary).items() if k in self.OutputSerializer().fields}
        body["warnings"] = [vars(w) for w in summary.warnings]
        return Response({**body, "summary": str(summary)}, status=201)


def _job_body(job: ImportJob) -> dict[str, Any]:
    return {
        "job": job.pk,
        "status": job.status,
        "phase": job.phase,
        "records": job.records,
        "summary": job.summary,
        "errors": job.errors,
        "url": f"/api/projects/{job.project_id}/imports/{job.pk}/",
    }


class ImportJobApi(APIView):
    """A background import (an upload above IMPORT_BACKGROUND_MB): its status."""

    @extend_schema(operation_id="import_job", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request: Request, project_id: int, job_id: int) -> Response:
        project = _researcher_project(request, project_id)
        job = get_object_or_404(ImportJob, pk=job_id, project=project)
        fail_if_abandoned(job)
        return Response(_job_body(job))


class SystemListApi(APIView):
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
        project = _researcher_project(request, project_id)
        systems = project.systems.annotate(n_claim_lists=Count("claim_lists")).order_by("id")
        return paginated(request, self, systems, self.OutputSerializer)


ITEM_STATUSES = ["unassigned", "open", "done"]


class ItemListApi(APIView):
    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        kind = serializers.CharField()
        document = serializers.CharField(source="document.external_id")
        status = serializers.ChoiceField(choices=ITEM_STATUSES)
        assigned = serializers.IntegerField()
        submitted = serializers.IntegerField()
        skipped = serializers.IntegerField()
        system_a = serializers.CharField(source="list_a.system.name", allow_null=True, default=None)
        system_b = serializers.CharField(source="list_b.system.name", allow_null=True, default=None)
        claim = serializers.IntegerField(source="claim_id", allow_null=True)
        created_at = serializers.DateTimeField()

    @extend_schema(
        operation_id="items_list",
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, enum=kinds.names()),
            OpenApiParameter(
                "status",
                OpenApiTypes.STR,
                enum=ITEM_STATUSES,
                description="unassigned; open (an assignment is pending or a "
                "draft); done (every assignment submitted or skipped)",
            ),
            *PAGE_PARAMS,
        ],
        responses={200: page_of(OutputSerializer, "PaginatedItemList"), **ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = _researcher_project(request, project_id)
        open_ = Q(assignments__status__in=[Assignment.PENDING, Assignment.DRAFT])
        items = (
            Item.objects.filter(project=project)
            .select_related("document", "list_a__system", "list_b__system")
            .annotate(
                assigned=Count("assignments"),
                n_open=Count("assignments", filter=open_),
                submitted=Count("assignments", filter=Q(assignments__status=Assignment.SUBMITTED)),
                skipped=Count("assignments", filter=Q(assignments__status=Assignment.SKIPPED)),
            )
            .order_by("id")
        )
        kind = request.query_params.get("kind")
        if kind:
            if kind not in kinds.names():
                raise ApiError(400, "invalid_choice", f"Unknown kind {kind!r}.", field="kind")
            items = items.filter(kind=kind)
        status = request.query_params.get("status")
        if status == "unassigned":
            items = items.filter(assigned=0)
        elif status == "open":
            items = items.filter(n_open__gt=0)
        elif status == "done":
            items = items.filter(assigned__gt=0, n_open=0)
        elif status:
            raise ApiError(400, "invalid_choice", f"Unknown status {status!r}.", field="status")
        for item in items:  # cheap: the page is built from the same annotated rows
            item.status = "unassigned" if not item.assigned else "open" if item.n_open else "done"
        return paginated(request, self, list(items), self.OutputSerializer)


class PolicyInputSerializer(serializers.Serializer):
    """How the new items are spread over the project's annotators."""

    k = serializers.IntegerField(min_value=1, default=2, help_text="annotators per overlap item")
    all_annotators = serializers.BooleanField(default=False, help_text="k = all annotators")
    fraction = serializers.FloatField(
        min_value=0, max_value=1, default=0.2, help_text="share of items with k annotators"
    )
    seed = serializers.IntegerField(default=0, min_value=-(2**62), max_value=2**62)


class ItemsCreatedSerializer(serializers.Serializer):
    items_created = serializers.IntegerField()
    assignments_created = serializers.IntegerField()
    item_ids = serializers.ListField(child=serializers.IntegerField())


def _serializer_field(field: Any) -> serializers.Field:
    """A kind's items-form field as an (optional) API input field, for the schema."""
    from django import forms as django_forms

    if isinstance(field, django_forms.ModelChoiceField):
        return serializers.IntegerField(
            required=False, help_text=f"{field.label or 'System'} (a system id)"
        )
    if isinstance(field, django_forms.MultipleChoiceField):
        return serializers.ListField(
            child=serializers.ChoiceField(choices=[c for c, _ in field.choices]), required=False
        )
    if isinstance(field, django_forms.IntegerField):
        return serializers.IntegerField(
            required=False, min_value=field.min_value, help_text=str(field.label or "")
        )
    return serializers.CharField(required=False)


def _items_input() -> type[serializers.Serializer]:
    """Policy fields plus every kind's own fields (the items forms of the project page)."""
    policy = set(PolicyInputSerializer().fields)
    extra: dict[str, Any] = {}
    for spec in kinds.all_specs():
        for name, field in spec.items_form(Project(pk=0)).fields.items():
            if name not in policy:
                extra.setdefault(name, _serializer_field(field))
    return type("ItemsCreateInput", (PolicyInputSerializer,), extra)


class ItemsCreateApi(APIView):
    """Items of one kind, then the assignment policy: k annotators on a seeded fraction f of
    the items, one elsewhere. comparison: one item per document with lists from both
    systems (system_a, system_b); verification: a seeded sample of n claims with search
    results of one system (system, n, stratify); segment: one item per document; atomic:
    one item per claim list of one system (system)."""

    InputSerializer = _items_input()

    @extend_schema(
        operation_id="items_create",
        request=InputSerializer,
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, OpenApiParameter.PATH, enum=kinds.names())
        ],
        responses={201: ItemsCreatedSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int, kind: str) -> Response:
        project = _researcher_project(request, project_id)
        if kind not in kinds.names():
            raise ApiError(
                404, "not_found", f"Unknown kind {kind!r}; one of {', '.join(kinds.names())}."
            )
        data = _valid(self.InputSerializer, request.data)
        form = kinds.get(kind).items_form(project, data)
        if not form.is_valid():
            raise form_error(form)
        try:
            items, n = kinds.create_items(project, form)
        except ValueError as e:
            raise ApiError(400, "invalid", str(e)) from None
        return Response(
            {
                "items_created": len(items),
                "assignments_created": n,
                "item_ids": [i.pk for i in items],
            },
            status=201,
        )


# --- annotator: queue, assignment, draft, submit -------------------------------------


class AnswerSerializer(serializers.Serializer):
    unit = serializers.CharField(
        max_length=50, help_text='"item", "evidence:<rank>" or "segment:<position>"'
    )
    field = serializers.CharField(max_length=50)
    value = serializers.CharField(allow_blank=True, trim_whitespace=False)


def _own_assignments(user: User) -> QuerySet[Assignment]:
    # Like assignment_for_annotator: only while the user is still an annotator there.
    return Assignment.objects.filter(
        annotator=user,
        item__project__memberships__user=user,
        item__project__memberships__role=Membership.ANNOTATOR,
    ).select_related("item__project", "item__document")


class AssignmentListApi(APIView):
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
        rows = _own_assignments(request.user).order_by("item__project_id", "position", "id")
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
    assignment = assignment_for_annotator(request, assignment_id)  # type: ignore[arg-type]
    membership = membership_for(request, assignment.item.project_id, Membership.ANNOTATOR)  # type: ignore[arg-type]
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
    """Training results and the automatic pause follow each answer (hiring.py)."""
    hiring.after_submit(membership_for(request, assignment.item.project_id, Membership.ANNOTATOR))  # type: ignore[arg-type]


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
    OutputSerializer = type(
        "OutputSerializer",
        (AssignmentSerializer,),
        {
            key: serializers.JSONField(allow_null=True, help_text=text)
            for spec in kinds.all_specs()
            for key, text in spec.view_keys.items()
        },
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
        assignment.touch()
        assignment.save(update_fields=["started_at", "last_activity_at", "active_seconds"])
        return Response(self.body(assignment))


def answer_form(assignment: Assignment, answers: list[dict[str, str]]) -> Any:
    """The HTML page's form for this kind, bound to the answers sent to the API."""
    return kinds.answer_form(assignment, answers_data(answers))


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
        answers = _valid(AnswersInputSerializer, request.data)["answers"]
        values = answer_form(assignment, answers).draft_values()
        if not assignment.save_draft(
            values, guideline_version=assignment.item.project.instructions_version
        ):
            raise ApiError(409, "already_submitted", "This assignment was already submitted.")
        return Response(AssignmentDetailApi.body(assignment))


class AssignmentSubmitApi(APIView):
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
        data = _valid(self.InputSerializer, request.data)
        form = answer_form(assignment, data["answers"])
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
    class InputSerializer(serializers.Serializer):
        reason = serializers.CharField(max_length=500)

    @extend_schema(
        operation_id="assignments_skip",
        request=InputSerializer,
        responses={200: AssignmentDetailApi.OutputSerializer, 409: ErrorSerializer, **ERRORS},
    )
    def post(self, request: Request, assignment_id: int) -> Response:
        assignment = _assignment_for(request, assignment_id)
        form = forms.SkipForm(_valid(self.InputSerializer, request.data))
        if not form.is_valid():
            raise form_error(form)
        if not assignment.skip(form.cleaned_data["reason"]):
            raise ApiError(409, "already_submitted", "A submitted assignment cannot be skipped.")
        _answered(request, assignment)
        return Response(AssignmentDetailApi.body(assignment))


# --- researcher: answers, gold values, exports ---------------------------------------


def _moment(value: str, name: str, *, end: bool) -> dt.datetime:
    moment = parse_datetime(value)
    if moment is None:
        day = parse_date(value)
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
        project = _researcher_project(request, project_id)
        rows = filter_rows(exports.long_rows(project), request.query_params)
        return paginated(request, self, rows, self.OutputSerializer)


def filter_rows(rows: list[dict[str, Any]], params: Any) -> list[dict[str, Any]]:
    for name in ("kind", "field", "annotator"):
        if params.get(name):
            rows = [r for r in rows if r[name] == params[name]]
    if params.get("since"):
        since = _moment(params["since"], "since", end=False)
        rows = [r for r in rows if r["answered_at"] and parse_datetime(r["answered_at"]) >= since]
    if params.get("until"):
        until = _moment(params["until"], "until", end=True)
        rows = [r for r in rows if r["answered_at"] and parse_datetime(r["answered_at"]) <= until]
    return rows


class GoldListApi(APIView):
    """The gold value of every unit and field, with where it comes from."""

    class OutputSerializer(serializers.Serializer):
        item = serializers.IntegerField()
        kind = serializers.CharField()
        unit = serializers.CharField()
        field = serializers.CharField()
        value = serializers.CharField(allow_null=True)
        provenance = serializers.ChoiceField(
            choices=[gold.UNANIMOUS, gold.MAJORITY, gold.ADJUDICATED, gold.TIE_RULE, gold.TIE]
        )
        votes = serializers.DictField(child=serializers.IntegerField())
        disagreement = serializers.FloatField()
        note = serializers.CharField()

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
        project = _researcher_project(request, project_id)
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
            OpenApiParameter(
                "system",
                OpenApiTypes.STR,
                description="veriscore.jsonl: the extractor whose claims to write "
                "(default: the only one)",
            ),
            OpenApiParameter(
                "kind",
                OpenApiTypes.STR,
                enum=kinds.names(),
                description="answers.csv / wide.csv: only this kind",
            ),
        ],
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/jsonl"): OpenApiTypes.STR,
            **ERRORS,
        },
    )
    def get(self, request: Request, project_id: int, name: str) -> HttpResponse:
        project = _researcher_project(request, project_id)
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


def _name_components() -> None:
    """Give each nested Input/OutputSerializer a schema name from its view
    (ProjectListApi.OutputSerializer -> "ProjectList"), so the names are unique."""
    for view in list(globals().values()):
        if not (
            isinstance(view, type) and issubclass(view, APIView) and view.__name__.endswith("Api")
        ):
            continue
        base = view.__name__.removesuffix("Api")
        for attr, suffix in (("InputSerializer", "Input"), ("OutputSerializer", "")):
            serializer = view.__dict__.get(attr)
            if serializer is not None:
                serializer.Meta = type("Meta", (), {"ref_name": base + suffix})


_name_components()


class ReportApi(APIView):
    """The report page as JSON: agreement, verification, preference and effort tables."""

    @extend_schema(
        operation_id="report_retrieve",
        parameters=[
            OpenApiParameter(
                "bootstrap",
                OpenApiTypes.INT,
                description="bootstrap resamples for the CIs (0-2000, default 1000)",
            ),
            OpenApiParameter("seed", OpenApiTypes.INT),
        ],
        responses={200: OpenApiTypes.OBJECT, **ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        import json

        from .. import reports

        project = _researcher_project(request, project_id)
        try:
            bootstrap = int(request.query_params.get("bootstrap", 1000))
            seed = int(request.query_params.get("seed", 0))
        except ValueError:
            raise ApiError(400, "invalid", "bootstrap and seed must be integers.") from None
        if not 0 <= bootstrap <= 2000 or abs(seed) > 2**31:
            raise ApiError(400, "invalid", "bootstrap must be 0-2000.", field="bootstrap")
        report = reports.build_report(project, bootstrap=bootstrap, seed=seed, with_charts=False)
        return Response(json.loads(reports.report_json(report)))


_name_components()


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
    errors = serializers.ListField(child=serializers.CharField())
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

    class InputSerializer(serializers.Serializer):
        extractor = serializers.ChoiceField(choices=["veriscore", "atomic"], default="veriscore")
        label_mode = serializers.ChoiceField(choices=["binary", "ternary"], default="binary")
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

    @extend_schema(
        operation_id="pipeline_runs_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of(PipelineRunSerializer, "PaginatedPipelineRunList"), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = _researcher_project(request, project_id)
        return paginated(request, self, list(project.pipeline_runs.all()), PipelineRunSerializer)

    @extend_schema(
        operation_id="pipeline_runs_create",
        request=InputSerializer,
        responses={201: PipelineRunSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = _researcher_project(request, project_id)
        given = request.data if isinstance(request.data, dict) else {}
        unknown = sorted(set(given) - set(self.InputSerializer().fields))
        if unknown:  # e.g. base_url or api_key: a run names an endpoint and nothing else
            raise ApiError(
                400,
                "unknown_field",
                f"Unknown field {unknown[0]!r}; a run chooses an endpoint by name.",
                field=unknown[0],
            )
        data = _valid(self.InputSerializer, request.data)
        form = forms.PipelineRunForm(
            {k: v for k, v in data.items() if v is not None and v is not False}
        )
        if not form.is_valid():
            raise form_error(form)
        if not project.documents.exists():
            raise ApiError(
                400, "no_documents", "The project has no documents to run the pipeline on."
            )
        run = start_run(project=project, user=request.user, config=run_config(**form.cleaned_data))
        return Response(PipelineRunSerializer(run).data, status=201)


class PipelineRunDetailApi(APIView):
    """A run's status and progress; when finished, `scores` holds F1@K per response and
    VERIScore per (model, domain)."""

    class OutputSerializer(PipelineRunSerializer):
        scores = serializers.JSONField(allow_null=True)

    @extend_schema(
        operation_id="pipeline_runs_retrieve", responses={200: OutputSerializer, **READ_ERRORS}
    )
    def get(self, request: Request, project_id: int, run_id: int) -> Response:
        project = _researcher_project(request, project_id)
        run = PipelineRun.objects.filter(pk=run_id, project=project).first()
        if run is None:
            raise ApiError(404, "not_found", "No such pipeline run.")
        if not run.is_over and requeue_stale_chunks(run):
            run.refresh_from_db()
        return Response(self.OutputSerializer(run).data)


def _run_of(request: Request, project_id: int, run_id: int) -> PipelineRun:
    project = _researcher_project(request, project_id)
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
