from __future__ import annotations

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from . import views

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api_schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api_schema"), name="api_docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api_schema"), name="api_redoc"),
    path("projects/", views.ProjectListApi.as_view(), name="api_projects"),
    path("projects/<int:project_id>/members/", views.MemberListApi.as_view(), name="api_members"),
    path("projects/<int:project_id>/instructions/acknowledge/",
         views.InstructionsAcknowledgeApi.as_view(), name="api_acknowledge"),
    path("projects/<int:project_id>/documents/", views.DocumentListApi.as_view(),
         name="api_documents"),
    path("projects/<int:project_id>/documents/import/", views.DocumentImportApi.as_view(),
         name="api_documents_import"),
    path("projects/<int:project_id>/systems/", views.SystemListApi.as_view(), name="api_systems"),
    path("projects/<int:project_id>/items/", views.ItemListApi.as_view(), name="api_items"),
    path("projects/<int:project_id>/items/comparison/", views.ComparisonItemsCreateApi.as_view(),
         name="api_items_comparison"),
    path("projects/<int:project_id>/items/verification/",
         views.VerificationItemsCreateApi.as_view(), name="api_items_verification"),
    path("projects/<int:project_id>/items/segment/", views.SegmentItemsCreateApi.as_view(),
         name="api_items_segment"),
    path("projects/<int:project_id>/answers/", views.AnswerListApi.as_view(), name="api_answers"),
    path("projects/<int:project_id>/report/", views.ReportApi.as_view(), name="api_report"),
    path("projects/<int:project_id>/gold/", views.GoldListApi.as_view(), name="api_gold"),
    path("projects/<int:project_id>/exports/<str:name>", views.ExportApi.as_view(),
         name="api_export"),
    path("assignments/", views.AssignmentListApi.as_view(), name="api_assignments"),
    path("assignments/<int:assignment_id>/", views.AssignmentDetailApi.as_view(),
         name="api_assignment"),
    path("assignments/<int:assignment_id>/draft/", views.AssignmentDraftApi.as_view(),
         name="api_assignment_draft"),
    path("assignments/<int:assignment_id>/submit/", views.AssignmentSubmitApi.as_view(),
         name="api_assignment_submit"),
    path("assignments/<int:assignment_id>/skip/", views.AssignmentSkipApi.as_view(),
         name="api_assignment_skip"),
]
