from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from .views import adjudication, annotator, pipeline_runs, researcher, tokens
from .views import reports as report_views

urlpatterns = [
    path("", annotator.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    # annotators
    path("p/<int:project_id>/queue/", annotator.queue, name="queue"),
    path("p/<int:project_id>/instructions/", annotator.instructions, name="instructions"),
    path("p/<int:project_id>/next/", annotator.next_item, name="next_item"),
    path("a/<int:assignment_id>/", annotator.assignment_page, name="assignment"),
    path("a/<int:assignment_id>/heartbeat/", annotator.heartbeat, name="heartbeat"),
    # researchers
    path("projects/new/", researcher.project_new, name="project_new"),
    path("p/<int:project_id>/", researcher.project_detail, name="project"),
    path("p/<int:project_id>/members/", researcher.project_members, name="project_members"),
    path("p/<int:project_id>/instructions/edit/", researcher.project_instructions,
         name="project_instructions"),
    path("p/<int:project_id>/import/", researcher.project_import, name="project_import"),
    path("p/<int:project_id>/items/comparison/", researcher.project_comparison_items,
         name="project_comparison_items"),
    path("p/<int:project_id>/items/verification/", researcher.project_verification_items,
         name="project_verification_items"),
    path("p/<int:project_id>/items/segment/", researcher.project_segment_items,
         name="project_segment_items"),
    path("p/<int:project_id>/adjudication/", adjudication.adjudication, name="adjudication"),
    path("p/<int:project_id>/export/answers.<str:fmt>", researcher.project_export,
         name="project_export"),
    # pipeline runs
    path("p/<int:project_id>/runs/", pipeline_runs.pipeline_runs, name="pipeline_runs"),
    path("p/<int:project_id>/runs/<int:run_id>/", pipeline_runs.pipeline_run, name="pipeline_run"),
    # reports
    path("p/<int:project_id>/report/", report_views.report_page, name="report"),
    path("p/<int:project_id>/report/report.html", report_views.report_html, name="report_html"),
    path("p/<int:project_id>/report/report.json", report_views.report_json, name="report_json"),
    path("p/<int:project_id>/report/diagnosis.csv", report_views.report_wide, name="report_wide"),
    path("p/<int:project_id>/report/tables/<slug:name>.<str:fmt>", report_views.report_table,
         name="report_table"),
    # api
    path("api/", include("annotation.api.urls")),
    path("settings/tokens/", tokens.tokens, name="settings_tokens"),
]
