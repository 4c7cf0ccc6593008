"""Researcher pages: projects, members, imports, items of every kind, progress, exports."""

from __future__ import annotations

import statistics
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.db.models import Count, F, Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .. import exports, kinds, operations
from ..forms import (
    InstructionsForm,
    MemberForm,
    PipelineRunForm,
    ProjectForm,
    ProjectSettingsForm,
)
from ..import_jobs import fail_if_abandoned
from ..import_options import ImportForm
from ..ingest import ImportFailed, preview_upload
from ..members import CREATE_PROJECTS, MemberError, add_member
from ..models import Assignment, ImportJob, Item, Membership, PipelineRun, Project
from ..operations import import_data
from .common import HtmxRequest, project_for_researcher


@login_required
@permission_required(CREATE_PROJECTS, raise_exception=True)
def project_new(request: HtmxRequest) -> HttpResponse:
    form = ProjectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        project = Project.create_with_owner(form.save(commit=False), request.user)
        return redirect("project", project_id=project.pk)
    return render(request, "annotation/project_new.html", {"form": form})


def _progress_rows(project: Project) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    names = {m.user_id: m for m in project.memberships.select_related("user")}
    per_annotator = []
    by_person: dict[int, list[float]] = {}
    for a in Assignment.objects.in_project(project).filter(status=Assignment.SUBMITTED):
        by_person.setdefault(a.annotator_id, []).append(a.active_seconds)
    counts = (
        Assignment.objects.in_project(project)
        .values("annotator")
        .annotate(
            assigned=Count("id"),
            submitted=Count("id", filter=Q(status=Assignment.SUBMITTED)),
            skipped=Count("id", filter=Q(status=Assignment.SKIPPED)),
            drafts=Count("id", filter=Q(status=Assignment.DRAFT)),
        )
    )
    for row in counts:
        m = names.get(row["annotator"])
        seconds = by_person.get(row["annotator"], [])
        per_annotator.append(
            {
                **row,
                "member": m,
                "percent": round(100 * (row["submitted"] + row["skipped"]) / row["assigned"]),
                "median_seconds": round(statistics.median(seconds)) if seconds else None,
            }
        )
    per_annotator.sort(key=lambda r: r["member"].number if r["member"] else 0)
    per_item = list(
        Item.objects.filter(project=project)
        .select_related("document")
        .annotate(quality_role=F("quality__role"))
        .with_progress()
        .order_by("id")
    )
    return per_annotator, per_item  # type: ignore[return-value]


@login_required
def project_detail(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    per_annotator, per_item = _progress_rows(project)
    return render(
        request,
        "annotation/project.html",
        {
            "project": project,
            "members": project.memberships.select_related("user"),
            "systems": project.systems.annotate(n_lists=Count("claim_lists")),
            "n_documents": project.documents.count(),
            "per_annotator": per_annotator,
            "per_item": per_item,
            "member_form": MemberForm(),
            "import_form": ImportForm(),
            "item_kinds": [(spec, spec.items_form(project)) for spec in kinds.all_specs()],
            "instructions_form": InstructionsForm(initial={"instructions": project.instructions}),
            "pipeline_form": PipelineRunForm(),
            "pipeline_runs": list(project.pipeline_runs.all()[:5]),
            "current_run": PipelineRun.current(project),
        },
    )


@login_required
@require_POST
def project_members(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    form = MemberForm(request.POST)
    if form.is_valid():
        username, role = form.cleaned_data["username"], form.cleaned_data["role"]
        try:
            add_member(
                project=project,
                by=request.user,
                username=username,
                role=role,
                password=form.cleaned_data["password"],
            )
        except MemberError as e:
            messages.error(request, e.message)
        else:
            name = dict(Membership.ROLES)[role].lower()
            article = "an" if name[0] in "aeiou" else "a"
            added = f"{username} as {article} {name}"
            messages.success(
                request,
                f"Created the account {added}."
                if form.cleaned_data["password"]
                else f"Added {added}.",
            )
    else:
        messages.error(request, "Could not add the member: " + form.errors.as_text())
    return redirect("project", project_id=project.pk)


@login_required
@require_POST
def project_instructions(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    form = InstructionsForm(request.POST)
    if form.is_valid():
        before = project.instructions_version
        project.set_instructions(form.cleaned_data["instructions"])
        if project.instructions_version != before:
            messages.success(
                request,
                f"Instructions are now version {project.instructions_version}; "
                "annotators will acknowledge them again.",
            )
    return redirect("project", project_id=project.pk)


@login_required
def project_settings(request: HtmxRequest, project_id: int) -> HttpResponse:
    """A project's name, description and answer length limit (its instructions have their
    own versioned form on the project page)."""
    project = project_for_researcher(request, project_id)
    form = ProjectSettingsForm(request.POST or None, instance=project)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Project settings saved.")
        return redirect("project_settings", project_id=project.pk)
    return render(request, "annotation/project_settings.html", {"project": project, "form": form})


@login_required
def project_import(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    form = ImportForm(request.POST or None, request.FILES or None)
    errors: list[str] = []
    preview = None
    if request.method == "POST" and form.is_valid() and form.cleaned_data["dry_run"]:
        try:
            preview = preview_upload(upload=form.cleaned_data["file"], options=form.options())
        except ImportFailed as e:
            errors = [str(err) for err in e.errors]
    elif request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            result = import_data(
                project=project, user=request.user, upload=upload, options=form.options()
            )
        except ImportFailed as e:
            errors = [str(err) for err in e.errors]
        else:
            if isinstance(result, ImportJob):
                return redirect("import_job", project_id=project.pk, job_id=result.pk)
            messages.success(request, f"Imported {upload.name}: {result}")
            return redirect("project", project_id=project.pk)
    return render(
        request,
        "annotation/import.html",
        {"project": project, "form": form, "errors": errors, "preview": preview},
        status=400 if errors or form.errors else 200,
    )


@login_required
@require_POST
def project_items(request: HtmxRequest, project_id: int, kind: str) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    if kind not in kinds.names():
        raise Http404("No such kind of item.")
    spec = kinds.get(kind)
    form = spec.items_form(project, request.POST)
    if not form.is_valid():
        messages.error(request, f"Could not create {kind} items: " + form.errors.as_text())
        return redirect("project", project_id=project.pk)
    try:
        items, n = operations.create_items(project, form)
    except ValueError as e:
        messages.error(request, f"Could not create {kind} items: {e}.")
    else:
        messages.success(request, f"Created {len(items)} {kind} item(s) and {n} assignment(s).")
    return redirect("project", project_id=project.pk)


@login_required
def project_export(request: HtmxRequest, project_id: int, fmt: str) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    real_names = request.GET.get("names") == "1"
    rows = exports.long_rows(project, real_names=real_names)
    return exports.respond(rows, fmt=fmt, filename=f"project-{project.pk}-answers")


@login_required
def import_job(request: HtmxRequest, project_id: int, job_id: int) -> HttpResponse:
    """A background import's progress (polled by htmx until it is over)."""
    project = project_for_researcher(request, project_id)
    job = get_object_or_404(ImportJob, pk=job_id, project=project)
    fail_if_abandoned(job)
    template = "annotation/import_job.html" + ("#job-status" if request.htmx else "")
    response = render(request, template, {"project": project, "job": job})
    if request.htmx and job.is_over:
        response.status_code = 286  # htmx stops polling
    return response


# --------------------------------------------------------------------------- agreement weights


def _matrix_text(rows: list[list[float]] | None) -> str:
    return "\n".join(" ".join(f"{x:g}" for x in row) for row in rows or [])


def _parse_matrix(text: str, label: str) -> list[list[float]] | None:
    lines = [line.replace(",", " ").split() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    try:
        return [[float(x) for x in line] for line in lines]
    except ValueError:
        raise forms.ValidationError(
            f"{label}: numbers, one row per line, separated by spaces or commas."
        ) from None


class AgreementWeightsForm(forms.Form):
    """One distance and one agreement-weight matrix per agreement field, as text (a row per
    line); empty: the field's level (alpha) and no weighted kappa."""

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.project = project
        stored = project.agreement_weights or {}
        self.categories = operations.agreement_fields(project)
        for name, categories in self.categories.items():
            order = ", ".join(categories)
            for key, help_text in (
                ("distance", f"Krippendorff's squared differences for alpha; rows: {order}"),
                ("weights", f"agreement weights for weighted Cohen's kappa; rows: {order}"),
            ):
                self.fields[f"{name}__{key}"] = forms.CharField(
                    required=False,
                    label=f"{name} {key}",
                    help_text=help_text,
                    initial=_matrix_text(stored.get(name, {}).get(key)),
                    widget=forms.Textarea(attrs={"rows": len(categories), "cols": 30}),
                )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        value: dict[str, dict[str, Any]] = {}
        for name in self.categories:
            for key in ("distance", "weights"):
                rows = _parse_matrix(data.get(f"{name}__{key}") or "", f"{name} {key}")
                if rows is not None:
                    value.setdefault(name, {})[key] = rows
        try:
            self.value = operations.check_agreement_weights(self.project, value)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        return data


@login_required
def project_agreement_weights(request: HtmxRequest, project_id: int) -> HttpResponse:
    """A researcher's own distances (alpha) and agreement weights (weighted Cohen's kappa
    per pair) for each agreement field; the report uses them."""
    project = project_for_researcher(request, project_id)
    form = AgreementWeightsForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        operations.set_agreement_weights(project, form.value)
        messages.success(request, "Agreement weights saved; the report uses them.")
        return redirect("project_agreement_weights", project_id=project.pk)
    return render(
        request,
        "annotation/agreement_weights.html",
        {"project": project, "form": form, "fields": form.categories},
    )
