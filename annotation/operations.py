"""What the pages, the API and the management commands all do, written once.

Each surface parses its input (a form, a serializer, command-line options), calls one
of these (or a model method: `Assignment.submit`/`skip`/`save_draft`/`record_activity`,
`Project.create_with_owner`, `Membership.acknowledge`) and renders the result. Errors
are exceptions that say what is wrong; each surface turns them into its own answer (a
message, an API error, a CommandError). Other operations live in their own modules:
`members.add_member`, `tasks.start_run`/`cancel_run`/`retry_run`,
`reports.build_report` with `reports.options.ReportOptionsForm`.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from . import kinds
from .forms import AnswerForm, PolicyForm
from .hiring import mark_imported
from .import_jobs import is_large, start_import
from .ingest import ImportSummary, check_upload_size, decode, import_file, import_upload
from .kinds.base import form_name
from .models import (
    Adjudication,
    Assignment,
    ImportJob,
    Item,
    PipelineRun,
    Project,
    assign,
    check_policy,
)
from .tasks import run_config, start_run

# --- import ------------------------------------------------------------------------------


def import_options(data: dict[str, Any]) -> dict[str, Any]:
    """The import options of `ingest.import_file` from the upload form's (or the API's)
    cleaned data: format, names stripped, update, and the mapping file decoded."""
    options: dict[str, Any] = {
        "fmt": data["format"],
        "system": data["system"].strip(),
        "source_model": data["source_model"].strip(),
        "verifier": data["verifier"].strip(),
        "domain": data["domain"].strip(),
        "update": data["update"],
    }
    mapping = data.get("mapping")
    if mapping:
        options["mapping"] = decode(mapping.read(), mapping.name)
        options["mapping_file"] = mapping.name
    return options


def import_data(
    *,
    project: Project,
    user: User,
    options: dict[str, Any],
    upload: UploadedFile | None = None,
    text: str = "",
    filename: str = "upload.jsonl",
) -> ImportSummary | ImportJob:
    """Import an upload (or text): at once, or as a background job when the upload is
    large (`IMPORT_BACKGROUND_MB`). ImportFailed says what is wrong, with file and line."""
    if upload is None:
        return import_file(project=project, text=text, file=filename, **options)
    if is_large(upload):
        check_upload_size(upload)
        return start_import(project=project, user=user, upload=upload, options=options)
    return import_upload(project=project, upload=upload, **options)


# --- answers -------------------------------------------------------------------------------


def answers_data(answers: list[dict[str, str]]) -> dict[str, str]:
    """Long-format answers [{unit, field, value}] as the data of the kind's form."""
    return {form_name(a["unit"], a["field"]): a["value"] for a in answers}


def answers_form(assignment: Assignment, answers: list[dict[str, str]]) -> AnswerForm:
    """The page's form of the assignment's kind, bound to long-format answers (the API
    and Label Studio validate exactly like the page)."""
    return kinds.answer_form(assignment, answers_data(answers))


# --- adjudication --------------------------------------------------------------------------


class AdjudicationError(ValueError):
    pass


def asked(item: Item) -> list[tuple[str, str]]:
    """The (unit, field) pairs the item asks, categorical fields only."""
    doc = item.document
    # KindSpec.expected reads (kind, external id, domain, claim, document, list_a) per item
    info = (item.kind, doc.external_id, doc.domain, item.claim_id, doc.pk, item.list_a_id)
    return kinds.get(item.kind).expected(item.project, {item.pk: info}).get(item.pk, [])


def adjudicate(
    *, item: Item, unit: str, field: str, value: str, note: str = "", by: User
) -> Adjudication:
    """Set the gold value of one unit's field: the unit must be one the item asks and
    the value one of the field's choices (AdjudicationError says which are)."""
    if (unit, field) not in asked(item):
        units = sorted({u for u, f in asked(item) if f == field})
        raise AdjudicationError(
            f"Item {item.pk} has no unit {unit!r} with a field {field!r}"
            + (f"; its units for {field}: {', '.join(units)}." if units else ".")
        )
    allowed = kinds.categorical_fields(item.kind, item.project).get(field, [])
    if value not in allowed:
        raise AdjudicationError(f"Choose a gold value of {field}: one of {', '.join(allowed)}.")
    adjudication, _ = Adjudication.objects.update_or_create(
        item=item,
        unit=unit,
        field=field,
        defaults={"value": value, "note": note.strip(), "by": by},
    )
    return adjudication


# --- pipeline runs -------------------------------------------------------------------------


class NoDocuments(ValueError):
    pass


def start_pipeline_run(*, project: Project, user: User, data: dict[str, Any]) -> PipelineRun:
    """Start a run over all the project's documents with a valid PipelineRunForm's data."""
    if not project.documents.exists():
        raise NoDocuments("The project has no documents to run the pipeline on.")
    return start_run(project=project, user=user, config=run_config(**data))


# --- items ---------------------------------------------------------------------------------


def create_items(project: Project, form: PolicyForm) -> tuple[list[Item], int]:
    """Make the items a valid items form describes and assign them (pages, API and the
    create_items command). ValueError says why nothing was made."""
    policy = form.policy(project)
    # before any item is made
    check_policy(
        k=policy["k"], fraction=policy["fraction"], annotators=project.annotators().count()
    )
    with transaction.atomic():
        items = form.make(project)
        mark_imported(items)  # training / check items named by an import field
        n = assign(items, project=project, **policy)
    return items, n
