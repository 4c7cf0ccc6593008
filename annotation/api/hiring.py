"""Hiring endpoints (issue 18): invite links, the quality policy, training and
known-answer items, the per-annotator quality table, pausing; joining through an
invite; a training item's feedback. The same forms and functions as the pages."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import exceptions, serializers
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import hiring
from ..hiring import Hire, HiringPolicy, Invite, QualityItem
from ..hiring.forms import MAX_INVITE_DAYS, InviteForm, MarkManyForm, PolicyForm
from ..login_throttle import client_address, join_wait
from ..models import Assignment, Item, Membership
from ..reports.annotators import annotator_tables
from ..reports.disagreements import figure_table
from ..reports.tables import table_json
from .common import ERRORS, READ_ERRORS, researcher_project, user_of, valid
from .errors import ApiError, ErrorSerializer, form_error


class InviteSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    url = serializers.CharField(read_only=True)
    note = serializers.CharField(required=False, allow_blank=True, default="")
    cap = serializers.IntegerField(required=False, allow_null=True, min_value=1, default=None)
    expires_in_days = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_INVITE_DAYS,
        default=None,
        write_only=True,
    )
    expires_at = serializers.DateTimeField(read_only=True, allow_null=True)
    revoked = serializers.BooleanField(read_only=True)
    worker_param = serializers.CharField(
        required=False, help_text="default: the market's (PROLIFIC_PID, workerId)"
    )
    market = serializers.ChoiceField(
        choices=hiring.MARKET_CHOICES,
        required=False,
        default="other",
        help_text="whose ids the link takes, in their documented form",
    )
    study_id = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="the market's study id: a join naming another study is refused",
    )
    extra_params = serializers.ListField(
        child=serializers.CharField(), required=False, default=list
    )
    items_per_person = serializers.IntegerField(required=False, min_value=0, default=0)
    completion_code = serializers.CharField(required=False, allow_blank=True, default="")
    completion_url = serializers.CharField(required=False, allow_blank=True, default="")
    screened_out_code = serializers.CharField(required=False, allow_blank=True, default="")
    screened_out_url = serializers.CharField(required=False, allow_blank=True, default="")
    skips_allowed = serializers.IntegerField(required=False, min_value=0, default=0)
    time_limit_minutes = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, default=None
    )
    joined = serializers.IntegerField(read_only=True)


def _invite_row(request: Request, i: Invite) -> dict[str, Any]:
    return {
        "id": i.pk,
        "url": request.build_absolute_uri(reverse("join", kwargs={"key": i.key})),
        "note": i.note,
        "cap": i.cap,
        "expires_at": i.expires_at,
        "revoked": i.revoked,
        "worker_param": i.worker_param,
        "extra_params": i.extra_params,
        "items_per_person": i.items_per_person,
        "completion_code": i.completion_code,
        "completion_url": i.completion_url,
        "screened_out_code": i.screened_out_code,
        "screened_out_url": i.screened_out_url,
        "skips_allowed": i.skips_allowed,
        "time_limit_minutes": i.time_limit_minutes,
        "market": i.market,
        "study_id": i.study_id,
        "joined": i.hires.count(),
    }


class InviteListApi(APIView):
    @extend_schema(
        operation_id="invites_list", responses={200: InviteSerializer(many=True), **READ_ERRORS}
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        return Response([_invite_row(request, i) for i in project.invites.order_by("id")])

    @extend_schema(
        operation_id="invites_create",
        request=InviteSerializer,
        responses={201: InviteSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        form = InviteForm(
            valid(InviteSerializer, request.data),
            instance=Invite(project=project, created_by=request.user),  # type: ignore[misc]
        )
        if not form.is_valid():
            raise form_error(form)
        return Response(_invite_row(request, form.save()), status=201)


class InviteRevokeApi(APIView):
    @extend_schema(
        operation_id="invites_revoke",
        request=None,
        responses={200: InviteSerializer, **READ_ERRORS},
    )
    def post(self, request: Request, project_id: int, invite_id: int) -> Response:
        project = researcher_project(request, project_id)
        invite = get_object_or_404(Invite, project=project, pk=invite_id)
        invite.revoked = True
        invite.save(update_fields=["revoked"])
        return Response(_invite_row(request, invite))


class PolicySerializer(serializers.Serializer):
    pass_mark = serializers.FloatField()
    check_rate = serializers.FloatField()
    pause_below = serializers.FloatField(allow_null=True)
    pause_after = serializers.IntegerField(min_value=0)
    pay_per_item = serializers.DecimalField(
        max_digits=8, decimal_places=2, required=False, help_text="bonus per real item submitted"
    )
    pay_per_correct_check = serializers.DecimalField(
        max_digits=8,
        decimal_places=2,
        required=False,
        help_text="bonus per known-answer check unit answered right",
    )
    join_expiry_minutes = serializers.IntegerField(
        min_value=1,
        allow_null=True,
        required=False,
        help_text="a hire who submits nothing this many minutes after joining is returned"
        " and frees their place under the cap (null: never)",
    )
    lock_at_completion = serializers.BooleanField(
        required=False, help_text="a hire who completed cannot change their answers"
    )


class PolicyApi(APIView):
    @staticmethod
    def _row(p: HiringPolicy) -> dict[str, Any]:
        return {
            "pass_mark": p.pass_mark,
            "check_rate": p.check_rate,
            "pause_below": p.pause_below,
            "pause_after": p.pause_after,
            "pay_per_item": str(p.pay_per_item),  # as DRF writes decimals
            "pay_per_correct_check": str(p.pay_per_correct_check),
            "join_expiry_minutes": p.join_expiry_minutes,
            "lock_at_completion": p.lock_at_completion,
        }

    @extend_schema(
        operation_id="hiring_policy_retrieve", responses={200: PolicySerializer, **READ_ERRORS}
    )
    def get(self, request: Request, project_id: int) -> Response:
        return Response(self._row(HiringPolicy.of(researcher_project(request, project_id))))

    @extend_schema(
        operation_id="hiring_policy_update",
        request=PolicySerializer,
        responses={200: PolicySerializer, **ERRORS},
    )
    def put(self, request: Request, project_id: int) -> Response:
        policy = HiringPolicy.of(researcher_project(request, project_id))
        form = PolicyForm(
            {**self._row(policy), **valid(PolicySerializer, request.data)}, instance=policy
        )
        if not form.is_valid():
            raise form_error(form)
        return Response(self._row(form.save()))


class QualityItemSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    role = serializers.ChoiceField(choices=QualityItem.ROLES)
    reference = serializers.DictField(
        child=serializers.CharField(),
        required=False,
        default=dict,
        help_text='"unit.field" -> value; empty for a check takes the item\'s adjudications',
    )
    explanation = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="shown after a training item, or under the instructions with an example"
        " (required there); List A / List B become each worker's List 1 / List 2 as they"
        " saw them",
    )
    reference_system = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        write_only=True,
        help_text="without a reference: take it from this imported system's verdicts",
    )


class QualityItemListApi(APIView):
    @staticmethod
    def _row(q: QualityItem) -> dict[str, Any]:
        return {
            "item": q.item_id,
            "role": q.role,
            "reference": q.reference,
            "explanation": q.explanation,
        }

    @extend_schema(
        operation_id="quality_items_list",
        responses={200: QualityItemSerializer(many=True), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        rows = QualityItem.objects.filter(item__project=project).order_by("item_id")
        return Response([self._row(q) for q in rows])

    @extend_schema(
        operation_id="quality_items_mark",
        request=QualityItemSerializer,
        responses={201: QualityItemSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        data = valid(QualityItemSerializer, request.data)
        item = Item.objects.filter(project=project, pk=data["item"]).first()
        if item is None:
            raise ApiError(400, "invalid", f"No item {data['item']} in this project.", field="item")
        system = None
        if data["reference_system"]:
            system = project.systems.filter(name=data["reference_system"]).first()
            if system is None:
                raise ApiError(
                    400,
                    "invalid",
                    f"No system {data['reference_system']!r} in this project.",
                    field="reference_system",
                )
        try:
            q = hiring.mark(
                item, data["role"], data["reference"], data["explanation"], system=system
            )
        except ValueError as e:
            raise ApiError(400, "invalid", str(e), field="reference") from e
        return Response(self._row(q), status=201)


class QualityRowSerializer(serializers.Serializer):
    annotator = serializers.CharField(help_text="pseudonym A<n>")
    membership = serializers.IntegerField()
    training_items = serializers.IntegerField()
    training_share = serializers.FloatField(allow_null=True)
    checks = serializers.IntegerField()
    check_accuracy = serializers.FloatField(allow_null=True)
    check_ci = serializers.ListField(
        child=serializers.FloatField(), allow_null=True, help_text="95% Wilson interval"
    )
    hired = serializers.BooleanField()
    worker_id = serializers.CharField(help_text="the external worker id (researchers only)")
    passed_training = serializers.BooleanField(allow_null=True)
    failed_training = serializers.BooleanField(
        allow_null=True, help_text="below the pass mark on the first training answers"
    )
    let_through = serializers.BooleanField(allow_null=True)
    paused = serializers.BooleanField()


class QualityApi(APIView):
    @extend_schema(
        operation_id="quality_list", responses={200: QualityRowSerializer(many=True), **READ_ERRORS}
    )
    def get(self, request: Request, project_id: int) -> Response:
        return Response(hiring.quality_rows(researcher_project(request, project_id)))


class QualityTableSerializer(serializers.Serializer):
    name = serializers.CharField()
    title = serializers.CharField()
    note = serializers.CharField()
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.DictField())


class AnnotatorsApi(APIView):
    """The annotator page's tables (issue 39): researchers of the project only."""

    @extend_schema(
        operation_id="annotators_list",
        responses={200: QualityTableSerializer(many=True), **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        return Response([table_json(t) for t in annotator_tables(project)])


class DisagreementsApi(APIView):
    """The units behind an agreement figure (issue 39): ?kind&field, and category or a and
    b (pseudonyms). Researchers of the project only."""

    @extend_schema(
        operation_id="disagreements_list",
        parameters=[
            OpenApiParameter("kind", str, required=True),
            OpenApiParameter("field", str, required=True),
            OpenApiParameter("category", str),
            OpenApiParameter("a", str),
            OpenApiParameter("b", str),
        ],
        responses={200: QualityTableSerializer, 400: ErrorSerializer, **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int) -> Response:
        project = researcher_project(request, project_id)
        try:
            table = figure_table(project, request.query_params.dict())
        except ValueError as e:
            name, _, message = str(e).partition(": ")
            raise ApiError(400, "invalid", message, field=name) from None
        return Response(table_json(table))


class QualityActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["pause", "resume", "let_through"])


class QualityMemberApi(APIView):
    @extend_schema(
        operation_id="quality_member_action",
        request=QualityActionSerializer,
        responses={200: QualityRowSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int, membership_id: int) -> Response:
        project = researcher_project(request, project_id)
        membership = get_object_or_404(
            Membership, project=project, pk=membership_id, role=Membership.ANNOTATOR
        )
        action = valid(QualityActionSerializer, request.data)["action"]
        hiring.set_state(
            membership,
            paused={"pause": True, "resume": False}.get(action),
            let_through=True if action == "let_through" else None,
        )
        row = next(r for r in hiring.quality_rows(project) if r["membership"] == membership.pk)
        return Response(row)


class JoinApi(APIView):
    """Join a project through an invite link's key, as a script or a crowd-work
    platform's integration would: makes the account and returns its API token and
    personal URL, once. A worker id that has an account already gets 409: the id alone
    never opens it."""

    permission_classes = [AllowAny]
    authentication_classes: list[type] = []

    @extend_schema_serializer(component_name="InviteJoined")
    class JoinedSerializer(serializers.Serializer):
        project = serializers.IntegerField()
        pseudonym = serializers.CharField()
        token = serializers.CharField()
        personal_url = serializers.CharField()

    @extend_schema(
        operation_id="invites_join",
        request={
            "application/json": {"type": "object", "additionalProperties": {"type": "string"}}
        },
        responses={
            201: JoinedSerializer,
            409: ErrorSerializer,
            410: ErrorSerializer,
            429: ErrorSerializer,
            **ERRORS,
        },
    )
    def post(self, request: Request, key: str) -> Response:
        invite = get_object_or_404(Invite, key=key, project__deleted_at=None)
        # the body is read before a refusal: a 429 sent over an unread body reaches the
        # client as a reset connection, not as 429
        data = request.data if isinstance(request.data, dict) else {}
        if wait := join_wait(request, invite.key):
            raise exceptions.Throttled(wait=wait)
        try:
            hire = hiring.join(invite, data, address=client_address(request))
        except hiring.JoinRefused as e:
            code = {"closed": "invite_closed", "invalid": "invalid", "joined": "already_joined"}
            raise ApiError(e.status, code[e.code], str(e)) from e
        token = Token.objects.create(user=hire.membership.user)
        return Response(
            {
                "project": invite.project_id,
                "pseudonym": hire.membership.pseudonym,
                "token": token.key,
                "personal_url": request.build_absolute_uri(
                    reverse("hire_login", kwargs={"key": hire.key})
                ),
            },
            status=201,
        )


class FeedbackApi(APIView):
    """A training item's feedback, as the page shows it: the reference in this person's
    own numbering (List 1/2 as they saw the lists) and whether each answer was right."""

    @extend_schema_serializer(component_name="AssignmentFeedback")
    class FeedbackSerializer(serializers.Serializer):
        reference = serializers.DictField(child=serializers.CharField())
        yours = serializers.DictField(child=serializers.CharField())
        right = serializers.DictField(child=serializers.BooleanField())
        explanation = serializers.CharField()

    @extend_schema(
        operation_id="assignments_feedback", responses={200: FeedbackSerializer, **READ_ERRORS}
    )
    def get(self, request: Request, assignment_id: int) -> Response:
        assignment = get_object_or_404(
            Assignment.objects.visible_to(user_of(request)), pk=assignment_id
        )
        q = QualityItem.objects.filter(item=assignment.item, role=hiring.TRAINING).first()
        if q is None or assignment.status != assignment.SUBMITTED:
            raise ApiError(404, "not_found", "No feedback for this assignment.")
        rows = hiring.feedback_rows(assignment, q)
        return Response(
            {
                "reference": {f"{r['unit']}.{r['key']}": r["reference"] for r in rows},
                "yours": {f"{u}.{f}": v for (u, f), v in assignment.answers_dict().items()},
                "right": {f"{r['unit']}.{r['key']}": r["same"] for r in rows},
                "explanation": hiring.worker_numbering(assignment, q.explanation),
            }
        )


@extend_schema_serializer(component_name="QualityPayment")
class PaymentRowSerializer(serializers.Serializer):
    worker_id = serializers.CharField(help_text="empty once the worker's data was deleted")
    worker_params = serializers.DictField(child=serializers.CharField())
    annotator = serializers.CharField(help_text="pseudonym A<n>")
    membership = serializers.IntegerField()
    status = serializers.CharField(
        help_text=f"{hiring.COMPLETED}, {hiring.SCREENED_OUT}, {hiring.IN_PROGRESS}"
        f" or {hiring.RETURNED}"
    )
    real_items_submitted = serializers.IntegerField()
    checks = serializers.IntegerField(help_text="known-answer units answered")
    checks_correct = serializers.IntegerField()
    check_accuracy = serializers.FloatField(allow_null=True)
    check_ci_low = serializers.FloatField(allow_null=True, help_text="95% Wilson interval")
    check_ci_high = serializers.FloatField(allow_null=True)
    active_minutes = serializers.FloatField()
    bonus = serializers.DecimalField(max_digits=10, decimal_places=2)
    payable = serializers.BooleanField(
        help_text="completed under this worker id and not flagged: the bonus file pays only these"
    )
    flag = serializers.CharField(
        help_text="why paying needs a look: another account of the same browser, address or"
        " session; empty when none"
    )


class PaymentsApi(APIView):
    @extend_schema(
        operation_id="hiring_payments",
        parameters=[
            OpenApiParameter(
                "layout",
                str,
                enum=["json", "csv", "bonus"],
                description="json (default), csv (every column) or bonus (worker_id,amount)",
            )
        ],
        responses={
            (200, "application/json"): PaymentRowSerializer(many=True),
            (200, "text/csv"): OpenApiTypes.STR,
            **ERRORS,
        },
    )
    def get(self, request: Request, project_id: int) -> Response | HttpResponse:
        project = researcher_project(request, project_id)
        layout = request.query_params.get("layout", "json")
        if layout in ("csv", "bonus"):
            return HttpResponse(
                hiring.payments_file(project, layout), content_type="text/csv; charset=utf-8"
            )
        if layout != "json":
            raise ApiError(400, "invalid", "layout: json, csv or bonus.", field="layout")
        return Response(PaymentRowSerializer(hiring.payments(project), many=True).data)


class WorkerDataApi(APIView):
    """One hired worker's personal data: GET exports it, DELETE removes the worker id,
    extra parameters, personal URL and API token (the answers stay under the pseudonym)."""

    def _hire(self, request: Request, project_id: int, membership_id: int) -> Hire:
        project = researcher_project(request, project_id)
        return get_object_or_404(
            Hire, membership__project=project, membership_id=membership_id, invited=True
        )

    @extend_schema(
        operation_id="hiring_worker_data",
        responses={200: OpenApiTypes.OBJECT, **READ_ERRORS},
    )
    def get(self, request: Request, project_id: int, membership_id: int) -> Response:
        return Response(hiring.worker_data(self._hire(request, project_id, membership_id)))

    @extend_schema(operation_id="hiring_worker_data_delete", responses={204: None, **READ_ERRORS})
    def delete(self, request: Request, project_id: int, membership_id: int) -> Response:
        hiring.erase(self._hire(request, project_id, membership_id))
        return Response(status=204)


class QualityItemsBulkApi(APIView):
    @extend_schema_serializer(component_name="QualityItemsBulk")
    class BulkSerializer(serializers.Serializer):
        items = serializers.ListField(
            child=serializers.IntegerField(), required=False, default=list, max_length=10000
        )
        sample = serializers.IntegerField(
            required=False, allow_null=True, default=None, help_text="this many per kind"
        )
        role = serializers.ChoiceField(choices=QualityItem.ROLES)
        reference_system = serializers.CharField(required=False, allow_blank=True, default="")
        explanation = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema_serializer(component_name="QualityItemsMarked")
    class MarkedSerializer(serializers.Serializer):
        marked = serializers.IntegerField()
        problems = serializers.ListField(child=serializers.CharField())

    @extend_schema(
        operation_id="quality_items_mark_many",
        request=BulkSerializer,
        responses={200: MarkedSerializer, **ERRORS},
    )
    def post(self, request: Request, project_id: int) -> Response:
        """Mark the items listed, or a random sample of each kind, as training or checks."""
        project = researcher_project(request, project_id)
        data = valid(self.BulkSerializer, request.data)
        form = MarkManyForm(project, {**data, "sample": data["sample"] or ""})
        if not form.is_valid():
            raise form_error(form)
        marked, problems = form.save()
        return Response({"marked": marked, "problems": problems})
