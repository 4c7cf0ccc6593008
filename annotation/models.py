from __future__ import annotations

import math
import random
import secrets
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Count, F, Q, QuerySet, Subquery
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from .kinds.schema import KindNames, item_constraints, validate_kind

DEFAULT_ERROR_TYPES = ["knowledge error", "reasoning error", "irrelevant", "overclaim"]


def default_error_types() -> list[str]:
    return list(DEFAULT_ERROR_TYPES)


def validate_verifier_collapse(value: object) -> None:
    """Project.verifier_collapse: {rule name: {label: the label it counts as}}.

    E.g. {"binary": {"contradicted": "unsupported", "inconclusive": "unsupported"}}.
    """
    if not isinstance(value, dict) or not all(
        isinstance(name, str)
        and isinstance(rule, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in rule.items())
        for name, rule in value.items()
    ):
        raise ValidationError(
            'expected {"rule name": {"label": "label it counts as", ...}, ...}, '
            'e.g. {"binary": {"contradicted": "unsupported", "inconclusive": "unsupported"}}'
        )


def validate_agreement_weights(value: object) -> None:
    """Project.agreement_weights: {"kind.field": {"distance": rows, "weights": rows}}, each
    a square matrix of numbers (a list of rows). The rows' number against the field's
    categories, the diagonal and the ranges are checked where the field is known
    (forms.check_agreement_weights)."""
    example = '{"segment.correct": {"distance": [[0, 1], [1, 0]]}}'
    if not isinstance(value, dict):
        raise ValidationError(f"expected {example}")
    for name, entry in value.items():
        if not isinstance(name, str) or not isinstance(entry, dict) or not entry:
            raise ValidationError(f"expected {example}; {name!r} is not")
        for key, rows in entry.items():
            if key not in ("distance", "weights"):
                raise ValidationError(f"{name}: {key!r} is neither 'distance' nor 'weights'")
            if not (
                isinstance(rows, list)
                and rows
                and all(isinstance(r, list) and len(r) == len(rows) for r in rows)
                and all(
                    isinstance(x, int | float) and not isinstance(x, bool) for r in rows for x in r
                )
            ):
                raise ValidationError(f"{name}: the {key} must be a square matrix of numbers")


class ProjectQuerySet(QuerySet["Project"]):
    def for_researcher(self, user: User, *, deleted: bool = False) -> ProjectQuerySet:
        """The projects the user researches (all of them for a superuser); a deleted
        one (`Project.deleted_at`, restorable) only with `deleted=True`."""
        live = self.filter(deleted_at__isnull=not deleted)
        if user.is_superuser:
            return live
        return live.filter(memberships__user=user, memberships__role=Membership.RESEARCHER)

    def visible_to(self, user: User) -> ProjectQuerySet:
        """The projects the user is a member of, not removed (all of them for a superuser),
        not deleted."""
        live = self.filter(deleted_at__isnull=True)
        if user.is_superuser:
            return live
        return live.filter(
            memberships__user=user,
            memberships__role__in=[Membership.RESEARCHER, Membership.ANNOTATOR],
        ).distinct()


class Project(models.Model):
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    instructions = models.TextField(blank=True)
    instructions_version = models.PositiveIntegerField(default=1)
    # the longest answer value (a free-text field) an annotator may store, in characters
    answer_max_chars = models.PositiveIntegerField(default=10_000)
    # FELM-style segment annotation: the error types offered when a segment is wrong.
    error_types = models.JSONField(default=default_error_types, blank=True)
    # How verifier labels are collapsed before they are scored against human labels: one
    # score table per rule. Empty: VeriScore's binary (Table 11) and ternary.
    verifier_collapse = models.JSONField(
        default=dict, blank=True, validators=[validate_verifier_collapse]
    )
    # A researcher's own distances (Krippendorff's squared differences, for alpha) and
    # agreement weights (for weighted Cohen's kappa per pair) per agreement field, over the
    # field's categories in order: {"kind.field": {"distance": [[...]], "weights": [[...]]}}.
    agreement_weights = models.JSONField(
        default=dict, blank=True, validators=[validate_agreement_weights]
    )
    # How gold is decided where no researcher adjudicated (gold.METHODS): majority vote,
    # or a model of the annotators (Dawid-Skene, MACE, GLAD).
    gold_method = models.CharField(
        max_length=20,
        default="majority",
        choices=[
            ("majority", "Majority vote"),
            ("dawid_skene", "Dawid-Skene"),
            ("mace", "MACE"),
            ("glad", "GLAD"),
        ],
        help_text="How gold is decided where no one adjudicated: majority vote (a few"
        " careful annotators) or a model that learns each annotator's reliability (crowds).",
    )
    created_by = models.ForeignKey(User, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    # Bumped in the same transaction as every write a report reads (bump_data_version):
    # the report cache's key, so a cached report is never served after a change.
    data_version = models.PositiveBigIntegerField(default=0, editable=False)
    # Deleted by a researcher (manage.delete_project): hidden from every page, API and
    # worker, restorable until its Deletion is purged (settings.DELETED_KEEP_DAYS).
    deleted_at = models.DateTimeField(null=True, blank=True)
    # Archived (manage.archive_project): closed to annotators and joins, kept whole for
    # its researchers (pages, reports, exports) until unarchived
    archived_at = models.DateTimeField(null=True, blank=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @classmethod
    def create_with_owner(cls, project: Project, user: User) -> Project:
        """Save a new project; its creator becomes its first researcher."""
        with transaction.atomic():
            project.created_by = user
            project.save()
            project.add_member(user, Membership.RESEARCHER)
        return project

    def save(self, *args: Any, **kwargs: Any) -> None:
        """A save never writes `data_version` back (another request may have bumped it
        since this row was read); it bumps it instead."""
        adding = self._state.adding
        if not adding:
            fields = kwargs.get("update_fields") or [
                f.name for f in self._meta.concrete_fields if not f.primary_key
            ]
            kwargs["update_fields"] = [f for f in fields if f != "data_version"]
        super().save(*args, **kwargs)
        if not adding:
            bump_data_version(self.pk)

    def set_instructions(self, text: str) -> None:
        """Store new instructions; a change bumps the version annotators acknowledge."""
        if text != self.instructions:
            self.instructions = text
            self.instructions_version += 1
            self.save(update_fields=["instructions", "instructions_version"])

    def role_of(self, user: User) -> str | None:
        m = self.memberships.filter(user=user).first()
        return m.role if m else None

    def annotators(self) -> QuerySet[User]:
        return User.objects.filter(
            memberships__project=self, memberships__role=Membership.ANNOTATOR
        ).order_by("memberships__number")

    def add_member(self, user: User, role: str) -> Membership:
        with transaction.atomic():
            m, created = Membership.objects.get_or_create(
                project=self,
                user=user,
                defaults={
                    "role": role,
                    "number": self._next_number(),
                    "pseudonym": self._next_pseudonym(role),
                },
            )
            if not created and m.role != role:
                m.role, m.removed_at = role, None  # a removed member added again
                # A researcher made annotator gets an annotator's pseudonym; an annotator
                # keeps theirs whatever their role, since their answers are filed under it.
                if role == Membership.ANNOTATOR and not m.pseudonym.startswith("A"):
                    m.pseudonym = self._next_pseudonym(role)
                m.save(update_fields=["role", "pseudonym", "removed_at"])
        return m

    def _next_number(self) -> int:
        last = self.memberships.aggregate(n=models.Max("number"))["n"]
        return (last or 0) + 1

    def _next_pseudonym(self, role: str) -> str:
        """Annotators are A1, A2, ... and researchers R1, R2, ... (projects made before
        0013 numbered everyone as A<n>; their members keep those, newcomers continue)."""
        prefix = "A" if role == Membership.ANNOTATOR else "R"
        taken = self.memberships.filter(pseudonym__startswith=prefix).values_list(
            "pseudonym", flat=True
        )
        return f"{prefix}{max((int(p[1:]) for p in taken), default=0) + 1}"


class Membership(models.Model):
    RESEARCHER = "researcher"
    ANNOTATOR = "annotator"
    # removed by a researcher (manage.remove_member): no access, no new work; the
    # answers they submitted stay under their pseudonym, marked as a removed member's
    REMOVED = "removed"
    ROLES = [(RESEARCHER, "Researcher"), (ANNOTATOR, "Annotator"), (REMOVED, "Removed")]

    project = models.ForeignKey(Project, models.CASCADE, related_name="memberships")
    user = models.ForeignKey(User, models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=ROLES)
    # Stable per-project number: the order members joined in.
    number = models.PositiveIntegerField()
    # What exports, reports and adjudication call the member instead of a name: A<n> for
    # annotators, R<n> for researchers (see Project._next_pseudonym). Never changes once
    # the member has answers.
    pseudonym = models.CharField(max_length=20)
    acknowledged_version = models.PositiveIntegerField(default=0)
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    removed_at = models.DateTimeField(null=True, blank=True)  # role REMOVED since

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="one_membership"),
            models.UniqueConstraint(fields=["project", "number"], name="unique_member_number"),
            models.UniqueConstraint(fields=["project", "pseudonym"], name="unique_pseudonym"),
        ]
        ordering = ["project", "number"]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.project}"

    @property
    def has_acknowledged(self) -> bool:
        return self.acknowledged_version >= self.project.instructions_version

    def acknowledge(self) -> None:
        self.acknowledged_version = self.project.instructions_version
        self.acknowledged_at = timezone.now()
        self.save(update_fields=["acknowledged_version", "acknowledged_at"])


class Document(models.Model):
    # Indexed by unique_external_id (project first). An index on the project alone only
    # slowed imports down: PostgreSQL looked a batch's 1,000 ids up through it, reading
    # every document of the project for each batch.
    project = models.ForeignKey(Project, models.CASCADE, related_name="documents", db_index=False)
    external_id = models.CharField(max_length=300)
    domain = models.CharField(max_length=100, blank=True)
    question = models.TextField(blank=True)
    response = models.TextField()
    source_model = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="unique_external_id")
        ]
        ordering = ["id"]

    def __str__(self) -> str:
        return self.external_id


class SentenceCount(models.Model):
    """A document's sentence count under one splitter, stored when a report first needs
    it; `digest` is of the text it was counted on, so an edited document is counted
    again."""

    document = models.ForeignKey(Document, models.CASCADE, related_name="sentence_counts")
    splitter = models.CharField(max_length=100)
    digest = models.CharField(max_length=40)
    count = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "splitter"], name="unique_sentence_count")
        ]


class System(models.Model):
    """A named automatic method (extractor or verifier), or an imported human reference."""

    EXTRACTOR = "extractor"
    VERIFIER = "verifier"
    REFERENCE = "reference"
    KINDS = [(EXTRACTOR, "Extractor"), (VERIFIER, "Verifier"), (REFERENCE, "Human reference")]

    project = models.ForeignKey(Project, models.CASCADE, related_name="systems")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=KINDS, default=EXTRACTOR)
    origin = models.CharField(
        max_length=100, default="import"
    )  # "pipeline", "import:veriscore", ...
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=100, blank=True)
    config = models.JSONField(default=dict, blank=True)
    # The pipeline run whose results these are: each run has systems of its own.
    pipeline_run = models.ForeignKey(
        "PipelineRun", models.SET_NULL, null=True, blank=True, related_name="systems"
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="unique_system")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ClaimList(models.Model):
    # Indexed by one_list_per_system (document first): a second index would only slow
    # down large imports.
    document = models.ForeignKey(
        Document, models.CASCADE, related_name="claim_lists", db_index=False
    )
    system = models.ForeignKey(System, models.CASCADE, related_name="claim_lists")
    abstained = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["document", "system"], name="one_list_per_system")
        ]

    def __str__(self) -> str:
        return f"{self.system} on {self.document}"


class Claim(models.Model):
    # Indexed by unique_claim_position (claim_list first): a second index would only slow
    # down large imports (one more B-tree per claim). db_constraint=False: on PostgreSQL
    # migration 0023 replaced the FK by triggers that check the same once per statement,
    # set-based (annotation/claim_fk.py); SQLite keeps its FK. Django's CASCADE is unchanged.
    # A migration that rebuilds annotation_claim (Django's SQLite `_remake_table`, which
    # most AlterFields there do) drops SQLite's FK, and any drop of the triggers loses the
    # check: tests/annotation/test_claim_fk.py catches both.
    claim_list = models.ForeignKey(
        ClaimList, models.CASCADE, related_name="claims", db_index=False, db_constraint=False
    )
    position = models.PositiveIntegerField()
    text = models.TextField()
    sentence_index = models.IntegerField(null=True, blank=True)
    sentence = models.TextField(blank=True)

    class Meta:
        ordering = ["claim_list", "position"]
        constraints = [
            models.UniqueConstraint(fields=["claim_list", "position"], name="unique_claim_position")
        ]

    def __str__(self) -> str:
        return self.text


class Evidence(models.Model):
    """One search result retrieved for a claim, in rank order (1 = first)."""

    claim = models.ForeignKey(
        Claim, models.CASCADE, related_name="evidence", db_index=False
    )  # indexed by unique_evidence_rank
    rank = models.PositiveIntegerField()
    title = models.TextField(blank=True)
    snippet = models.TextField(blank=True)
    link = models.URLField(max_length=2000, blank=True)

    class Meta:
        ordering = ["claim", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["claim", "rank"], name="unique_evidence_rank")
        ]


class SegmentQuerySet(QuerySet["Segment"]):
    def shown(self) -> SegmentQuerySet:
        """Segments with text: an empty one (FELM publishes some) is never an annotation unit."""
        return self.exclude(text__regex=r"^\s*$")


class Segment(models.Model):
    """A piece of a response annotated on its own (FELM): a sentence or a step."""

    objects = SegmentQuerySet.as_manager()
    document = models.ForeignKey(
        Document, models.CASCADE, related_name="segments", db_index=False
    )  # indexed by unique_segment_position
    position = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["document", "position"]
        constraints = [
            models.UniqueConstraint(fields=["document", "position"], name="unique_segment_position")
        ]

    def __str__(self) -> str:
        return self.text


class Verdict(models.Model):
    """A system's (or an imported human reference's) label for one claim or segment."""

    claim = models.ForeignKey(Claim, models.CASCADE, null=True, blank=True, related_name="verdicts")
    segment = models.ForeignKey(
        Segment, models.CASCADE, null=True, blank=True, related_name="verdicts"
    )
    system = models.ForeignKey(System, models.CASCADE, related_name="verdicts")
    label = models.CharField(max_length=50)
    raw_output = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["claim", "system"],
                condition=Q(claim__isnull=False),
                name="one_verdict_per_system",
            ),
            models.UniqueConstraint(
                fields=["segment", "system"],
                condition=Q(segment__isnull=False),
                name="one_segment_verdict_per_system",
            ),
            models.CheckConstraint(
                condition=Q(claim__isnull=False, segment__isnull=True)
                | Q(claim__isnull=True, segment__isnull=False),
                name="verdict_on_claim_or_segment",
            ),
        ]


class ItemQuerySet(QuerySet["Item"]):
    def with_progress(self) -> ItemQuerySet:
        """Each item with its assignment counts: assigned, n_open (pending or draft),
        submitted and skipped (the project page and the items API)."""
        status = "assignments__status"
        return self.annotate(
            assigned=Count("assignments"),
            n_open=Count(
                "assignments", filter=Q(**{f"{status}__in": [Assignment.PENDING, Assignment.DRAFT]})
            ),
            submitted=Count("assignments", filter=Q(**{status: Assignment.SUBMITTED})),
            skipped=Count("assignments", filter=Q(**{status: Assignment.SKIPPED})),
        )


class Deletion(models.Model):
    """What a researcher deleted at once: items (`Item.deletion`) or the whole project
    (`whole_project`, with `Project.deleted_at`). Hidden everywhere from then on and
    restorable (manage.restore) until settings.DELETED_KEEP_DAYS have passed; then
    manage.purge deletes it for good (the purge_deleted command)."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="deletions")
    whole_project = models.BooleanField(default=False)
    by = models.ForeignKey(User, models.SET_NULL, null=True, blank=True, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    summary = models.JSONField(default=dict)  # what went, counted when it was deleted

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        what = "project" if self.whole_project else "items"
        return f"{what} of {self.project_id} deleted {self.at:%Y-%m-%d %H:%M}"


_ItemManager = models.Manager.from_queryset(ItemQuerySet)


class LiveItemManager(_ItemManager):
    """Items not deleted (Item.objects; Item.all_objects has the deleted ones too)."""

    def get_queryset(self) -> ItemQuerySet:
        return ItemQuerySet(self.model, using=self._db).filter(deletion__isnull=True)


class Item(KindNames, models.Model):
    project = models.ForeignKey(Project, models.CASCADE, related_name="items")
    # a registered kind (kinds/schema.py): validated, not choices, so a new kind needs
    # no migration
    kind = models.CharField(max_length=20, validators=[validate_kind])
    document = models.ForeignKey(Document, models.CASCADE, related_name="items")
    # comparison: the two claim lists; "a" and "b" are storage order, never shown.
    # atomic facts: list_a holds the facts.
    list_a = models.ForeignKey(ClaimList, models.CASCADE, null=True, blank=True, related_name="+")
    list_b = models.ForeignKey(ClaimList, models.CASCADE, null=True, blank=True, related_name="+")
    # verification: the claim whose evidence is judged
    claim = models.ForeignKey(Claim, models.CASCADE, null=True, blank=True, related_name="items")
    created_at = models.DateTimeField(default=timezone.now)
    # deleted with others (restorable until the Deletion is purged): hidden everywhere
    deletion = models.ForeignKey(
        Deletion, models.CASCADE, null=True, blank=True, related_name="items"
    )

    objects = LiveItemManager()
    all_objects = ItemQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = item_constraints()

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        validate_kind(self.kind)  # ValidationError: never an item of an unknown kind
        super().save(*args, **kwargs)


class NewerDraft(Exception):
    """A draft refused because the assignment holds a newer one (another tab's)."""

    def __init__(self, held: int) -> None:
        super().__init__(f"a newer draft (number {held}) is stored")
        self.held = held


class AssignmentQuerySet(QuerySet["Assignment"]):
    def visible_to(self, user: User) -> AssignmentQuerySet:
        """The user's own assignments, only in projects where they are still an annotator,
        of items and projects not deleted."""
        return self.filter(
            annotator=user,
            item__project__memberships__user=user,
            item__project__memberships__role=Membership.ANNOTATOR,
            item__deletion__isnull=True,
            item__project__deleted_at__isnull=True,
            item__project__archived_at__isnull=True,
        )

    def for_annotator(self, user: User) -> AssignmentQuerySet:
        return self.filter(annotator=user)

    def in_project(self, project: Project) -> AssignmentQuerySet:
        """The project's assignments of items not deleted."""
        return self.filter(item__project=project, item__deletion__isnull=True)

    def open(self) -> AssignmentQuerySet:
        return self.filter(status__in=[Assignment.PENDING, Assignment.DRAFT])

    def done(self) -> AssignmentQuerySet:
        return self.filter(status__in=[Assignment.SUBMITTED, Assignment.SKIPPED])


class Assignment(models.Model):
    PENDING = "pending"
    DRAFT = "draft"
    SUBMITTED = "submitted"
    SKIPPED = "skipped"
    STATUSES = [
        (PENDING, "Pending"),
        (DRAFT, "Draft"),
        (SUBMITTED, "Submitted"),
        (SKIPPED, "Skipped"),
    ]

    item = models.ForeignKey(Item, models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(User, models.CASCADE, related_name="assignments")
    position = models.PositiveIntegerField(default=0)  # order in the annotator's queue
    status = models.CharField(max_length=20, choices=STATUSES, default=PENDING)
    # Comparison: True when list_b is shown as List 1. Drawn per assignment.
    swapped = models.BooleanField(default=False)
    guideline_version = models.PositiveIntegerField(null=True, blank=True)
    skip_reason = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    active_seconds = models.FloatField(default=0)
    # The order of drafts: the sequence number of the stored draft (the page numbers its
    # drafts; a draft without one, from the API, counts one up).
    draft_seq = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="one_assignment_per_person")
        ]

    def __str__(self) -> str:
        return f"{self.item} for {self.annotator}"

    @property
    def is_done(self) -> bool:
        return self.status in (self.SUBMITTED, self.SKIPPED)

    def presented_lists(self) -> tuple[ClaimList, ClaimList]:
        """The claim lists in the order this annotator sees them (List 1, List 2)."""
        a, b = self.item.list_a, self.item.list_b
        assert a is not None and b is not None
        return (b, a) if self.swapped else (a, b)

    def touch(self, now: datetime | None = None) -> None:
        """Record activity; time since the previous activity counts unless it was an idle gap."""
        now = now or timezone.now()
        if self.started_at is None:
            self.started_at = now
        if self.last_activity_at is not None:
            gap = (now - self.last_activity_at).total_seconds()
            if 0 < gap <= settings.IDLE_SECONDS:
                self.active_seconds += gap
        self.last_activity_at = now

    def record_activity(self) -> None:
        """Touch and save: the API counts time between an annotator's requests (the
        pages count what their script measured instead: record_page_time)."""
        self.touch()
        self.save(update_fields=["started_at", "last_activity_at", "active_seconds"])

    def open_page(self) -> PageVisit:
        """A new page instance for this assignment (one load in one tab); its script
        reports the active time it measured under the returned token."""
        now = timezone.now()
        if self.started_at is None:
            self.started_at = now
            self.save(update_fields=["started_at"])
        return PageVisit.objects.create(assignment=self, opened_at=now)

    def record_page_time(self, token: str, seconds: object) -> bool:
        """Count the active seconds a page instance reports (its running total): only
        the increase since its last report, never more than the wall time it was open,
        never another assignment's page. False when the token is not this assignment's."""
        try:
            reported = float(seconds)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        if not (token and math.isfinite(reported) and reported >= 0):
            return False
        with transaction.atomic():
            locked = Assignment.objects.select_for_update().get(pk=self.pk)
            visit = locked.page_visits.filter(token=token).first()
            if visit is None:
                return False
            now = timezone.now()
            reported = min(reported, (now - visit.opened_at).total_seconds())
            if reported > visit.seconds:
                locked.active_seconds += reported - visit.seconds
                locked.last_activity_at = now
                locked.save(update_fields=["active_seconds", "last_activity_at"])
                visit.seconds = reported
                visit.save(update_fields=["seconds"])
        self.active_seconds, self.last_activity_at = locked.active_seconds, locked.last_activity_at
        return True

    def answers_dict(self) -> dict[tuple[str, str], str]:
        return {(a.unit, a.field): a.value for a in self.answers.all()}

    # touch=False: the caller counts time itself (the HTML pages: record_page_time).
    def save_draft(
        self,
        values: dict[tuple[str, str], str],
        *,
        guideline_version: int,
        touch: bool = True,
        order: tuple[int, int] | None = None,
    ) -> bool:
        """Store the given answers as a draft. Returns False when the assignment was
        already submitted by another request (nothing is changed then). `order` is the
        page's (seq, base): the draft's sequence number and the newest one the page knew
        of; a draft that is not newer than the stored one, or written on top of an older
        one than the stored one (another tab's), raises NewerDraft and stores nothing,
        unless it holds exactly the stored answers (a repeat)."""
        return self._store(
            values, status=self.DRAFT, guideline_version=guideline_version, touch=touch, order=order
        )

    def submit(
        self, values: dict[tuple[str, str], str], *, guideline_version: int, touch: bool = True
    ) -> bool:
        return self._store(
            values, status=self.SUBMITTED, guideline_version=guideline_version, touch=touch
        )

    def resubmit(
        self, values: dict[tuple[str, str], str], *, guideline_version: int, touch: bool = True
    ) -> bool:
        """Edit a previous submission."""
        return self._store(
            values,
            status=self.SUBMITTED,
            guideline_version=guideline_version,
            editing=True,
            touch=touch,
        )

    def skip(self, reason: str, *, touch: bool = True) -> bool:
        with transaction.atomic():
            locked = Assignment.objects.select_for_update().get(pk=self.pk)
            if locked.status == self.SUBMITTED:
                return False
            if touch:
                locked.touch()
            locked.status = self.SKIPPED
            locked.skip_reason = reason
            locked.save(update_fields=self._STORED)
        self._copy_stored(locked)
        return True

    def _store(
        self,
        values: dict[tuple[str, str], str],
        *,
        status: str,
        guideline_version: int,
        editing: bool = False,
        touch: bool = True,
        order: tuple[int, int] | None = None,
    ) -> bool:
        # A fixed, small number of queries whatever the number of fields (the load
        # benchmark's paced p95): the lock, the stored answers, at most one insert, one
        # update and one delete, and the assignment's row.
        with transaction.atomic():
            # The row lock (IMMEDIATE transactions on SQLite) serialises two requests
            # for the same assignment: the second sees the first one's status.
            locked = Assignment.objects.select_for_update().get(pk=self.pk)
            if locked.status == self.SUBMITTED and not editing:
                return False
            stored = {(a.unit, a.field): a for a in Answer.objects.filter(assignment=locked)}
            if status == self.DRAFT:
                if order is None:
                    locked.draft_seq += 1
                else:
                    seq, base = order
                    if seq <= locked.draft_seq or base < locked.draft_seq:
                        if {k: a.value for k, a in stored.items()} == values:
                            return True
                        raise NewerDraft(locked.draft_seq)
                    locked.draft_seq = seq
            now = timezone.now()
            changed = []
            for key, answer in stored.items():
                if key in values and answer.value != values[key]:
                    answer.value, answer.updated_at = values[key], now
                    changed.append(answer)
            Answer.objects.bulk_update(changed, ["value", "updated_at"])
            Answer.objects.bulk_create(
                Answer(assignment=locked, unit=u, field=f, value=v)
                for (u, f), v in values.items()
                if (u, f) not in stored
            )
            # Fields cleared by the annotator are removed rather than kept stale.
            stale = [a.pk for key, a in stored.items() if key not in values]
            if stale:
                Answer.objects.filter(pk__in=stale).delete()
            if touch:
                locked.touch(now)
            locked.status = status
            locked.guideline_version = guideline_version
            if status == self.SUBMITTED:
                locked.submitted_at = now
                locked.skip_reason = ""
            locked.save(update_fields=self._STORED)
        self._copy_stored(locked)
        return True

    # What _store and skip change; copied back instead of a refresh_from_db, which would
    # also drop the item, project and document already loaded with this assignment.
    _STORED = [
        "status",
        "guideline_version",
        "submitted_at",
        "skip_reason",
        "started_at",
        "last_activity_at",
        "active_seconds",
        "draft_seq",
    ]

    def _copy_stored(self, locked: Assignment) -> None:
        for name in self._STORED:
            setattr(self, name, getattr(locked, name))
        # A prefetched or cached answer list is now out of date.
        getattr(self, "_prefetched_objects_cache", {}).pop("answers", None)


def _page_token() -> str:
    return secrets.token_hex(16)


class PageVisit(models.Model):
    """One load of an assignment's page in one tab: the active seconds its script has
    reported so far (already added to the assignment's active_seconds)."""

    assignment = models.ForeignKey(Assignment, models.CASCADE, related_name="page_visits")
    token = models.CharField(max_length=32, unique=True, default=_page_token)
    opened_at = models.DateTimeField(default=timezone.now)
    seconds = models.FloatField(default=0)


class Answer(models.Model):
    """One value of one field of one unit: the long format every statistic reads."""

    ITEM = "item"

    assignment = models.ForeignKey(Assignment, models.CASCADE, related_name="answers")
    unit = models.CharField(max_length=50, default=ITEM)  # "item", "evidence:3", "segment:2"
    field = models.CharField(max_length=50)
    value = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "unit", "field"], name="one_answer")
        ]
        ordering = ["assignment", "unit", "field"]


class Adjudication(models.Model):
    """The gold value a researcher set for one field of one unit where people disagree."""

    item = models.ForeignKey(Item, models.CASCADE, related_name="adjudications")
    unit = models.CharField(max_length=50, default=Answer.ITEM)
    field = models.CharField(max_length=50)
    value = models.TextField()
    note = models.TextField(blank=True)
    by = models.ForeignKey(User, models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "unit", "field"], name="one_adjudication")
        ]


def check_policy(*, k: int, fraction: float, annotators: int) -> None:
    """The rules of an assignment policy, in one place (pages, API and command line reach
    them through `operations.create_items`): ValueError says which one is broken."""
    if not annotators:
        raise ValueError("the project has no annotators")
    if not 1 <= k <= annotators:
        raise ValueError(f"k must be between 1 and {annotators} (the annotators)")
    if not 0 <= fraction <= 1:
        raise ValueError("the overlap fraction must be between 0 and 1")


def assignment_plan(
    item_ids: list[int], annotator_ids: list[int], *, k: int, fraction: float, seed: int
) -> dict[int, list[int]]:
    """Who annotates what: `k` annotators each on a seeded `fraction` of the items (for
    agreement), every other item to one annotator; always to the least loaded person.

    Deterministic for a given seed and input (order of the inputs does not matter).
    """
    check_policy(k=k, fraction=fraction, annotators=len(annotator_ids))
    rng = random.Random(seed)
    items = sorted(item_ids)
    people = sorted(annotator_ids)
    n_overlap = round(fraction * len(items))
    overlap = set(rng.sample(items, n_overlap))
    load = {p: 0 for p in people}
    plan: dict[int, list[int]] = {}
    # Overlap items first so the multi-annotator share is spread evenly too.
    for item in [i for i in items if i in overlap] + [i for i in items if i not in overlap]:
        need = k if item in overlap else 1
        tiebreak = {p: rng.random() for p in people}
        chosen = sorted(people, key=lambda p: (load[p], tiebreak[p]))[:need]
        for p in chosen:
            load[p] += 1
        plan[item] = sorted(chosen)
    return plan


def assign(
    items: QuerySet[Item] | list[Item], *, project: Project, k: int, fraction: float, seed: int
) -> int:
    """Create the assignments of `assignment_plan`; returns how many were created.

    Items that already have assignments are left alone, so this is safe to re-run.
    """
    annotators = list(project.annotators().values_list("id", flat=True))
    taken = set(Assignment.objects.filter(item__in=items).values_list("item_id", flat=True))
    items = [i for i in items if i.pk not in taken]
    plan = assignment_plan([i.id for i in items], annotators, k=k, fraction=fraction, seed=seed)
    rng = random.Random(f"order-{seed}")
    start = {
        row["annotator"]: row["n"]
        for row in Assignment.objects.in_project(project)
        .values("annotator")
        .annotate(n=Count("id"))
    }
    per_person: dict[int, list[int]] = {p: [] for p in annotators}
    for item_id, people in plan.items():
        for p in people:
            per_person[p].append(item_id)
    rows = []
    for person, item_ids in per_person.items():
        rng.shuffle(item_ids)
        for pos, item_id in enumerate(item_ids, start=start.get(person, 0)):
            rows.append(
                Assignment(
                    item_id=item_id, annotator_id=person, position=pos, swapped=rng.random() < 0.5
                )
            )
    Assignment.objects.bulk_create(rows)
    bump_data_version(project.pk)
    return len(rows)


def sample_ids(ids: Iterable[int], *, n: int | None, seed: int) -> list[int]:
    """A seeded sample of `n` of the ids, sorted (all of them when `n` is None or not
    smaller): the same ids, n and seed draw the same sample. Items of every kind are
    sampled by it (verification items per stratum: `sample_claims`)."""
    unique = sorted(set(ids))
    if n is None or n >= len(unique):
        return unique
    return sample_claims([(i, "") for i in unique], n=n, seed=seed)


def sample_claims(claims: list[tuple[int, str]], *, n: int, seed: int) -> list[int]:
    """A seeded sample of `n` claim ids from (id, stratum) pairs, allocated to strata in
    proportion to their size (largest remainder), so small strata are represented too."""
    strata: dict[str, list[int]] = {}
    for claim_id, stratum in sorted(claims):
        strata.setdefault(stratum, []).append(claim_id)
    n = min(n, len(claims))
    if not claims or n <= 0:
        return []
    exact = {k: n * len(v) / len(claims) for k, v in strata.items()}
    take = {k: int(x) for k, x in exact.items()}
    by_remainder = sorted(strata, key=lambda k: (-(exact[k] - take[k]), k))
    for k in by_remainder[: n - sum(take.values())]:
        take[k] += 1
    rng = random.Random(seed)
    chosen = []
    for k in sorted(strata):
        chosen += rng.sample(strata[k], take[k])
    return sorted(chosen)


def pseudonyms(project: Project) -> dict[int, str]:
    """user id -> pseudonym ("A<n>", "R<n>") for every member of the project."""
    return {m.user_id: m.pseudonym for m in project.memberships.all()}


def visible_projects(user: User) -> QuerySet[Project]:
    return Project.objects.visible_to(user)


# --- pipeline runs -------------------------------------------------------------------


MAX_RUN_ERRORS = 200


class PipelineRun(models.Model):
    """One run of the pipeline over a project's documents, split into chunks that any
    number of workers process. The config never holds an API key (those come from the
    environment of the worker)."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STATUSES = [
        (QUEUED, "Queued"),
        (RUNNING, "Running"),
        (FINISHED, "Finished"),
        (FAILED, "Failed"),
        (CANCELLED, "Cancelled"),
    ]

    project = models.ForeignKey(Project, models.CASCADE, related_name="pipeline_runs")
    created_by = models.ForeignKey(User, models.SET_NULL, null=True, blank=True, related_name="+")
    # extractor, label_mode, model, base_url, retriever, offline, fixed_k, chunk_size, ...
    config = models.JSONField(default=dict)
    status = models.CharField(max_length=20, choices=STATUSES, default=QUEUED)
    total = models.PositiveIntegerField(default=0)  # responses
    # claims, evidence, verdicts, unparsed, abstained, llm_calls, cached_calls, searches...
    counts = models.JSONField(default=dict, blank=True)
    tokens = models.PositiveBigIntegerField(default=0)
    cost = models.FloatField(default=0.0)  # USD
    errors = models.JSONField(default=list, blank=True)  # the first MAX_RUN_ERRORS
    error_count = models.PositiveIntegerField(default=0)
    scores = models.JSONField(null=True, blank=True)  # pipeline.score.ScoresTable as JSON
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"pipeline run #{self.pk} on {self.project}"

    @property
    def is_over(self) -> bool:
        return self.status in (self.FINISHED, self.FAILED, self.CANCELLED)

    @property
    def can_retry(self) -> bool:
        """A failed or cancelled run can run its unfinished chunks again."""
        return self.status in (self.FAILED, self.CANCELLED)

    @property
    def is_current(self) -> bool:
        current = PipelineRun.current(self.project)
        return current is not None and current.pk == self.pk

    @classmethod
    def current(cls, project: Project) -> PipelineRun | None:
        """The project's current run: the latest that finished (failed runs wrote nothing)."""
        finished = cls.objects.filter(project=project, status=cls.FINISHED)
        return finished.order_by("-finished_at", "-id").first()

    @property
    def done(self) -> int:
        return int(self.chunks.aggregate(n=models.Sum("done"))["n"] or 0)

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100

    @property
    def waiting(self) -> int:
        """Chunks whose worker waits on the provider's batch."""
        return self.chunks.filter(status=PipelineChunk.WAITING).count()

    # The run's id is in its systems' names: a later run never adds to an earlier one's.
    @property
    def extractor_name(self) -> str:
        extractor, model = self.config.get("extractor", "veriscore"), self.config.get("model", "")
        return f"pipeline:{extractor}:{model}:run{self.pk}"

    @property
    def verifier_name(self) -> str:
        mode, model = self.config.get("label_mode", "binary"), self.config.get("model", "")
        return f"pipeline:verify-{mode}:{model}:run{self.pk}"


class PipelineChunk(models.Model):
    """A slice of a run's documents, claimed by one worker at a time."""

    QUEUED = "queued"
    RUNNING = "running"
    # Its worker waits on the provider's Batch API: not stalled, however long the
    # provider takes (the worker's heartbeat goes on; PIPELINE_CHUNK_TIMEOUT applies to
    # the worker, not to the batch).
    WAITING = "waiting"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    STATUSES = [
        (QUEUED, "Queued"),
        (RUNNING, "Running"),
        (WAITING, "Waiting on the provider's batch"),
        (DONE, "Done"),
        (FAILED, "Failed"),
        (CANCELLED, "Cancelled"),
    ]
    HELD = [RUNNING, WAITING]  # a worker has it

    run = models.ForeignKey(PipelineRun, models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    document_ids = models.JSONField(default=list)
    status = models.CharField(max_length=20, choices=STATUSES, default=QUEUED)
    attempts = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=100, blank=True)
    done = models.PositiveIntegerField(default=0)  # responses finished in the current attempt
    # Per response: what scoring needs (model, domain, abstained, verdict labels), so the
    # run's scores never depend on rows another run may have written.
    summary = models.JSONField(default=list, blank=True)
    # The full pipeline results of a done chunk, ingested into the project only when the
    # whole run has finished: a failed or cancelled run writes nothing into the project.
    results = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)  # why the last attempt failed
    started_at = models.DateTimeField(null=True, blank=True)
    # The worker's last report of progress (a call or a response finished): a chunk
    # without progress for PIPELINE_CHUNK_TIMEOUT is taken over.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="unique_chunk_index")]

    def __str__(self) -> str:
        return f"chunk {self.index} of {self.run}"


class ImportJob(models.Model):
    """A large upload imported by a background task (annotation.import_jobs), all or
    nothing like any import; its page polls this row for progress."""

    QUEUED, RUNNING, FINISHED, FAILED = "queued", "running", "finished", "failed"
    STATUSES = [
        (QUEUED, "Queued"),
        (RUNNING, "Running"),
        (FINISHED, "Finished"),
        (FAILED, "Failed"),
    ]

    project = models.ForeignKey(Project, models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(User, models.SET_NULL, null=True, blank=True, related_name="+")
    file_name = models.CharField(max_length=300)
    path = models.CharField(max_length=1000)  # the upload, kept until the job is over
    options = models.JSONField(default=dict)  # import_options.ImportOptions.as_record()
    status = models.CharField(max_length=20, choices=STATUSES, default=QUEUED)
    phase = models.CharField(max_length=20, blank=True)  # read, write
    records = models.PositiveIntegerField(default=0)  # records validated so far
    summary = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    @property
    def is_over(self) -> bool:
        return self.status in (self.FINISHED, self.FAILED)


class ImportedStudy(models.Model):
    """What a release said of its study (its study.json), kept by the project imported
    from it (annotation/release/load.py): the card's parts the researcher wrote and the
    facts the project cannot recompute (who was hired, by outcome: counts only, no
    person). A release of this project states them again (annotation/release/stated.py)."""

    project = models.OneToOneField(Project, models.CASCADE, related_name="imported_study")
    facts = models.JSONField(default=dict)  # study.json as read (nothing personal)
    created_at = models.DateTimeField(default=timezone.now)


class ReleaseJob(models.Model):
    """A release built by the task worker (annotation/release/jobs.py): its page and API
    poll this row; the zip is moved into `path` once it is whole. One build per project,
    options and data version (`key`) at a time: a second request for the same gets this
    one (a failed one can be asked for again)."""

    QUEUED, RUNNING, FINISHED, FAILED = "queued", "running", "finished", "failed"
    STATUSES = ImportJob.STATUSES  # the same four

    project = models.ForeignKey(Project, models.CASCADE, related_name="release_jobs")
    created_by = models.ForeignKey(User, models.SET_NULL, null=True, blank=True, related_name="+")
    options = models.JSONField(default=dict)  # ReleaseOptions as JSON
    data_version = models.PositiveBigIntegerField(default=0)  # asked for; then the one built
    key = models.CharField(max_length=64)  # sha256 of the options and the data version
    status = models.CharField(max_length=20, choices=STATUSES, default=QUEUED)
    phase = models.CharField(max_length=40, blank=True)  # the table being written, zip
    tables_done = models.PositiveIntegerField(default=0)  # of the release's tables
    rows = models.PositiveBigIntegerField(default=0)  # rows of the current table so far
    path = models.CharField(max_length=1000, blank=True)  # the zip, when finished
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)  # the worker's last progress
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "key"],
                condition=~Q(status="failed"),
                name="one_release_build_per_version",
            )
        ]

    @property
    def is_over(self) -> bool:
        return self.status in (self.FINISHED, self.FAILED)


class AdaptiveOverlap(models.Model):
    """A project's adaptive overlap (issue 30): items of `kind` that were given `start`
    annotators get one more while their answers to the item's `field` disagree
    (`KindSpec.disagrees`), up to `up_to`. `operations.widen_overlap` applies it."""

    project = models.OneToOneField(Project, models.CASCADE, related_name="adaptive_overlap")
    kind = models.CharField(max_length=20, validators=[validate_kind])
    field = models.CharField(max_length=50)
    start = models.PositiveSmallIntegerField(default=2)
    up_to = models.PositiveSmallIntegerField(default=3)


class OverlapWait(models.Model):
    """An item adaptive overlap would widen but could not: nobody who can still work was
    free (issue 38, H2). It waits for the next eligible person (operations.retry_waiting)
    and the report counts it."""

    item = models.OneToOneField("Item", models.CASCADE, related_name="overlap_wait")
    since = models.DateTimeField(default=timezone.now)


# --------------------------------------------------------------------------- data version


def bump_data_version(project: int | Subquery) -> None:
    """Mark a project's data as changed, in the caller's transaction: cached reports of
    it are not served again (reports.cached_report). Every write a report reads calls
    this: the receivers below for single rows, and the bulk paths (ingest.save_records,
    assign, hiring.fill_queue, Label Studio sync) themselves."""
    Project.objects.filter(pk=project).update(data_version=F("data_version") + 1)


def project_of(model: type[models.Model], pk: int | None, path: str) -> Subquery:
    """The project of the `model` row `pk`, reached by `path`, as a subquery."""
    return Subquery(model._default_manager.filter(pk=pk).values(path)[:1])


def project_of_item(item_id: int) -> Subquery:
    return project_of(Item, item_id, "project_id")


# model -> its project (an id, or a subquery giving it: one UPDATE, no extra read)
PROJECT_OF: dict[type[models.Model], Any] = {
    Membership: lambda o: o.project_id,
    Document: lambda o: o.project_id,
    System: lambda o: o.project_id,
    Item: lambda o: o.project_id,
    Deletion: lambda o: o.project_id,
    PipelineRun: lambda o: o.project_id,
    ClaimList: lambda o: project_of(Document, o.document_id, "project_id"),
    Segment: lambda o: project_of(Document, o.document_id, "project_id"),
    Claim: lambda o: project_of(ClaimList, o.claim_list_id, "document__project_id"),
    Evidence: lambda o: project_of(Claim, o.claim_id, "claim_list__document__project_id"),
    Verdict: lambda o: project_of(System, o.system_id, "project_id"),
    Assignment: lambda o: project_of_item(o.item_id),
    Adjudication: lambda o: project_of_item(o.item_id),
}


def data_changed(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    if not kwargs.get("raw"):  # not while loading fixtures
        bump_data_version(PROJECT_OF[sender](instance))


def track_data(model: type[models.Model], project_of: Any, *, deletes: bool = False) -> None:
    """Bump the project's data version whenever a `model` row is saved (and deleted, for
    a small table: a receiver makes Django load every row it deletes)."""
    PROJECT_OF[model] = project_of
    post_save.connect(data_changed, sender=model, dispatch_uid=f"data-{model.__name__}")
    if deletes:
        post_delete.connect(data_changed, sender=model, dispatch_uid=f"data-del-{model.__name__}")


for _model, _project_of in list(PROJECT_OF.items()):
    track_data(_model, _project_of, deletes=_model in (Membership, Adjudication))
track_data(AdaptiveOverlap, lambda o: o.project_id)
track_data(OverlapWait, lambda o: project_of_item(o.item_id), deletes=True)


class ThrottleCounter(models.Model):
    """One throttle's count (login_throttle) in a window that ends at `until`: raised by
    one UPDATE ... SET count = count + 1 (never read, then written), so simultaneous
    requests cannot lose a count."""

    key = models.CharField(max_length=200, unique=True)
    count = models.PositiveIntegerField(default=0)
    until = models.DateTimeField(db_index=True)


def new_webhook_secret() -> str:
    return secrets.token_hex(32)


class Webhook(models.Model):
    """A URL the project notifies of its events (annotation.webhooks): each delivery is
    signed with the hook's own secret. Only URLs the operator allows
    (WEBHOOK_ALLOWED_TARGETS) are accepted and called."""

    EVENTS = (
        "assignment.submitted",
        "item.completed",
        "hire.finished",
        "hire.screened_out",
        "pipeline_run.finished",
        "import.finished",
    )

    project = models.ForeignKey(Project, models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=500)
    events = models.JSONField(default=list)  # names from EVENTS
    secret = models.CharField(max_length=64, default=new_webhook_secret)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(User, models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.url} ({', '.join(self.events)})"


class WebhookDelivery(models.Model):
    """One event for one hook: written in the transaction of the change it tells of, sent
    by the task worker (annotation.webhooks.attempt), retried with backoff until it is
    delivered or out of attempts; `log` holds one entry per attempt."""

    PENDING, SENDING, DELIVERED, FAILED = "pending", "sending", "delivered", "failed"
    STATUSES = [
        (PENDING, "Pending"),
        (SENDING, "Sending"),
        (DELIVERED, "Delivered"),
        (FAILED, "Failed"),
    ]

    hook = models.ForeignKey(Webhook, models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40)
    key = models.CharField(max_length=120)  # what happened, once per hook
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=20, choices=STATUSES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    claimed_until = models.DateTimeField(null=True, blank=True)
    response_code = models.PositiveIntegerField(null=True, blank=True)
    log = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["hook", "key"], name="webhook_delivery_once"),
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.event} #{self.pk} ({self.status})"
