from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.db.models import F, QuerySet
from django.db.models.signals import post_save
from django.http import HttpRequest

from . import hiring, models
from .prolific.models import ProlificBonus, ProlificStudy, ProlificSubmission


def admin_changed(sender: type[LogEntry], **kwargs: Any) -> None:
    """The admin logs every add, change and delete it makes (on any model, bulk deletes
    included): each invalidates every project's cached reports (models.bump_data_version
    per row would need each model's way to its project)."""
    models.Project.objects.update(data_version=F("data_version") + 1)


post_save.connect(admin_changed, sender=LogEntry, dispatch_uid="admin-data-version")


@admin.register(models.Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "instructions_version", "created_at", "deleted_at"]


@admin.register(models.Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["project", "user", "role", "number", "pseudonym", "acknowledged_version"]
    list_filter = ["project", "role"]


@admin.register(models.Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "domain", "source_model"]
    list_filter = ["project", "domain"]
    search_fields = ["external_id", "response"]


@admin.register(models.SentenceCount)
class SentenceCountAdmin(admin.ModelAdmin):
    list_display = ["document", "splitter", "count"]
    list_filter = ["splitter"]
    raw_id_fields = ["document"]


@admin.register(models.System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "kind", "origin", "model"]


class ClaimInline(admin.TabularInline):
    model = models.Claim
    extra = 0


@admin.register(models.ClaimList)
class ClaimListAdmin(admin.ModelAdmin):
    list_display = ["document", "system", "abstained"]
    inlines = [ClaimInline]


@admin.register(models.Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ["text", "claim_list", "position"]
    search_fields = ["text"]


@admin.register(models.Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ["claim", "system", "label"]


@admin.register(models.Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "kind", "document", "deletion"]
    list_filter = ["project", "kind"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[models.Item]:
        return models.Item.all_objects.all()  # deleted items too (restorable)


@admin.register(models.Deletion)
class DeletionAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "whole_project", "by", "at"]
    list_filter = ["whole_project"]


class AnswerInline(admin.TabularInline):
    model = models.Answer
    extra = 0


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "status", "swapped", "active_seconds"]
    list_filter = ["status", "item__project"]
    inlines = [AnswerInline]


@admin.register(models.Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["assignment", "unit", "field", "value"]


@admin.register(models.PageVisit)
class PageVisitAdmin(admin.ModelAdmin):
    list_display = ["assignment", "opened_at", "seconds"]
    readonly_fields = ["assignment", "token", "opened_at", "seconds"]


class PipelineChunkInline(admin.TabularInline):
    model = models.PipelineChunk
    extra = 0
    fields = readonly_fields = (
        "index",
        "status",
        "attempts",
        "worker",
        "done",
        "started_at",
        "finished_at",
    )


@admin.register(models.PipelineRun)
class PipelineRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "project",
        "status",
        "total",
        "tokens",
        "cost",
        "error_count",
        "created_at",
    ]
    list_filter = ["status", "project"]
    inlines = [PipelineChunkInline]


@admin.register(models.ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "file_name", "status", "phase", "records", "created_at"]
    list_filter = ["status", "project"]


@admin.register(models.ReleaseJob)
class ReleaseJobAdmin(admin.ModelAdmin):
    list_display = ["id", "project", "status", "phase", "data_version", "created_at"]
    list_filter = ["status", "project"]


@admin.register(models.ImportedStudy)
class ImportedStudyAdmin(admin.ModelAdmin):
    list_display = ["project", "created_at"]


@admin.register(models.Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ["item", "unit", "field", "value", "by", "created_at"]


@admin.register(models.Evidence)
class EvidenceAdmin(admin.ModelAdmin):
    list_display = ["claim", "rank", "title"]


@admin.register(models.Segment)
class SegmentAdmin(admin.ModelAdmin):
    list_display = ["document", "position", "text"]


@admin.register(models.PipelineChunk)
class PipelineChunkAdmin(admin.ModelAdmin):
    list_display = ["run", "index", "status", "attempts", "worker", "done"]
    list_filter = ["status"]


# hiring (annotation/hiring/models.py); keys and worker ids stay out of the list columns
@admin.register(hiring.Invite)
class InviteAdmin(admin.ModelAdmin):
    list_display = ("id", "project", "note", "cap", "expires_at", "revoked")


@admin.register(hiring.Hire)
class HireAdmin(admin.ModelAdmin):
    list_display = ("id", "membership", "passed_training", "let_through", "paused")


@admin.register(hiring.QualityItem)
class QualityItemAdmin(admin.ModelAdmin):
    list_display = ("item", "role")


@admin.register(hiring.HiringPolicy)
class HiringPolicyAdmin(admin.ModelAdmin):
    list_display = ("project", "pass_mark", "check_rate", "pause_below", "pause_after")


@admin.register(models.AdaptiveOverlap)
class AdaptiveOverlapAdmin(admin.ModelAdmin):
    list_display = ("project", "kind", "field", "start", "up_to")


@admin.register(models.OverlapWait)
class OverlapWaitAdmin(admin.ModelAdmin):
    list_display = ("item",)


@admin.register(models.ThrottleCounter)
class ThrottleCounterAdmin(admin.ModelAdmin):
    list_display = ("key", "count", "until")


# Prolific (annotation/prolific/models.py): bonus records are the payment ledger, read-only
@admin.register(ProlificStudy)
class ProlificStudyAdmin(admin.ModelAdmin):
    list_display = ("id", "invite", "workspace", "study_id", "status")


@admin.register(ProlificSubmission)
class ProlificSubmissionAdmin(admin.ModelAdmin):
    list_display = ("submission_id", "study", "status", "hire")


@admin.register(ProlificBonus)
class ProlificBonusAdmin(admin.ModelAdmin):
    list_display = ("id", "hire", "amount", "state", "bulk_id", "paid_at")

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False


@admin.register(models.Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ("project", "url", "active", "created_at")
    exclude = ("secret",)


@admin.register(models.WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ("hook", "event", "status", "attempts", "response_code", "created_at")
