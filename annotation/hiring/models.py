"""The hiring models (issue 18): training and known-answer items, the project's hiring
policy, invite links and the annotators who joined through them. They belong to the
`annotation` app (app label `annotation`); `AnnotationConfig.import_models` loads them.

- A QualityItem marks an item as TRAINING (a reference answer and an explanation shown
  after the annotator answers) or CHECK (a known answer, mixed into real queues). Answers
  to both are left out of agreement and gold (`regular()`, used by answers.read_answers).
- An Invite is a secret link that makes a pseudonymous annotator account (a Hire) in its
  project; the Hire's own secret key is the personal URL that logs them back in.
- An EXAMPLE is a worked example shown read-only under the project's instructions, with
  its reference answer and explanation (issue 29); never assigned as work, left out the
  same way (`regular()`).
- HiringPolicy: the project's pass mark, check rate, automatic pause threshold, training
  drawn per person and what careless answering does.
- An ErasedWorker is a deleted worker id kept as a salted hash: it cannot join again.
"""

from __future__ import annotations

import secrets
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.db.models.functions import Lower
from django.utils import timezone

from ..models import Assignment, Item, Membership, Project, project_of, project_of_item, track_data
from .markets import CHOICES, MARKETS, OTHER, Market

TRAINING = "training"
CHECK = "check"
EXAMPLE = "example"


def new_key() -> str:
    return secrets.token_urlsafe(32)


class QualityItem(models.Model):
    ROLES = [
        (TRAINING, "Training"),
        (CHECK, "Known-answer check"),
        (EXAMPLE, "Instruction example"),
    ]

    item = models.OneToOneField(Item, models.CASCADE, related_name="quality")
    role = models.CharField(max_length=20, choices=ROLES)
    # "unit.field" -> the reference value (the gold value of a check)
    reference = models.JSONField(default=dict)
    explanation = models.TextField(blank=True)  # after a training item; with an example

    def reference_pairs(self) -> dict[tuple[str, str], str]:
        return {(k.split(".", 1)[0], k.split(".", 1)[1]): v for k, v in self.reference.items()}


def regular(item: str = "item_id", *, joined: str | None = None) -> Q:
    """Rows (through their `item` path: "item_id" on an assignment) whose answers count for
    agreement, gold and reports: their item is not a quality item, nor deleted (a deleted
    item, restorable a while, is left out of every report, export and count). NOT EXISTS, not
    `item__quality__isnull=True`: PostgreSQL estimates that LEFT JOIN ... IS NULL as 0.5 %
    of the rows (whatever the data), and at 10,000 items planned the report's answers as
    nested loops and a sort spilled to disk (336 ms; as an anti join 200 ms).

    `joined`: the path of the item relation ("item") when the query joins the item anyway
    (its project, its kind): the deletion is then read off the joined row, the same rows
    without a subquery per row."""
    not_quality = Q(~Exists(QualityItem.objects.filter(item_id=OuterRef(item))))
    if joined is not None:
        return not_quality & Q(**{f"{joined}__deletion__isnull": True})
    return not_quality & Q(
        ~Exists(Item.all_objects.filter(pk=OuterRef(item), deletion__isnull=False))
    )


KEPT_POLICY = "_hiring_policy_kept"  # HiringPolicy.keep_for_request


class HiringPolicy(models.Model):
    project = models.OneToOneField(Project, models.CASCADE, related_name="hiring_policy")
    pass_mark = models.FloatField(default=0.8)  # share of training units like the reference
    check_rate = models.FloatField(default=0.0)  # share of a new queue that are checks
    pause_below = models.FloatField(null=True, blank=True)  # check accuracy that pauses
    pause_after = models.PositiveIntegerField(default=5)  # checks answered before it can
    # pay rates of the bonus column (payments export); the study plan reads the same
    pay_per_item = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal(0))
    pay_per_correct_check = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal(0))
    # training drawn per worker: this many of the marked training items (0: every one)
    training_per_person = models.PositiveIntegerField(default=0)
    # careless answering (stats.careless): what it does ("" nothing, "pause", "screen_out")
    careless_action = models.CharField(
        max_length=20,
        blank=True,
        choices=[("", "nothing"), ("pause", "pause"), ("screen_out", "screen out")],
    )
    careless_fast_share = models.FloatField(default=1 / 3)  # of the project's median time
    careless_same_share = models.FloatField(default=0.9)  # the same label on this share ...
    careless_run = models.PositiveIntegerField(default=10)  # ... of this many items in a row
    min_seconds_per_item = models.PositiveIntegerField(default=0)  # faster is careless
    # a hire who submits nothing within this many minutes of joining is returned and frees
    # their place under the invite's cap (empty: never)
    join_expiry_minutes = models.PositiveIntegerField(null=True, blank=True, default=30)
    # a hire who completed cannot change their submitted answers any more
    lock_at_completion = models.BooleanField(default=False)
    # the operator's Prolific workspace this project's studies use (prolific/workspaces.py,
    # by name; empty: the manual path only)
    prolific_workspace = models.CharField(max_length=100, blank=True)

    @classmethod
    def of(cls, project: Project) -> HiringPolicy:
        """The project's policy (made with the defaults when it has none); the one kept
        by `keep_for_request` when the request read it with the project."""
        kept = project.__dict__.get(KEPT_POLICY)
        return kept if kept is not None else cls.objects.get_or_create(project=project)[0]

    @classmethod
    def keep_for_request(cls, project: Project) -> None:
        """A project read for one request with its policy
        (`select_related("project__hiring_policy")`, as the annotator pages do): every
        hiring rule of the request reads that policy, not one query each. Only for such an
        instance (a long-lived one would keep a policy changed meanwhile)."""
        related = Project.hiring_policy.related
        if related.is_cached(project) and (policy := related.get_cached_value(project)):
            project.__dict__[KEPT_POLICY] = policy


class Invite(models.Model):
    project = models.ForeignKey(Project, models.CASCADE, related_name="invites")
    key = models.CharField(max_length=64, unique=True, default=new_key)
    note = models.CharField(max_length=300, blank=True)
    cap = models.PositiveIntegerField(null=True, blank=True)  # at most this many people
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked = models.BooleanField(default=False)
    # URL parameters holding the external worker id, then extra ids stored with it
    # empty: the link asks for no worker id (every Start makes a new account)
    worker_param = models.CharField(max_length=50, default="PROLIFIC_PID", blank=True)
    extra_params = models.JSONField(default=list, blank=True)  # ["STUDY_ID", "SESSION_ID"]
    items_per_person = models.PositiveIntegerField(default=0)  # real items given on joining
    completion_code = models.CharField(max_length=100, blank=True)
    completion_url = models.URLField(max_length=2000, blank=True)
    # shown when training fails or checks pause the person (Prolific's "screened out")
    screened_out_code = models.CharField(max_length=100, blank=True)
    screened_out_url = models.URLField(max_length=2000, blank=True)
    skips_allowed = models.PositiveIntegerField(default=0)  # skipped items still completing
    time_limit_minutes = models.PositiveIntegerField(null=True, blank=True)  # then returned
    created_by = models.ForeignKey(User, models.SET_NULL, null=True, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    # the market whose ids the link takes (markets.py: their documented forms)
    market = models.CharField(max_length=20, choices=CHOICES, default=OTHER)
    # the market's id of the study (Prolific's STUDY_ID): a join naming another is refused
    study_id = models.CharField(max_length=128, blank=True)

    @property
    def market_rules(self) -> Market:
        return MARKETS.get(self.market, MARKETS[OTHER])

    def params(self) -> list[str]:
        """The URL parameters a join reads: the worker id, the extra parameters, and the
        market's study and session ids."""
        m = self.market_rules
        names = [self.worker_param, *self.extra_params]
        if self.market != OTHER:
            names += [m.study_param, m.session_param]
        return list(dict.fromkeys(n for n in names if n))

    def problem(self) -> str | None:
        """Why nobody may join through this link now, or None."""
        if self.revoked:
            return "This invite link was revoked."
        if self.project.archived_at is not None:
            return "This study is closed."
        if self.expires_at is not None and timezone.now() >= self.expires_at:
            return "This invite link has expired."
        if self.cap is not None and self.places_taken() >= self.cap:
            return "This study is full."
        return None

    def places_taken(self) -> int:
        """The hires that hold a place under the cap: those who started working (submitted
        an answer), and those who joined and were not returned yet (a join that submits
        nothing in the policy's `join_expiry_minutes` is returned: `hiring.expire_unstarted`)."""
        return self.hires.filter(Q(returned_at__isnull=True) | Q(started(self.project_id))).count()


def started(project_id: int, user: str = "membership__user") -> Exists:
    """A hire (through its `user` path) submitted an answer in the project."""
    return Exists(
        Assignment.objects.filter(
            annotator=OuterRef(user), item__project_id=project_id, status=Assignment.SUBMITTED
        )
    )


class Hire(models.Model):
    """An annotator who joined through an invite link (or whom quality rules apply to)."""

    membership = models.OneToOneField(Membership, models.CASCADE, related_name="hire")
    invite = models.ForeignKey(Invite, models.SET_NULL, null=True, blank=True, related_name="hires")
    worker_id = models.CharField(max_length=200, blank=True)
    worker_params = models.JSONField(default=dict, blank=True)
    key = models.CharField(max_length=64, unique=True, default=new_key)  # personal URL
    passed_training = models.BooleanField(default=False)
    let_through = models.BooleanField(default=False)  # by a researcher
    paused = models.BooleanField(default=False)
    paused_reason = models.CharField(max_length=200, blank=True)
    failed_training = models.BooleanField(default=False)  # decided once, on first answers
    # training item id -> {"unit.field": comparable value}: the first submitted answer
    first_answers = models.JSONField(default=dict, blank=True)
    joined_at = models.DateTimeField(default=timezone.now)
    returned_at = models.DateTimeField(null=True, blank=True)  # open items back to the pool
    erased_at = models.DateTimeField(null=True, blank=True)  # worker id and params removed
    # The quota done (hiring.completed), once: the time and the market id that earned it.
    # A completed hire stays completed (later widening or edits change nothing).
    completed_at = models.DateTimeField(null=True, blank=True)
    completed_as = models.CharField(max_length=200, blank=True)
    pay_cleared = models.BooleanField(default=False)  # a researcher's "pay anyway" (flags)
    # What links two accounts of one person (issue 38): the browser's hiring cookie and a
    # salted hash of the address that joined (hiring.identity_hash), never the address.
    browser = models.CharField(max_length=64, blank=True, db_index=True)
    address = models.CharField(max_length=64, blank=True, db_index=True)
    # False: a regular member whose pause or let-through a researcher set (`set_state`):
    # never a hired worker (no payments row, no bonus, no personal data to delete)
    invited = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                Lower("worker_id"),
                "invite",
                condition=~Q(worker_id=""),
                name="one_worker_per_invite_any_case",
            )
        ]

    @property
    def cleared(self) -> bool:
        return self.passed_training or self.let_through


class ErasedWorker(models.Model):
    """A worker id whose data was deleted (hiring.erase), kept as a salted hash
    (hiring.identity_hash, keyed by SECRET_KEY) so the id cannot join the project again
    and the id itself is not stored."""

    project = models.ForeignKey(Project, models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "digest"], name="one_erased_id_per_project")
        ]


# The report's quality section reads these: a change invalidates cached reports.
track_data(HiringPolicy, lambda o: o.project_id)
track_data(Hire, lambda o: project_of(Membership, o.membership_id, "project_id"))
track_data(QualityItem, lambda o: project_of_item(o.item_id))
