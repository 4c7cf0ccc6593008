from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from . import views

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api_schema"), name="api_docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api_schema"), name="api_redoc"),
    path("projects/", views.ProjectListApi.as_view(), name="api_projects"),
    path("projects/<id:project_id>/members/", views.MemberListApi.as_view(), name="api_members"),
    path("projects/<id:project_id>/instructions/acknowledge/",
         views.InstructionsAcknowledgeApi.as_view(), name="api_acknowledge"),
    path("projects/<id:project_id>/documents/", views.DocumentListApi.as_view(),
         name="api_documents"),
    path("projects/<id:project_id>/imports/<id:job_id>/", views.ImportJobApi.as_view(),
         name="api_import_job"),
    path("projects/<id:project_id>/documents/import/", views.DocumentImportApi.as_view(),
         name="api_documents_import"),
    path("projects/<id:project_id>/systems/", views.SystemListApi.as_view(), name="api_systems"),
    path("projects/<id:project_id>/items/", views.ItemListApi.as_view(), name="api_items"),
    path("projects/<id:project_id>/items/comparison/", views.ComparisonItemsCreateApi.as_view(),
         name="api_items_comparison"),
    path("projects/<id:project_id>/items/verification/",
         views.VerificationItemsCreateApi.as_view(), name="api_items_verification"),
    path("projects/<id:project_id>/items/segment/", views.SegmentItemsCreateApi.as_view(),
         name="api_items_segment"),
    path("projects/<id:project_id>/answers/", views.AnswerListApi.as_view(), name="api_answers"),
    path("projects/<id:project_id>/report/", views.ReportApi.as_view(), name="api_report"),
    path("projects/<id:project_id>/gold/", views.GoldListApi.as_view(), name="api_gold"),
    path("projects/<id:project_id>/exports/<str:name>", views.ExportApi.as_view(),
         name="api_export"),
    path("projects/<id:project_id>/pipeline-runs/", views.PipelineRunListApi.as_view(),
         name="api_pipeline_runs"),
    path("projects/<id:project_id>/pipeline-runs/<id:run_id>/", views.PipelineRunDetailApi.as_view(),
         name="api_pipeline_run"),
    path("assignments/", views.AssignmentListApi.as_view(), name="api_assignments"),
    path("assignments/<id:assignment_id>/", views.AssignmentDetailApi.as_view(),
         name="api_assignment"),
    path("assignments/<id:assignment_id>/draft/", views.AssignmentDraftApi.as_view(),
         name="api_assignment_draft"),
    path("assignments/<id:assignment_id>/submit/", views.AssignmentSubmitApi.as_view(),
         name="api_assignment_submit"),
    path("assignments/<id:assignment_id>/skip/", views.AssignmentSkipApi.as_view(),
         name="api_assignment_skip"),
]
