from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, register_converter

from .login_throttle import ThrottledAuthenticationForm
from .views import (
    adjudication,
    annotator,
    annotators,
    hiring,
    manage,
    overlap,
    pipeline_runs,
    preview,
    prolific,
    release,
    researcher,
    tokens,
    webhooks,
)
from .views import reports as report_views


class IdConverter:
    """Database ids: at most 18 digits, so any id matched fits a 64-bit integer column
    (a longer one is a 404, not an overflow deep in the database driver)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")

urlpatterns = [
    path("", annotator.home, name="home"),
    path(
        "login/",
        auth_views.LoginView.as_view(authentication_form=ThrottledAuthenticationForm),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    # annotators
    path("p/<id:project_id>/queue/", annotator.queue, name="queue"),
    path("p/<id:project_id>/instructions/", annotator.instructions, name="instructions"),
    path("p/<id:project_id>/next/", annotator.next_item, name="next_item"),
    path("a/<id:assignment_id>/", annotator.assignment_page, name="assignment"),
    path("a/<id:assignment_id>/heartbeat/", annotator.heartbeat, name="heartbeat"),
    path("a/<id:assignment_id>/feedback/", hiring.training_feedback, name="training_feedback"),
    # hiring: invite links, personal URLs, the researcher's hiring page
    path("join/<str:key>/", hiring.join, name="join"),
    path("me/<str:key>/", hiring.personal_login, name="hire_login"),
    path("p/<id:project_id>/hiring/", hiring.hiring_page, name="hiring"),
    # the annotator page (issue 39): researchers only
    path("p/<id:project_id>/annotators/", annotators.annotators_page, name="annotators"),
    path(
        "p/<id:project_id>/annotators/<slug:name>.<str:fmt>",
        annotators.annotators_table,
        name="annotators_table",
    ),
    path("p/<id:project_id>/disagreements/", annotators.disagreements, name="disagreements"),
    path("p/<id:project_id>/hiring/payments.csv", hiring.hiring_payments, name="hiring_payments"),
    # Prolific through its API (issue 41)
    path(
        "p/<id:project_id>/hiring/prolific/",
        prolific.prolific_workspace,
        name="hiring_prolific_workspace",
    ),
    path(
        "p/<id:project_id>/hiring/prolific/<id:invite_id>/",
        prolific.prolific_study,
        name="hiring_prolific",
    ),
    path(
        "p/<id:project_id>/hiring/<id:membership_id>/data.json",
        hiring.hiring_worker_data,
        name="hiring_worker_data",
    ),
    path(
        "p/<id:project_id>/adaptive-overlap/",
        overlap.adaptive_overlap_page,
        name="adaptive_overlap",
    ),
    path(
        "p/<id:project_id>/hiring/<id:membership_id>/", hiring.hiring_member, name="hiring_member"
    ),
    # researchers
    path("projects/new/", researcher.project_new, name="project_new"),
    path("p/<id:project_id>/settings/", researcher.project_settings, name="project_settings"),
    path("p/<id:project_id>/manage/", manage.manage_page, name="manage"),
    path("p/<id:project_id>/manage/delete/", manage.manage_delete, name="manage_delete"),
    path("p/<id:project_id>/manage/archive/", manage.manage_archive, name="manage_archive"),
    path(
        "p/<id:project_id>/manage/remove/<id:membership_id>/",
        manage.manage_remove,
        name="manage_remove",
    ),
    path(
        "p/<id:project_id>/manage/restore/<id:deletion_id>/",
        manage.manage_restore,
        name="manage_restore",
    ),
    path("deleted/", manage.trash, name="trash"),
    path("p/<id:project_id>/release/", release.project_release, name="project_release"),
    path("p/<id:project_id>/release/<id:job_id>/", release.release_job, name="release_job"),
    path(
        "p/<id:project_id>/release/<id:job_id>/download/",
        release.release_download,
        name="release_download",
    ),
    path("p/<id:project_id>/webhooks/", webhooks.webhook_list, name="webhooks"),
    path("p/<id:project_id>/webhooks/<id:hook_id>/", webhooks.webhook, name="webhook"),
    path("p/<id:project_id>/", researcher.project_detail, name="project"),
    path("p/<id:project_id>/members/", researcher.project_members, name="project_members"),
    path(
        "p/<id:project_id>/instructions/edit/",
        researcher.project_instructions,
        name="project_instructions",
    ),
    path("p/<id:project_id>/import/", researcher.project_import, name="project_import"),
    path(
        "p/<id:project_id>/agreement-weights/",
        researcher.project_agreement_weights,
        name="project_agreement_weights",
    ),
    path("p/<id:project_id>/import/<id:job_id>/", researcher.import_job, name="import_job"),
    path("p/<id:project_id>/items/<str:kind>/", researcher.project_items, name="project_items"),
    path("p/<id:project_id>/adjudication/", adjudication.adjudication, name="adjudication"),
    path(
        "p/<id:project_id>/items/<id:item_id>/preview/", preview.item_preview, name="item_preview"
    ),
    path(
        "p/<id:project_id>/export/answers.<str:fmt>",
        researcher.project_export,
        name="project_export",
    ),
    # pipeline runs
    path("p/<id:project_id>/runs/", pipeline_runs.pipeline_runs, name="pipeline_runs"),
    path("p/<id:project_id>/runs/<id:run_id>/", pipeline_runs.pipeline_run, name="pipeline_run"),
    # reports
    path("p/<id:project_id>/report/", report_views.report_page, name="report"),
    path("p/<id:project_id>/report/report.html", report_views.report_html, name="report_html"),
    path("p/<id:project_id>/report/report.json", report_views.report_json, name="report_json"),
    path("p/<id:project_id>/report/diagnosis.csv", report_views.report_wide, name="report_wide"),
    path(
        "p/<id:project_id>/report/tables/<slug:name>.<str:fmt>",
        report_views.report_table,
        name="report_table",
    ),
    # api
    path("api/", include("annotation.api.urls")),
    path("settings/tokens/", tokens.tokens, name="settings_tokens"),
]

handler400 = "annotation.errors.bad_request"
handler403 = "annotation.errors.permission_denied"
handler404 = "annotation.errors.page_not_found"
handler500 = "annotation.errors.server_error"
