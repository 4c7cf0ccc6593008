from __future__ import annotations

from django.conf import settings
from django.urls import path
from django.views.decorators.csp import csp_override
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularRedocView,
    SpectacularSwaggerSplitView,
)

from . import (
    assignments,
    documents,
    hiring,
    items,
    manage,
    pipeline_runs,
    projects,
    prolific,
    release,
    results,
    webhooks,
)

inline_styles = csp_override(settings.CSP_INLINE_STYLES)  # type: ignore[arg-type]

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    # Swagger UI and Redoc inject styles: inline styles allowed there, scripts still not
    path(
        "docs/",
        inline_styles(SpectacularSwaggerSplitView.as_view(url_name="api_schema")),
        name="api_docs",
    ),
    path(
        "redoc/",
        inline_styles(SpectacularRedocView.as_view(url_name="api_schema")),
        name="api_redoc",
    ),
    path("projects/", projects.ProjectListApi.as_view(), name="api_projects"),
    path("projects/<id:project_id>/members/", projects.MemberListApi.as_view(), name="api_members"),
    path(
        "projects/<id:project_id>/settings/",
        projects.ProjectSettingsApi.as_view(),
        name="api_project_settings",
    ),
    path(
        "projects/<id:project_id>/release/",
        release.ReleaseApi.as_view(),
        name="api_release",
    ),
    path(
        "projects/<id:project_id>/release/<id:job_id>/",
        release.ReleaseJobApi.as_view(),
        name="api_release_job",
    ),
    path(
        "projects/<id:project_id>/release/<id:job_id>/download/",
        release.ReleaseDownloadApi.as_view(),
        name="api_release_download",
    ),
    path(
        "projects/<id:project_id>/webhooks/",
        webhooks.WebhookListApi.as_view(),
        name="api_webhooks",
    ),
    path(
        "projects/<id:project_id>/webhooks/<id:hook_id>/",
        webhooks.WebhookApi.as_view(),
        name="api_webhook",
    ),
    path(
        "projects/<id:project_id>/webhooks/<id:hook_id>/deliveries/",
        webhooks.DeliveryListApi.as_view(),
        name="api_webhook_deliveries",
    ),
    path(
        "projects/<id:project_id>/webhooks/<id:hook_id>/deliveries/<id:delivery_id>/redeliver/",
        webhooks.RedeliverApi.as_view(),
        name="api_webhook_redeliver",
    ),
    path(
        "projects/<id:project_id>/instructions/examples/",
        projects.InstructionExamplesApi.as_view(),
        name="api_instruction_examples",
    ),
    path(
        "projects/<id:project_id>/agreement-weights/",
        projects.AgreementWeightsApi.as_view(),
        name="api_agreement_weights",
    ),
    path(
        "projects/<id:project_id>/instructions/acknowledge/",
        projects.InstructionsAcknowledgeApi.as_view(),
        name="api_acknowledge",
    ),
    path(
        "projects/<id:project_id>/documents/",
        documents.DocumentListApi.as_view(),
        name="api_documents",
    ),
    path(
        "projects/<id:project_id>/imports/<id:job_id>/",
        documents.ImportJobApi.as_view(),
        name="api_import_job",
    ),
    path(
        "projects/<id:project_id>/documents/import/",
        documents.DocumentImportApi.as_view(),
        name="api_documents_import",
    ),
    path(
        "projects/<id:project_id>/systems/", documents.SystemListApi.as_view(), name="api_systems"
    ),
    path("projects/<id:project_id>/items/", items.ItemListApi.as_view(), name="api_items"),
    path(
        "projects/<id:project_id>/items/<id:item_id>/preview/",
        items.ItemPreviewApi.as_view(),
        name="api_item_preview",
    ),
    path(
        "projects/<id:project_id>/items/<str:kind>/",
        items.ItemsCreateApi.as_view(),
        name="api_items_create",
    ),
    path("projects/<id:project_id>/answers/", results.AnswerListApi.as_view(), name="api_answers"),
    path("projects/<id:project_id>/report/", results.ReportApi.as_view(), name="api_report"),
    path("projects/<id:project_id>/plan/", results.PlanApi.as_view(), name="api_plan"),
    path(
        "projects/<id:project_id>/adaptive-overlap/",
        items.AdaptiveOverlapApi.as_view(),
        name="api_adaptive_overlap",
    ),
    path("projects/<id:project_id>/gold/", results.GoldListApi.as_view(), name="api_gold"),
    path(
        "projects/<id:project_id>/exports/<str:name>",
        results.ExportApi.as_view(),
        name="api_export",
    ),
    path(
        "projects/<id:project_id>/pipeline-runs/",
        pipeline_runs.PipelineRunListApi.as_view(),
        name="api_pipeline_runs",
    ),
    path(
        "projects/<id:project_id>/pipeline-runs/<id:run_id>/",
        pipeline_runs.PipelineRunDetailApi.as_view(),
        name="api_pipeline_run",
    ),
    path(
        "projects/<id:project_id>/pipeline-runs/<id:run_id>/cancel/",
        pipeline_runs.PipelineRunCancelApi.as_view(),
        name="api_pipeline_run_cancel",
    ),
    path(
        "projects/<id:project_id>/pipeline-runs/<id:run_id>/retry/",
        pipeline_runs.PipelineRunRetryApi.as_view(),
        name="api_pipeline_run_retry",
    ),
    # managing a running study: members, withdrawals, deletions
    path(
        "projects/<id:project_id>/members/<id:membership_id>/remove/",
        manage.RemoveMemberApi.as_view(),
        name="api_member_remove",
    ),
    path("projects/<id:project_id>/withdraw/", manage.WithdrawApi.as_view(), name="api_withdraw"),
    path(
        "projects/<id:project_id>/delete-items/",
        manage.DeleteItemsApi.as_view(),
        name="api_items_delete",
    ),
    path(
        "projects/<id:project_id>/archive/",
        manage.ArchiveApi.as_view(),
        name="api_project_archive",
    ),
    path(
        "projects/<id:project_id>/delete/",
        manage.DeleteProjectApi.as_view(),
        name="api_project_delete",
    ),
    path(
        "projects/<id:project_id>/deletions/",
        manage.DeletionListApi.as_view(),
        name="api_deletions",
    ),
    path(
        "projects/<id:project_id>/deletions/<id:deletion_id>/restore/",
        manage.RestoreApi.as_view(),
        name="api_deletion_restore",
    ),
    # hiring: invite links, quality policy, training / known-answer items, quality table
    path("projects/<id:project_id>/invites/", hiring.InviteListApi.as_view(), name="api_invites"),
    path(
        "projects/<id:project_id>/invites/<id:invite_id>/revoke/",
        hiring.InviteRevokeApi.as_view(),
        name="api_invite_revoke",
    ),
    path(
        "projects/<id:project_id>/hiring-policy/",
        hiring.PolicyApi.as_view(),
        name="api_hiring_policy",
    ),
    path(
        "projects/<id:project_id>/quality-items/bulk/",
        hiring.QualityItemsBulkApi.as_view(),
        name="api_quality_items_bulk",
    ),
    path(
        "projects/<id:project_id>/quality-items/",
        hiring.QualityItemListApi.as_view(),
        name="api_quality_items",
    ),
    path("projects/<id:project_id>/quality/", hiring.QualityApi.as_view(), name="api_quality"),
    path(
        "projects/<id:project_id>/annotators/",
        hiring.AnnotatorsApi.as_view(),
        name="api_annotators",
    ),
    path(
        "projects/<id:project_id>/disagreements/",
        hiring.DisagreementsApi.as_view(),
        name="api_disagreements",
    ),
    path("projects/<id:project_id>/payments/", hiring.PaymentsApi.as_view(), name="api_payments"),
    path(
        "projects/<id:project_id>/quality/<id:membership_id>/data/",
        hiring.WorkerDataApi.as_view(),
        name="api_worker_data",
    ),
    path(
        "projects/<id:project_id>/quality/<id:membership_id>/",
        hiring.QualityMemberApi.as_view(),
        name="api_quality_member",
    ),
    # Prolific through its API (issue 41)
    path(
        "projects/<id:project_id>/prolific/",
        prolific.ProlificWorkspaceApi.as_view(),
        name="api_prolific_workspace",
    ),
    path(
        "projects/<id:project_id>/invites/<id:invite_id>/prolific/",
        prolific.ProlificStudyApi.as_view(),
        name="api_prolific_study",
    ),
    path("join/<str:key>/", hiring.JoinApi.as_view(), name="api_join"),
    path(
        "assignments/<id:assignment_id>/feedback/",
        hiring.FeedbackApi.as_view(),
        name="api_assignment_feedback",
    ),
    path("assignments/", assignments.AssignmentListApi.as_view(), name="api_assignments"),
    path(
        "assignments/<id:assignment_id>/",
        assignments.AssignmentDetailApi.as_view(),
        name="api_assignment",
    ),
    path(
        "assignments/<id:assignment_id>/draft/",
        assignments.AssignmentDraftApi.as_view(),
        name="api_assignment_draft",
    ),
    path(
        "assignments/<id:assignment_id>/submit/",
        assignments.AssignmentSubmitApi.as_view(),
        name="api_assignment_submit",
    ),
    path(
        "assignments/<id:assignment_id>/skip/",
        assignments.AssignmentSkipApi.as_view(),
        name="api_assignment_skip",
    ),
]
