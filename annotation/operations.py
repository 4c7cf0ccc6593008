"""What the pages, the API and the management commands all do, written once.

Each surface parses its input (a form, a serializer, command-line options), calls one
of these (or a model method: `Assignment.record_activity`, `Project.create_with_owner`,
`Membership.acknowledge`) and renders the result; `answer` returns an Outcome each
surface maps to its own response. Errors are exceptions that say what is wrong; each
surface turns them into its own answer (a message, an API error, a CommandError). Other
operations live in their own modules: `members.add_member`, `tasks.start_run`/
`cancel_run`/`retry_run`, `reports.build_report` with `reports.options.ReportOptionsForm`.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Count, Q

from pipeline.dataformats.common import ImportFailed, LineError

from . import hiring, kinds, stats, webhooks
from .dbstats import analyze_after_rows
from .forms import PolicyForm, SkipForm
from .import_jobs import is_large, start_import
from .import_options import ImportOptions
from .ingest import ImportSummary, check_upload_size, import_file, import_upload
from .kinds.base import ItemInfo, form_name
from .models import (
    AdaptiveOverlap,
    Adjudication,
    Answer,
    Assignment,
    ImportJob,
    Item,
    Membership,
    NewerDraft,
    OverlapWait,
    PipelineRun,
    Project,
    assign,
    check_policy,
    validate_agreement_weights,
)
from .release.load import LoadSummary, import_release
from .tasks import run_config, start_run

# --- import ------------------------------------------------------------------------------


def import_data(
    *,
    project: Project,
    user: User,
    options: ImportOptions,
    upload: UploadedFile | None = None,
    text: str = "",
    filename: str = "upload.jsonl",
) -> ImportSummary | ImportJob | LoadSummary:
    """Import an upload (or text): at once, or as a background job when the upload is
    large (`IMPORT_BACKGROUND_MB`). ImportFailed says what is wrong, with file and line.
    A release (format `release`, a zip) imports at once into a new project."""
    if options.archive:
        return _import_release(project, user, upload)
    if upload is not None and is_large(upload):
        check_upload_size(upload)
        return start_import(project=project, user=user, upload=upload, options=options)

    def told(summary: ImportSummary) -> None:  # in the import's transaction
        webhooks.import_finished(project.pk, job_id=None, status="finished", summary=summary)

    if upload is None:
        return import_file(
            project=project, text=text, file=filename, options=options, before_commit=told
        )
    return import_upload(project=project, upload=upload, options=options, before_commit=told)


def _import_release(project: Project, user: User, upload: UploadedFile | None) -> LoadSummary:
    if upload is None:
        raise ImportFailed([LineError("release", 0, "", "a release is a zip: upload the file")])
    with tempfile.NamedTemporaryFile(suffix=".zip") as held:
        for chunk in upload.chunks():
            held.write(chunk)
        held.flush()
        return import_release(project, Path(held.name), user=user)


# --- answers -------------------------------------------------------------------------------


def answers_data(answers: list[dict[str, str]]) -> dict[str, str]:
    """Long-format answers [{unit, field, value}] as the data of the kind's form (the API
    and Label Studio validate exactly like the page)."""
    return {form_name(a["unit"], a["field"]): a["value"] for a in answers}


class Action(StrEnum):
    SUBMIT = "submit"
    RESUBMIT = "resubmit"  # edit a submission
    DRAFT = "draft"
    SKIP = "skip"


class Result(StrEnum):
    SAVED = "saved"  # kept as a draft
    SUBMITTED = "submitted"  # submitted, or a submission edited
    SKIPPED = "skipped"
    UNCHANGED = "unchanged"  # already stored as sent (a double click, a pull repeated)
    INVALID = "invalid"  # the form refused the data: `form` holds the errors
    CONFLICT = "conflict"  # submitted meanwhile (another tab or request): nothing stored
    REFUSED = "refused"  # not this person's to answer now: `reason` says why
    # CONFLICT of a draft with reason "newer_draft": the assignment holds a newer draft
    # (another tab's); this one is ignored


@dataclass(frozen=True)
class Outcome:
    result: Result
    form: forms.Form | None = None  # the bound answer (or skip) form
    # REFUSED: "not_yours", or hiring.blocked's "paused" / "training"
    reason: str = ""

    @property
    def stored(self) -> bool:
        """The assignment now holds what was sent."""
        return self.result in (Result.SAVED, Result.SUBMITTED, Result.SKIPPED, Result.UNCHANGED)


MAX_DRAFT_SEQ = 2**53 - 1  # the largest integer a page's script counts exactly


def draft_order(data: Mapping[str, Any]) -> tuple[int, int] | None | str:
    """A draft's (draft_seq, draft_base) from the page, None when it sent none, or the
    message saying what is wrong with them."""
    if data.get("draft_seq") in (None, "") and data.get("draft_base") in (None, ""):
        return None
    numbers = []
    for name in ("draft_seq", "draft_base"):
        text = str(data.get(name, ""))
        if not (text.isascii() and text.isdigit() and int(text) <= MAX_DRAFT_SEQ):
            return f"{name} must be a whole number from 0 to {MAX_DRAFT_SEQ}; got {text[:40]!r}."
        numbers.append(int(text))
    seq, base = numbers
    if base >= seq:
        return f"draft_base ({base}) must be smaller than draft_seq ({seq})."
    return seq, base


def too_long(project: Project, values: Mapping[tuple[str, str], str]) -> str | None:
    """What is wrong when an answer value is longer than the project's
    `answer_max_chars` (10,000 unless the project sets another), else None."""
    limit = project.answer_max_chars
    long = [f"{unit}.{field}" for (unit, field), v in sorted(values.items()) if len(v) > limit]
    if not long:
        return None
    return f"{', '.join(long[:5])}: an answer is at most {limit:,} characters."


def answer(
    assignment: Assignment,
    membership: Membership,
    data: Mapping[str, Any],
    action: Action = Action.SUBMIT,
    *,
    touch: bool = True,
) -> Outcome:
    """One answer to an assignment, from the pages, the API or the Label Studio sync
    alike: the kind's form validates it, a submission that lost a race stores nothing,
    and the hiring rules (training result, automatic pause) follow every submission and
    skip. `data` is the form's data (`answers_data` turns long-format answers into it; a
    skip reads "reason"); `membership` is the annotator's own. `touch=False`: the caller
    counts active time itself (the pages: Assignment.record_page_time)."""
    if (
        membership.user_id != assignment.annotator_id
        or membership.project_id != assignment.item.project_id
        or membership.role != Membership.ANNOTATOR
    ):
        return Outcome(Result.REFUSED, reason="not_yours")
    held = hiring.blocked(membership, assignment)
    if not held and assignment.is_done:
        held = hiring.edit_refused(membership)
    if held:
        return Outcome(Result.REFUSED, reason=held)
    try:
        return _answer(assignment, membership, data, action, touch=touch)
    except Assignment.DoesNotExist:  # withdrawn from this person meanwhile (manage.withdraw)
        return Outcome(Result.REFUSED, reason=WITHDRAWN)


WITHDRAWN = "withdrawn"  # Outcome.reason: a researcher took the item back; nothing stored
WITHDRAWN_MESSAGE = (
    "This item is not in your queue (a researcher may have taken it back from you): what"
    " you sent was not saved. Your other answers are kept; carry on with your next item."
)


def _answer(
    assignment: Assignment,
    membership: Membership,
    data: Mapping[str, Any],
    action: Action,
    *,
    touch: bool,
) -> Outcome:
    version = membership.project.instructions_version
    form: forms.Form
    if action == Action.SKIP:
        form = SkipForm(data)
        if not form.is_valid():
            return Outcome(Result.INVALID, form)
        reason = form.cleaned_data["reason"]
        if assignment.status == Assignment.SKIPPED and assignment.skip_reason == reason:
            result = Result.UNCHANGED
        elif assignment.skip(reason, touch=touch):
            result = Result.SKIPPED
        else:
            return Outcome(Result.CONFLICT, form)
    else:
        form = kinds.answer_form(assignment, data)
        if action == Action.DRAFT:
            order = draft_order(data)
            if isinstance(order, str):
                form.add_error(None, order)
                return Outcome(Result.INVALID, form)
            values = form.draft_values()
            if long := too_long(membership.project, values):
                form.add_error(None, long)
                return Outcome(Result.INVALID, form)
            try:
                saved = assignment.save_draft(
                    values, guideline_version=version, touch=touch, order=order
                )
            except NewerDraft:
                return Outcome(Result.CONFLICT, form, reason="newer_draft")
            return Outcome(Result.SAVED if saved else Result.CONFLICT, form)
        if not form.is_valid():
            return Outcome(Result.INVALID, form)
        values = form.answer_values()
        if long := too_long(membership.project, values):
            form.add_error(None, long)
            return Outcome(Result.INVALID, form)
        if action == Action.RESUBMIT:
            assignment.resubmit(values, guideline_version=version, touch=touch)
            result = Result.SUBMITTED
        elif _submit(assignment, values, version, touch):
            result = Result.SUBMITTED
        elif assignment.answers_dict() == values:
            result = Result.UNCHANGED
        else:
            return Outcome(Result.CONFLICT, form)
    hiring.after_submit(membership, assignment)
    if result == Result.SUBMITTED:
        widen_overlap(assignment.item_id, retry=True)
    return Outcome(result, form)


def _submit(
    assignment: Assignment, values: dict[tuple[str, str], str], version: int, touch: bool
) -> bool:
    """Assignment.submit, with its webhook events in the same transaction."""
    with transaction.atomic():
        if not assignment.submit(values, guideline_version=version, touch=touch):
            return False
        webhooks.submitted(assignment)
    return True


# --- adaptive overlap ----------------------------------------------------------------------


def adaptive_fields() -> list[tuple[str, str]]:
    """The agreement fields adaptive overlap can watch, ("kind.field", title): each kind's
    main field (`KindSpec.main_field`) first, then its other agreement fields (on the item,
    or on each evidence, segment or fact: `KindSpec.disagrees` reads them per unit)."""
    return [
        (f"{spec.name}.{a.field}", a.title + (" (the kind's main field)" if main else ""))
        for spec in kinds.all_specs()
        for main, a in sorted(
            ((a.field == spec.main_field, a) for a in spec.agreement),
            key=lambda pair: not pair[0],
        )
    ]


def widen_overlap(item_id: int, *, retry: bool = False) -> Assignment | None:
    """One more annotator for the item when the project's adaptive overlap asks for it:
    the item got at least `start` annotators when it was created (items outside the
    overlap fraction, with fewer, stay as they are), every one of them has submitted, it
    has fewer than `up_to`, and their answers to the policy's field disagree by the
    kind's rule (`KindSpec.disagrees`, on answers in the unswapped orientation). The new
    assignment goes to the least-loaded annotator of the project (fewest open
    assignments, then the lowest member number) who has none for this item and is not
    held back by the hiring rules and can still work (hiring.can_take_more: no completed,
    screened-out or returned hire, none past their quota); it is blinded like any other
    (a seeded random side). Nobody free: the item waits (OverlapWait) and `retry=True`
    (after every submission) gives the project's waiting items to whoever can take them.
    The item's row is locked, so two annotators finishing it at once add one, not two."""
    policy = AdaptiveOverlap.objects.filter(project__items=item_id).first()
    if policy is None:
        return None
    made = _widen(item_id, policy)
    if retry:
        retry_waiting(policy.project_id, policy)
    return made


def _widen(item_id: int, policy: AdaptiveOverlap) -> Assignment | None:
    with transaction.atomic():
        item = Item.objects.select_for_update().filter(pk=item_id, kind=policy.kind).first()
        if item is None:
            return None
        if hiring.QualityItem.objects.filter(item=item).exists():
            return None  # training and checks keep their own overlap
        assignments = list(item.assignments.all())
        if not policy.start <= len(assignments) < policy.up_to:
            return None
        if any(a.status != Assignment.SUBMITTED for a in assignments):
            return None
        spec = kinds.get(item.kind)
        answers: dict[int, dict[tuple[str, str], str]] = {a.pk: {} for a in assignments}
        swapped = {a.pk: a.swapped for a in assignments}
        for assignment_id, unit, field, value in Answer.objects.filter(
            assignment__in=assignments
        ).values_list("assignment_id", "unit", "field", "value"):
            comparable = spec.comparable(field, value, swapped[assignment_id])
            answers[assignment_id][(unit, field)] = comparable
        if not spec.disagrees(policy.field, list(answers.values())):
            return None
        annotator = _least_loaded(item, {a.annotator_id for a in assignments})
        if annotator is None:  # nobody can take it now: it waits for the next one who can
            OverlapWait.objects.get_or_create(item=item)
            return None
        OverlapWait.objects.filter(item=item).delete()
        position = Assignment.objects.filter(annotator_id=annotator.user_id).count()
        rng = random.Random(f"adaptive-{item.pk}-{annotator.user_id}")
        return Assignment.objects.create(
            item=item, annotator_id=annotator.user_id, position=position, swapped=rng.random() < 0.5
        )


def retry_waiting(project_id: int, policy: AdaptiveOverlap | None = None) -> int:
    """Widen the project's waiting items (OverlapWait) onto whoever can take them now,
    oldest first. Returns how many were given out."""
    policy = policy or AdaptiveOverlap.objects.filter(project_id=project_id).first()
    if policy is None:
        return 0
    n = 0
    for item_id in (
        OverlapWait.objects.filter(item__project_id=project_id)
        .order_by("since", "item_id")
        .values_list("item_id", flat=True)
    ):
        n += _widen(item_id, policy) is not None
    return n


def _least_loaded(item: Item, taken: set[int]) -> Membership | None:
    members = (
        Membership.objects.filter(project_id=item.project_id, role=Membership.ANNOTATOR)
        .exclude(user_id__in=taken)
        .annotate(
            open=Count(
                "user__assignments",
                filter=Q(user__assignments__item__project_id=item.project_id)
                & Q(user__assignments__status__in=[Assignment.PENDING, Assignment.DRAFT]),
            )
        )
        .select_related("hire")  # what hiring.blocked reads, without a query per member
        .order_by("open", "number")
    )
    return next((m for m in members if hiring.can_take_more(m)), None)


# --- adjudication --------------------------------------------------------------------------


class AdjudicationError(ValueError):
    pass


def asked(item: Item) -> list[tuple[str, str]]:
    """The (unit, field) pairs the item asks, categorical fields only."""
    info = {item.pk: ItemInfo.of(item)}
    return kinds.get(item.kind).expected(item.project, info).get(item.pk, [])


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
        hiring.mark_imported(items)  # training / check / example items named by an import field
        examples = set(
            hiring.QualityItem.objects.filter(item__in=items, role=hiring.EXAMPLE).values_list(
                "item_id", flat=True
            )
        )  # never work
        n = assign([i for i in items if i.pk not in examples], project=project, **policy)
        # a report right after plans on the new rows (PostgreSQL; dbstats)
        analyze_after_rows(len(items) + n, [Item, Assignment])
    return items, n


# --------------------------------------------------------------------------- agreement weights


def agreement_fields(project: Project) -> dict[str, list[str]]:
    """ "kind.field" -> its categories in order, for every agreement field of every kind."""
    out: dict[str, list[str]] = {}
    for spec in kinds.all_specs():
        categories = spec.categorical(project)
        for agreement in spec.agreement:
            out[f"{spec.name}.{agreement.field}"] = list(categories[agreement.field])
    return out


def check_agreement_weights(project: Project, value: object) -> dict[str, dict[str, Any]]:
    """Project.agreement_weights checked against the project's fields: a known field, a
    row and a column per category in the field's order, a distance 0 on the diagonal,
    symmetric and >= 0 (Krippendorff's squared differences, stats.distance_matrix),
    agreement weights 1 on the diagonal and in [0, 1] (stats.agreement_weights).
    ValueError names the field and its categories."""
    try:
        validate_agreement_weights(value)
    except ValidationError as error:
        raise ValueError(" ".join(error.messages)) from None
    assert isinstance(value, dict)
    fields = agreement_fields(project)
    out: dict[str, dict[str, Any]] = {}
    for name, entry in value.items():
        if name not in fields:
            raise ValueError(
                f"{name!r} is not an agreement field of this project: {', '.join(fields)}"
            )
        size = len(fields[name])
        try:
            if "distance" in entry:
                stats.distance_matrix(entry["distance"], size)
            if "weights" in entry:
                stats.agreement_weights(entry["weights"], size)
        except ValueError as error:
            raise ValueError(f"{name} ({', '.join(fields[name])}): {error}") from None
        out[name] = {k: [[float(x) for x in row] for row in rows] for k, rows in entry.items()}
    return out


def set_agreement_weights(project: Project, value: object) -> dict[str, dict[str, Any]]:
    """Check and store a project's agreement weights (the page and the API); the save
    bumps the data version, so no cached report computed without them is served."""
    checked = check_agreement_weights(project, value)
    project.agreement_weights = checked
    project.save(update_fields=["agreement_weights"])
    return checked
