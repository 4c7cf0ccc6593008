"""Hiring annotators (issue 18): the invite flow (join, a new annotator's queue), training
and known-answer scores, the pause rule, marking training and check items."""

from __future__ import annotations

import datetime as dt
import io
import random
import re
import secrets
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, models, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.crypto import salted_hmac
from statsmodels.stats.proportion import proportion_confint

from .. import kinds, safecsv, webhooks
from ..models import (
    Answer,
    Assignment,
    Document,
    Item,
    Membership,
    Project,
    System,
    Verdict,
    bump_data_version,
)
from ..stats.careless import Careless, careless
from .markets import MARKETS, OTHER, same_id
from .models import (
    CHECK,
    EXAMPLE,
    TRAINING,
    ErasedWorker,
    Hire,
    HiringPolicy,
    Invite,
    QualityItem,
    new_key,
    regular,
    started,
)

# --- joining ---------------------------------------------------------------------------

ALREADY_JOINED = (
    "You have joined this study already. To come back, open the personal link you were"
    " given when you joined (or use the browser you joined with): your worker id alone"
    " does not open your account."
)
BROWSER = re.compile(r"[A-Za-z0-9_-]{16,64}")  # the hiring cookie's value (Hire.browser)
ERASED = "This worker id's data was deleted at its owner's request: it cannot join again."


class JoinRefused(Exception):
    """Why nobody joins now. `code`: "closed" (the link is revoked, expired or full),
    "invalid" (a missing or malformed worker id, or another study's or a used session's
    id), "joined" (the worker id has an account: it is reached through its personal URL,
    never by the id alone)."""

    STATUS = {"closed": 410, "invalid": 400, "joined": 409}  # the pages' and the API's

    def __init__(self, message: str, code: str = "closed") -> None:
        super().__init__(message)
        self.code, self.status = code, self.STATUS[code]


def identity_hash(project_id: int, value: str) -> str:
    """A salted hash (HMAC keyed by SECRET_KEY) of a worker id or an address, per project:
    the same value gives the same hash, and the value cannot be read back."""
    return salted_hmac(
        "annotation.hiring.identity", f"{project_id}:{same_id(value)}", algorithm="sha256"
    ).hexdigest()


def join_params(invite: Invite, params: Mapping[str, object]) -> dict[str, str]:
    """The invite's worker id and extra parameters from a request, each in the documented
    form of the invite's market (markets.py; "other": 1-128 characters of [A-Za-z0-9_.:-]
    as given, the first a letter or digit); the worker id is required when the invite
    names one, and the market's study id when the invite gives it (and then equal)."""
    found = {}
    market = invite.market_rules
    for name in invite.params():
        value = params.get(name)
        if value is None or value == "":
            if name == invite.worker_param:
                raise JoinRefused(
                    f"This link needs your worker id in {name}: open it from the study page.",
                    "invalid",
                )
            if name == market.study_param and invite.study_id:
                raise JoinRefused(f"This link needs the study's id in {name}.", "invalid")
            continue
        pattern, rule = market.rule(name, name == invite.worker_param)
        if not isinstance(value, str) or not pattern.fullmatch(value):
            raise JoinRefused(f"{name}: give {rule}", "invalid")
        found[name] = value
    study = found.get(market.study_param) if invite.market != OTHER else None
    if invite.study_id and study is not None and same_id(study) != same_id(invite.study_id):
        raise JoinRefused(f"{market.study_param}: this link is for another study.", "invalid")
    return found


def join(
    invite: Invite, params: Mapping[str, object], *, browser: str = "", address: str = ""
) -> Hire:
    """A new pseudonymous account for the worker id in `params`, with its queue.
    JoinRefused says why not: an id that has an account already (in any letter case) is
    refused (its owner comes back through the personal URL), so knowing an id opens
    nothing; so is an id whose data was deleted, and a market session id already used.
    `browser` (the hiring cookie) and `address` (the client's address) are kept, the
    address as a salted hash, to link two accounts of one person (`suspicion`)."""
    if invite.revoked:
        raise JoinRefused(invite.problem() or "")
    found = join_params(invite, params)
    worker = found.get(invite.worker_param, "")
    project_id = invite.project_id
    if worker and ErasedWorker.objects.filter(
        project_id=project_id, digest=identity_hash(project_id, worker)
    ):
        raise JoinRefused(ERASED, "invalid")
    session_param = invite.market_rules.session_param if invite.market != OTHER else ""
    session = found.get(session_param) if session_param else None
    return_overdue(invite.project)  # the overdue give their open items back first
    expire_unstarted(invite.project)  # and those who joined but never started
    with transaction.atomic():
        # Lock the invite row so two people cannot both take the last place under the cap.
        locked = Invite.objects.select_for_update().get(pk=invite.pk)
        if worker and Hire.objects.filter(invite__project_id=project_id, worker_id__iexact=worker):
            raise JoinRefused(ALREADY_JOINED, "joined")
        if session and Hire.objects.filter(
            invite__project_id=project_id, **{f"worker_params__{session_param}": session}
        ):
            raise JoinRefused(f"{session_param}: this session has an account already.", "invalid")
        problem = locked.problem()
        if problem:
            raise JoinRefused(problem)
        user = User(username=f"w-{secrets.token_hex(8)}")
        user.set_unusable_password()
        user.save()
        membership = invite.project.add_member(user, Membership.ANNOTATOR)
        extra = {p: v for p, v in found.items() if p != invite.worker_param}
        try:
            with transaction.atomic():
                hire = Hire.objects.create(
                    membership=membership,
                    invite=locked,
                    worker_id=worker,
                    worker_params=extra,
                    browser=browser[:64],
                    address=identity_hash(project_id, address) if address else "",
                )
        except IntegrityError:  # the same worker id, a moment earlier
            raise JoinRefused(ALREADY_JOINED, "joined") from None
        fill_queue(hire)
    return hire


def joined_here(user: Any, invite: Invite, params: Mapping[str, object]) -> Hire | None:
    """The Hire of this browser's logged-in user when it is the one the link's worker id
    names (a worker opening the study link again in the browser they joined with)."""
    worker = params.get(invite.worker_param) if invite.worker_param else None
    if not getattr(user, "is_authenticated", False) or not worker:
        return None
    return Hire.objects.filter(
        membership__user=user, invite__project=invite.project, worker_id__iexact=worker
    ).first()


def fill_queue(hire: Hire) -> int:
    """Give a new annotator the training items (first), `items_per_person` real items
    (the least covered ones) and known-answer checks at the policy's rate, the real
    items and checks shuffled together. Returns how many assignments were made."""
    membership = hire.membership
    project, user = membership.project, membership.user
    policy = HiringPolicy.of(project)
    items = Item.objects.filter(project=project).exclude(assignments__annotator=user)
    training = list(
        items.filter(quality__role=TRAINING).order_by("id").values_list("id", flat=True)
    )
    rng = random.Random()
    given_training = Assignment.objects.filter(
        annotator=user, item__project=project, item__quality__role=TRAINING
    ).exists()
    if policy.training_per_person and not given_training:
        # drawn per worker from the pool: one account's feedback does not give away
        # another's training items
        training = sorted(rng.sample(training, min(policy.training_per_person, len(training))))
    elif given_training:
        training = []  # a queue filled again gets no new training
    n_real = hire.invite.items_per_person if hire.invite else 0
    # a queue filled again (let through after a screen-out) tops up to the quota
    n_real -= Assignment.objects.filter(regular(), item__project=project, annotator=user).count()
    n_real = max(n_real, 0)
    real = list(
        items.filter(regular("pk"))
        .annotate(n=models.Count("assignments"))
        .order_by("n", "id")
        .values_list("id", flat=True)[:n_real]
    )
    checks = list(items.filter(quality__role=CHECK).values_list("id", flat=True))
    n_checks = min(
        len(checks),
        round(policy.check_rate * len(real) / (1 - policy.check_rate))
        if policy.check_rate < 1
        else len(checks),
    )
    mixed = real + rng.sample(checks, n_checks)
    rng.shuffle(mixed)
    start = Assignment.objects.in_project(project).for_annotator(user).count()
    rows = [
        Assignment(item_id=i, annotator=user, position=start + pos, swapped=rng.random() < 0.5)
        for pos, i in enumerate(training + mixed)
    ]
    Assignment.objects.bulk_create(rows)
    bump_data_version(project.pk)
    if not training and not hire.passed_training:  # nothing to train on: straight through
        hire.passed_training = True
        hire.save(update_fields=["passed_training"])
    return len(rows)


def check_pool_problem(project: Project, items_per_person: int) -> str | None:
    """Why checks could be told from real items (issue 38, M3), or None. Real items differ
    from one person to the next (the least covered go first) while checks are drawn from
    the marked pool: two accounts comparing queues find the shared items are the checks
    unless the pool is at least as large as the real items a person sees."""
    if HiringPolicy.of(project).check_rate <= 0:
        return None
    pool = QualityItem.objects.filter(item__project=project, role=CHECK).count()
    if pool >= items_per_person:
        return None
    return (
        f"Checks can be spotted: {pool} check item(s) are marked but each person gets"
        f" {items_per_person} real items, so the items two people share are the checks."
        f" Mark at least {items_per_person} checks (or give fewer items per person)."
    )


# --- training and checks: scores ---------------------------------------------------------


@dataclass(frozen=True)
class Score:
    units: int  # reference (unit, field) pairs answered
    matching: int

    @property
    def share(self) -> float | None:
        return self.matching / self.units if self.units else None

    def wilson(self, alpha: float = 0.05) -> tuple[float, float] | None:
        if not self.units:
            return None
        low, high = proportion_confint(self.matching, self.units, alpha=alpha, method="wilson")
        return float(low), float(high)


def score(user: User | int, project: Project, role: str) -> Score:
    """How many of the reference units of this role's submitted items the annotator
    answered like the reference (compared as the kind compares answers)."""
    uid = user if isinstance(user, int) else user.pk
    return scores(project, role, [uid]).get(uid, Score(0, 0))


def scores(project: Project, role: str, users: list[int] | None = None) -> dict[int, Score]:
    """`score` for every annotator of the project (or those in `users`) in three queries,
    whatever their number."""
    references = {
        q.item_id: q.reference_pairs()
        for q in QualityItem.objects.filter(item__project=project, role=role)
    }
    submitted = Assignment.objects.filter(
        item__project=project, item__quality__role=role, status=Assignment.SUBMITTED
    )
    if users is not None:
        submitted = submitted.filter(annotator__in=users)
    answers = Answer.objects.filter(assignment__in=submitted.values("pk")).values_list(
        "assignment__annotator_id",
        "assignment__item_id",
        "assignment__item__kind",
        "assignment__swapped",
        "unit",
        "field",
        "value",
    )
    given = {
        (user, item, unit, field): kinds.get(kind).comparable(field, value, swapped)
        for user, item, kind, swapped, unit, field, value in answers
    }
    counts: dict[int, list[int]] = {}
    for user, item in submitted.values_list("annotator_id", "item_id"):
        units_matching = counts.setdefault(user, [0, 0])
        for pair, value in references.get(item, {}).items():
            units_matching[0] += 1
            units_matching[1] += given.get((user, item, *pair)) == value
    return {user: Score(units, matching) for user, (units, matching) in counts.items()}


def presented(assignment: Assignment, field: str, value: str) -> str:
    """A reference value as this annotator's page names it (a comparison side as the
    list number they saw)."""
    spec = kinds.get(assignment.item.kind)
    f = spec.field(field)
    for raw in f.values if f else []:
        if spec.comparable(field, raw, assignment.swapped) == value:
            return raw
    return value


_LIST = re.compile(r"\b([Ll]ist) ([ABab])\b")


def worker_numbering(assignment: Assignment, text: str) -> str:
    """A researcher's text naming the stored lists "List A" / "List B" as this person saw
    them ("List 1" / "List 2"), for kinds that show two lists."""
    spec = kinds.get(assignment.item.kind)
    if spec.field("choice") is None:
        return text
    return _LIST.sub(lambda m: f"{m[1]} {presented(assignment, 'choice', m[2].lower())}", text)


def feedback_rows(assignment: Assignment, quality: QualityItem) -> list[dict[str, Any]]:
    """Per reference unit of a training item: the question, this person's answer, the
    reference in their own numbering and whether they were right."""
    given = assignment.answers_dict()
    spec = kinds.get(assignment.item.kind)
    rows = []
    for (unit, field), value in sorted(quality.reference_pairs().items()):
        f = spec.field(field)
        reference = presented(assignment, field, value)
        rows.append(
            {
                "unit": unit,
                "key": field,
                "field": f.label if f else field,
                "yours": given.get((unit, field), "–"),
                "reference": reference,
                "same": given.get((unit, field)) == reference,
            }
        )
    return rows


@dataclass(frozen=True)
class Example:
    """An instruction example as annotators are shown it (page and API alike)."""

    item: Item
    shown: Assignment  # never saved: the item in stored order (unswapped), no one's work
    answers: dict[tuple[str, str], str]  # the reference, values as the page names them
    explanation: str  # List A / List B as the page numbers them


def examples(project: Project) -> list[Example]:
    """The project's instruction examples in item order."""
    rows = []
    marked = (
        QualityItem.objects.filter(item__project=project, role=EXAMPLE)
        .select_related("item__document", "item__claim", "item__list_a", "item__list_b")
        .order_by("item_id")
    )
    for quality in marked:
        shown = Assignment(item=quality.item, swapped=False)
        answers = {
            (unit, field): presented(shown, field, value)
            for (unit, field), value in quality.reference_pairs().items()
        }
        rows.append(
            Example(quality.item, shown, answers, worker_numbering(shown, quality.explanation))
        )
    return rows


def hire_of(membership: Membership) -> Hire | None:
    try:
        return membership.hire
    except Hire.DoesNotExist:
        return None


AUTO_PAUSE = "check accuracy below the threshold"
CARELESS_OUT = "careless answering (screened out)"


def careless_of(membership: Membership, policy: HiringPolicy | None = None) -> Careless:
    """stats.careless on one annotator's submitted items (regular items and checks): their
    active seconds per kind against the project's median per kind, and the labels of each
    kind's main field in the order they submitted them; thresholds from the hiring policy
    (the defaults without one)."""
    project = membership.project
    policy = policy or HiringPolicy.of(project)
    submitted = Assignment.objects.filter(
        item__project=project, status=Assignment.SUBMITTED
    ).exclude(item__quality__role__in=[TRAINING, EXAMPLE])
    everyone: dict[str, list[float]] = {}
    for kind, seconds in submitted.values_list("item__kind", "active_seconds"):
        everyone.setdefault(kind, []).append(seconds)
    medians = {kind: statistics.median(v) for kind, v in everyone.items()}
    mine = submitted.filter(annotator_id=membership.user_id).order_by("submitted_at", "pk")
    own: dict[str, list[float]] = {}
    for kind, seconds in mine.values_list("item__kind", "active_seconds"):
        own.setdefault(kind, []).append(seconds)
    main = {spec.name: spec.main_field for spec in kinds.all_specs()}
    labels = [
        value
        for kind, field, value in Answer.objects.filter(assignment__in=mine, unit="item")
        .order_by("assignment__submitted_at", "assignment_id")
        .values_list("assignment__item__kind", "field", "value")
        if field == main.get(kind)
    ]
    return careless(
        own,
        medians,
        labels,
        fast_share=policy.careless_fast_share,
        same_share=policy.careless_same_share,
        run=policy.careless_run,
        min_seconds=policy.min_seconds_per_item,
    )


def after_submit(membership: Membership, assignment: Assignment | None = None) -> None:
    """After an answer (to `assignment`): keep the first answer to each submitted training
    item, decide training once every training item given has been answered or skipped
    (on those first answers: an edit after the feedback is stored but changes nothing),
    apply the automatic pause and record a completion. One update per answer: the hire's
    row is locked while it is read and written (issue 38, M1: two training answers at
    once each saved their own copy of first_answers and one was lost)."""
    if hire_of(membership) is None:
        return
    project = membership.project
    policy = HiringPolicy.of(project)
    with transaction.atomic():
        hire = Hire.objects.select_for_update().get(membership=membership)
        hire.membership = membership  # read by the rules below (project, user id)
        was_out = screened_out(hire)
        changed = []
        # one read of the training assignments: what is recorded and what is decided come
        # from the same rows (a submission committing between two reads cannot be
        # counted as done before its first answer is kept)
        given = list(
            Assignment.objects.in_project(project)
            .filter(annotator_id=membership.user_id, item__quality__role=TRAINING)
            .select_related("item")
        )
        for a in given:
            if a.status == Assignment.SUBMITTED and str(a.item_id) not in hire.first_answers:
                spec = kinds.get(a.item.kind)
                hire.first_answers[str(a.item_id)] = {
                    f"{unit}.{field}": spec.comparable(field, value, a.swapped)
                    for (unit, field), value in a.answers_dict().items()
                }
                changed.append("first_answers")
        decided = hire.passed_training or hire.failed_training
        if not decided and all(a.is_done for a in given):
            s = training_score(hire)
            if s.share is not None and s.share >= policy.pass_mark:
                hire.passed_training = True
                changed.append("passed_training")
            else:  # below the pass mark, or skipped: nothing submitted passes nothing
                hire.failed_training = True
                changed.append("failed_training")
        if policy.pause_below is not None and not hire.paused:
            s = score(membership.user, project, CHECK)
            if s.units >= policy.pause_after and (s.share or 0) < policy.pause_below:
                hire.paused, hire.paused_reason = True, AUTO_PAUSE
                changed += ["paused", "paused_reason"]
        if policy.careless_action and not hire.paused:
            found = careless_of(membership, policy)
            if found.careless:
                hire.paused = True
                hire.paused_reason = (
                    CARELESS_OUT
                    if policy.careless_action == "screen_out"
                    else f"careless: {'; '.join(found.reasons)}"[:200]
                )
                changed += ["paused", "paused_reason"]
        if changed:
            hire.save(update_fields=sorted(set(changed)))
        if not was_out and screened_out(hire):  # told in the same transaction
            reason = "training" if hire.failed_training else hire.paused_reason
            webhooks.hire_event(hire, "hire.screened_out", reason=_out_reason(reason))
    membership.hire = hire  # the request's copy: what the next page reads
    if screened_out(hire):  # the hire ends: their open items go to someone else
        give_back_open(hire.membership)
    record_completion(hire)


def training_score(hire: Hire) -> Score:
    """The training items' reference units matched by the first submitted answers; a
    training item skipped (or never answered) counts with none matching."""
    membership = hire.membership
    given = Assignment.objects.in_project(membership.project).filter(
        annotator_id=membership.user_id
    )
    references = QualityItem.objects.filter(
        role=TRAINING, item_id__in=given.values("item_id")
    ).values_list("item_id", "reference")
    units = matching = 0
    for item_id, reference in references:
        first = hire.first_answers.get(str(item_id), {})
        units += len(reference)
        matching += sum(first.get(key) == value for key, value in reference.items())
    return Score(units, matching)


def _open(membership: Membership, role: str) -> QuerySet[Assignment]:
    return (
        Assignment.objects.in_project(membership.project)
        .filter(annotator_id=membership.user_id)
        .open()
        .filter(item__quality__role=role)
    )


def blocked(membership: Membership, assignment: Assignment | None = None) -> str | None:
    """Why this annotator may not open `assignment` (or get new items): "returned" (past
    the time limit), "paused"; "training" while training is not passed (training items
    excepted); None when they may."""
    hire = hire_of(membership)
    if hire is None or (assignment is not None and assignment.is_done):
        return None  # their own past answers stay open to them
    if hire.returned_at or give_back_if_overdue(hire) or expire_if_unstarted(hire):
        return "returned"
    if hire.paused:
        return "paused"
    if hire.cleared or (assignment is not None and is_training(assignment)):
        return None
    return "training"


def is_training(assignment: Assignment) -> bool:
    """Whether the assignment's item is a training item: read with the assignment when
    its lookup annotated `training_item` (views.common.assignment_for_annotator), else
    one query."""
    known = getattr(assignment, "training_item", None)
    if known is not None:
        return bool(known)
    return QualityItem.objects.filter(item_id=assignment.item_id, role=TRAINING).exists()


def can_take_more(membership: Membership) -> bool:
    """Whether adaptive overlap may give this annotator one more item (issue 38, H2): a
    regular member not held back, or a hire still in progress (not completed, returned,
    paused or screened out, training passed) with fewer real items than their quota."""
    hire = hire_of(membership)
    if blocked(membership) is not None:
        return False
    if hire is None or hire.invite is None:
        return True
    if hire.completed_at is not None or status(hire) != IN_PROGRESS:
        return False
    real = Assignment.objects.filter(
        regular(), item__project_id=membership.project_id, annotator_id=membership.user_id
    ).count()
    return real < hire.invite.items_per_person


def edit_refused(membership: Membership) -> str | None:
    """Why this hired worker may not change an answer they submitted (or skipped):
    "returned", "paused", "screened_out", or "completed" under a policy that locks
    answers at completion; None when they may (regular members always may)."""
    hire = hire_of(membership)
    if hire is None or not hire.invited:
        return None
    if hire.returned_at:
        return "returned"
    if hire.paused:
        return "paused"
    if screened_out(hire):
        return "screened_out"
    if HiringPolicy.of(membership.project).lock_at_completion and (
        hire.completed_at is not None or completed(hire)
    ):
        return "completed"
    return None


def next_training(membership: Membership) -> Assignment | None:
    return _open(membership, TRAINING).first()


# --- a hire's state: completed, screened out, returned ------------------------------------

COMPLETED, SCREENED_OUT, IN_PROGRESS, RETURNED = (
    "completed",
    "screened out",
    "in progress",
    "returned",
)


def screened_out(hire: Hire) -> bool:
    """Training failed (and no researcher let them through) or paused for low check
    accuracy: the invite's screened-out code is theirs."""
    return (hire.failed_training and not hire.let_through) or (
        hire.paused and hire.paused_reason in (AUTO_PAUSE, CARELESS_OUT)
    )


@dataclass(frozen=True)
class Progress:
    """An annotator's assignments in a project, counted."""

    open: int = 0  # pending or draft
    given: int = 0  # not training items
    skipped: int = 0  # skipped, not training items
    real_submitted: int = 0  # regular items submitted
    training_submitted: int = 0
    seconds: float = 0.0  # active time


def progress(project: Project, users: list[int] | None = None) -> dict[int, Progress]:
    """`Progress` per annotator of the project (or those in `users`): one query."""
    training = Q(Exists(QualityItem.objects.filter(item_id=OuterRef("item_id"), role=TRAINING)))
    rows = Assignment.objects.filter(item__project=project)
    if users is not None:
        rows = rows.filter(annotator__in=users)
    counted = rows.values("annotator_id").annotate(
        n_open=Count("pk", filter=Q(status__in=[Assignment.PENDING, Assignment.DRAFT])),
        n_given=Count("pk", filter=~training),
        n_skipped=Count("pk", filter=~training & Q(status=Assignment.SKIPPED)),
        n_real=Count("pk", filter=regular() & Q(status=Assignment.SUBMITTED)),
        n_training=Count("pk", filter=training & Q(status=Assignment.SUBMITTED)),
        seconds=Sum("active_seconds"),
    )
    return {
        r["annotator_id"]: Progress(
            r["n_open"],
            r["n_given"],
            r["n_skipped"],
            r["n_real"],
            r["n_training"],
            r["seconds"] or 0.0,
        )
        for r in counted
    }


def _progress_of(hire: Hire, known: Progress | None) -> Progress:
    if known is not None:
        return known
    membership = hire.membership
    uid = membership.user_id
    return progress(membership.project, [uid]).get(uid, Progress())


def _has_open(hire: Hire) -> bool:
    """Whether the person holds a pending or draft item (progress's `open`)."""
    membership = hire.membership
    return Assignment.objects.filter(
        item__project_id=membership.project_id,
        annotator_id=membership.user_id,
        status__in=[Assignment.PENDING, Assignment.DRAFT],
    ).exists()


def completed(hire: Hire, known: Progress | None = None) -> bool:
    """Every item of the person's quota is done and submitted (at most the invite's
    `skips_allowed` skipped), and training was passed (or a researcher let them through).
    `known`: their `progress`, when counted already."""
    if hire.returned_at or hire.paused or not hire.cleared:
        return False
    if known is None and _has_open(hire):  # mid-queue: one plain query, not the counts
        return False
    p = _progress_of(hire, known)
    if p.open:
        return False
    if not p.given:  # nothing was given to them: no code for no work
        return False
    allowed = hire.invite.skips_allowed if hire.invite else 0
    return p.skipped <= allowed


def record_completion(hire: Hire) -> bool:
    """Record, once, that the hire completed their quota (`completed`), with the market id
    that earned it. Returns whether it is recorded now."""
    if hire.completed_at is not None or not completed(hire):
        return hire.completed_at is not None
    now = timezone.now()
    with transaction.atomic():
        if Hire.objects.filter(pk=hire.pk, completed_at__isnull=True).update(
            completed_at=now, completed_as=hire.worker_id
        ) and webhooks.wants(hire.membership.project_id, "hire.finished"):
            p = _progress_of(hire, None)
            webhooks.hire_event(
                hire, "hire.finished", items=p.real_submitted, training=p.training_submitted
            )
    hire.refresh_from_db(fields=["completed_at", "completed_as"])
    return True


def _out_reason(paused_reason: str) -> str:
    """Why a hire was screened out, as a webhook says it (no free text)."""
    return {AUTO_PAUSE: "checks", CARELESS_OUT: "careless"}.get(paused_reason, "training")


def status(hire: Hire, known: Progress | None = None) -> str:
    """A completed hire stays completed: widened items or a later return change nothing."""
    if hire.completed_at is not None:
        return COMPLETED
    if hire.returned_at:
        return RETURNED
    if screened_out(hire):
        return SCREENED_OUT
    return COMPLETED if completed(hire, known) else IN_PROGRESS


def give_back_open(membership: Membership) -> int:
    """The person's unsubmitted items go back to the pool (the next person who joins gets
    the least covered items); what they submitted stays. Used by every end of a hire:
    returned (time limit or a researcher), screened out (training failed, checks paused),
    and by removing a member (hired or not). Returns how many items were freed."""
    n, _ = (
        Assignment.objects.in_project(membership.project)
        .for_annotator(membership.user)
        .open()
        .delete()
    )
    if n:
        bump_data_version(membership.project_id)
    return int(n)


def give_back(hire: Hire) -> int:
    """The person is "returned": their unsubmitted items go back to the pool
    (give_back_open)."""
    with transaction.atomic():
        n = give_back_open(hire.membership)
        hire.returned_at = timezone.now()
        hire.save(update_fields=["returned_at"])
    return n


def return_overdue(project: Project) -> int:
    """Return everyone in the project past their invite's time limit and not finished.
    Returns how many were returned (their progress counted in one query)."""
    n = 0
    counted: dict[int, Progress] | None = None
    for hire in Hire.objects.filter(
        invite__project=project,
        invite__time_limit_minutes__isnull=False,
        returned_at__isnull=True,
    ).select_related("invite", "membership__project", "membership__user"):
        if not _past_limit(hire):
            continue
        if counted is None:
            counted = progress(project)
        n += give_back_if_overdue(hire, counted.get(hire.membership.user_id, Progress()))
    return n


def _past_limit(hire: Hire) -> bool:
    limit = hire.invite.time_limit_minutes if hire.invite else None
    return (
        hire.returned_at is None
        and limit is not None
        and timezone.now() >= hire.joined_at + dt.timedelta(minutes=limit)
    )


def give_back_if_overdue(hire: Hire, known: Progress | None = None) -> bool:
    """Return the person when their invite's time limit has passed and they are not
    finished (completed or screened out)."""
    if not _past_limit(hire):
        return False
    if status(hire, known) != IN_PROGRESS:
        return False
    give_back(hire)
    return True


def _unstarted(project: Project, since: dt.datetime | None = None) -> QuerySet[Hire]:
    """Hires in the project who submitted nothing within the policy's join_expiry_minutes
    of joining, not returned yet (`since`: that moment, when the caller has it)."""
    since = since or _expiry_start(project)
    if since is None:
        return Hire.objects.none()
    return Hire.objects.filter(
        ~started(project.pk),
        membership__project=project,
        invite__isnull=False,
        returned_at__isnull=True,
        joined_at__lte=since,
    )


def _expiry_start(project: Project) -> dt.datetime | None:
    """Who joined before this moment and submitted nothing is returned (None: never)."""
    minutes = HiringPolicy.of(project).join_expiry_minutes
    return None if minutes is None else timezone.now() - dt.timedelta(minutes=minutes)


def expire_unstarted(project: Project) -> int:
    """Return every hire who joined and submitted nothing in the policy's time: their
    items go back to the pool and their place under the invite's cap is free again."""
    n = 0
    for hire in _unstarted(project).select_related("membership__project", "membership__user"):
        give_back(hire)
        n += 1
    return n


def expire_if_unstarted(hire: Hire) -> bool:
    project = hire.membership.project
    since = _expiry_start(project)
    if (
        since is None
        or hire.invite_id is None
        or hire.returned_at is not None
        or hire.joined_at > since
    ):
        return False  # not one of _unstarted's, whatever they submitted: no query
    if not _unstarted(project, since).filter(pk=hire.pk).exists():
        return False
    give_back(hire)
    return True


# --- payments and personal data ------------------------------------------------------------


def _screened_out_row(row: Mapping[str, Any]) -> bool:
    return (row["failed_training"] and not row["let_through"]) or (
        row["paused"] and row["paused_reason"] in (AUTO_PAUSE, CARELESS_OUT)
    )


def suspicions(project: Project) -> dict[int, str]:
    """Hire id -> why paying them needs a look: the hire shares the browser that joined,
    the address (its salted hash) or the market's session id with another account of the
    project (one person joining again under a made-up id, e.g. after being screened out),
    or their completion was earned under another market id. A researcher's "pay anyway"
    (Hire.pay_cleared) clears it. Hires with nothing to say are left out."""
    rows: list[dict[str, Any]] = [
        dict(row)
        for row in Hire.objects.filter(membership__project=project).values(
            "pk",
            "membership_id",
            "worker_id",
            "worker_params",
            "browser",
            "address",
            "failed_training",
            "let_through",
            "paused",
            "paused_reason",
            "completed_at",
            "completed_as",
            "pay_cleared",
        )
    ]
    names = dict(project.memberships.values_list("pk", "pseudonym"))
    sessions = {m.session_param for m in MARKETS.values() if m.session_param}
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        marks = [("browser", row["browser"])]
        if settings.HIRING_FLAG_SAME_ADDRESS:
            marks.append(("address", row["address"]))
        marks += [(p, str(v)) for p, v in row["worker_params"].items() if p in sessions]
        for what, value in marks:
            if value:
                by.setdefault((what, value), []).append(row)
    words = {"browser": "the same browser", "address": "the same address"}
    found: dict[int, list[str]] = {}
    for (what, _), group in by.items():
        if len(group) < 2:
            continue
        for row in group:
            others = [
                f"{names.get(o['membership_id'], '?')}"
                + (" (screened out)" if _screened_out_row(o) else "")
                for o in group
                if o["pk"] != row["pk"]
            ]
            found.setdefault(row["pk"], []).append(
                f"{words.get(what, 'the same ' + what)} as {', '.join(others)}"
            )
    for row in rows:
        earned = row["completed_as"]
        if row["completed_at"] and same_id(earned) != same_id(row["worker_id"]):
            found.setdefault(row["pk"], []).append(
                "completed under another worker id" if row["worker_id"] else "worker id deleted"
            )
    cleared = {r["pk"] for r in rows if r["pay_cleared"]}
    return {pk: "; ".join(why) for pk, why in found.items() if pk not in cleared}


def payable_hires(project: Project) -> list[Hire]:
    """The hires a market payment may go to: completed (recorded with the market id that
    earned it, which is still theirs) and not flagged by `suspicions` (or cleared by a
    researcher). The payments export and the marketplace approval step read this; a
    completion code alone proves nothing (it is the same for the whole study)."""
    flagged = suspicions(project)
    return [
        h
        for h in Hire.objects.filter(
            membership__project=project, invited=True, completed_at__isnull=False
        )
        .exclude(worker_id="")
        .order_by("membership__pk")
        if h.pk not in flagged and same_id(h.completed_as) == same_id(h.worker_id)
    ]


def payments(project: Project) -> list[dict[str, Any]]:
    """Per hired worker: worker id and extra parameters, status, real items submitted,
    check accuracy with its 95% Wilson interval, active minutes, and the bonus at the
    hiring policy's rates (per real item submitted, per check unit answered right)."""
    return_overdue(project)
    policy = HiringPolicy.of(project)
    flagged = suspicions(project)
    payable = {h.pk for h in payable_hires(project)}
    rows = []
    hires = Hire.objects.filter(membership__project=project, invited=True).select_related(
        "invite", "membership__user", "membership__project"
    )
    counted, check_scores = progress(project), scores(project, CHECK)
    for hire in hires.order_by("membership__pk"):
        uid = hire.membership.user_id
        p = counted.get(uid, Progress())
        real = p.real_submitted
        checks = check_scores.get(uid, Score(0, 0))
        ci = checks.wilson()
        seconds = p.seconds
        bonus = policy.pay_per_item * real + policy.pay_per_correct_check * checks.matching
        rows.append(
            {
                "worker_id": hire.worker_id,
                "worker_params": hire.worker_params,
                "annotator": hire.membership.pseudonym,
                "membership": hire.membership_id,
                "status": status(hire, p),
                "real_items_submitted": real,
                "checks": checks.units,
                "checks_correct": checks.matching,
                "check_accuracy": checks.share,
                "check_ci_low": ci[0] if ci else None,
                "check_ci_high": ci[1] if ci else None,
                "active_minutes": round(seconds / 60, 1),
                "bonus": bonus.quantize(Decimal("0.01")),
                "payable": hire.pk in payable,
                "flag": flagged.get(hire.pk, ""),
            }
        )
    return rows


PAYMENT_COLUMNS = [
    "annotator",
    "status",
    "real_items_submitted",
    "checks",
    "checks_correct",
    "check_accuracy",
    "check_ci_low",
    "check_ci_high",
    "active_minutes",
    "bonus",
    "payable",
    "flag",
]


def payment_table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """The payments rows as a CSV header and lines, one column per extra parameter."""
    extra = sorted({p for r in rows for p in r["worker_params"]})
    lines = [
        [r["worker_id"], *[r["worker_params"].get(p, "") for p in extra]]
        + [r[c] for c in PAYMENT_COLUMNS]
        for r in rows
    ]
    return ["worker_id", *extra, *PAYMENT_COLUMNS], lines


def bulk_bonus(rows: list[dict[str, Any]]) -> str:
    """The marketplace's bulk-bonus layout: `worker_id,amount` lines, bonuses above 0,
    payable hires only (payable_hires)."""
    return "".join(
        f"{r['worker_id']},{r['bonus']}\n"
        for r in rows
        if r["worker_id"] and r["bonus"] > 0 and r["payable"]
    )


def payments_file(project: Project, layout: str = "csv") -> str:
    """The payments export as text: "csv" (every column) or "bonus" (the marketplace's
    bulk-bonus `worker_id,amount` lines)."""
    rows = payments(project)
    if layout == "bonus":
        return bulk_bonus(rows)
    out = io.StringIO()
    header, lines = payment_table(rows)
    writer = safecsv.writer(out)
    writer.writerow(header)
    writer.writerows(lines)
    return out.getvalue()


def worker_data(hire: Hire) -> dict[str, Any]:
    """Everything stored about one hired worker (a request for their personal data)."""
    membership = hire.membership
    answers = Answer.objects.filter(
        assignment__annotator=membership.user, assignment__item__project=membership.project
    ).values_list("assignment__item_id", "unit", "field", "value", "assignment__submitted_at")
    return {
        "worker_id": hire.worker_id,
        "worker_params": hire.worker_params,
        "annotator": membership.pseudonym,
        "joined_at": hire.joined_at.isoformat(),
        "status": status(hire),
        "answers": [
            {
                "item": item,
                "unit": unit,
                "field": field,
                "value": value,
                "submitted_at": at.isoformat() if at else None,
            }
            for item, unit, field, value, at in answers
        ],
    }


def erase(hire: Hire) -> None:
    """Delete a worker's ids: the answers stay under the pseudonym; the worker id, the
    extra parameters, the personal URL and the API token go. The id is remembered as a
    salted hash (identity_hash): it cannot join the project again."""
    from rest_framework.authtoken.models import Token

    if not hire.invited:
        raise ValueError("this annotator is a regular member, not a hired worker")
    if hire.worker_id:
        project_id = hire.membership.project_id
        ErasedWorker.objects.get_or_create(
            project_id=project_id, digest=identity_hash(project_id, hire.worker_id)
        )
    Token.objects.filter(user=hire.membership.user).delete()
    hire.worker_id, hire.worker_params, hire.key = "", {}, new_key()
    hire.erased_at = timezone.now()
    hire.save(update_fields=["worker_id", "worker_params", "key", "erased_at"])


def annotator_quality(user: User | int, project: Project) -> tuple[int, Score, Score]:
    """One annotator's training items submitted, training score and check score (the
    hiring page's and the report's "Annotator quality" figures)."""
    training_items = Assignment.objects.filter(
        annotator=user,
        status=Assignment.SUBMITTED,
        item__project=project,
        item__quality__role=TRAINING,
    ).count()
    return training_items, score(user, project, TRAINING), score(user, project, CHECK)


def quality_rows(project: Project) -> list[dict[str, Any]]:
    """Per annotator: training items and share matching the reference; check accuracy
    with its 95% Wilson interval; hire state. Worker ids are for the project's researchers."""
    rows = []
    counted = progress(project)
    training, checks = scores(project, TRAINING), scores(project, CHECK)
    members = project.memberships.filter(role=Membership.ANNOTATOR)
    for m in members.select_related("user", "hire").order_by("pk"):
        hire = hire_of(m)
        t_items = counted.get(m.user_id, Progress()).training_submitted
        t = training.get(m.user_id, Score(0, 0))
        c = checks.get(m.user_id, Score(0, 0))
        rows.append(
            {
                "annotator": m.pseudonym,
                "membership": m.pk,
                "training_items": t_items,
                "training_share": t.share,
                "checks": c.units,
                "check_accuracy": c.share,
                "check_ci": c.wilson(),
                "hired": hire is not None and hire.invited,
                "worker_id": hire.worker_id if hire else "",
                "passed_training": hire.passed_training if hire else None,
                "failed_training": hire.failed_training if hire else None,
                "let_through": hire.let_through if hire else None,
                "paused": hire.paused if hire else False,
            }
        )
    return rows


def set_state(
    membership: Membership, *, paused: bool | None = None, let_through: bool | None = None
) -> Hire:
    """A researcher pauses / resumes an annotator or lets them past training."""
    hire = hire_of(membership) or Hire.objects.create(
        membership=membership, passed_training=True, invited=False
    )
    hire.refresh_from_db()
    was_out = screened_out(hire)
    if paused is not None:
        hire.paused, hire.paused_reason = paused, ("paused by a researcher" if paused else "")
    if let_through is not None:
        hire.let_through = let_through
    hire.save()
    if was_out and not screened_out(hire) and hire.invite and not hire.returned_at:
        mine = Assignment.objects.in_project(membership.project).for_annotator(membership.user)
        if not mine.open().exists():  # their items went back when screened out: new ones
            fill_queue(hire)
    record_completion(hire)
    return hire


def reference_from(item: Item, system: System) -> dict[str, str]:
    """An item's reference answer from the verdicts of an imported system (a human
    reference set), as the item's kind reads them (KindSpec.reference_from)."""
    return kinds.get(item.kind).reference_from(item, Verdict.objects.filter(system=system))


MAX_EXPLANATION = 10_000


def mark(
    item: Item,
    role: str,
    reference: dict[str, str],
    explanation: str = "",
    *,
    system: System | None = None,
) -> QualityItem:
    """Mark an item as training, check or instruction example. The reference's keys are
    "unit.field" of the item's categorical fields; without one it comes from `system`'s
    verdicts, or else from the item's adjudications. An example needs an explanation and
    is never work: its unanswered assignments are withdrawn (answers given stay, left out
    of agreement, gold and exports like every marked item's)."""
    if role not in (TRAINING, CHECK, EXAMPLE):
        raise ValueError(f"role must be {TRAINING!r}, {CHECK!r} or {EXAMPLE!r}, not {role!r}")
    if len(explanation) > MAX_EXPLANATION:
        raise ValueError(f"the explanation is longer than {MAX_EXPLANATION:,} characters")
    if role == EXAMPLE and not explanation.strip():
        raise ValueError("an instruction example needs an explanation (why this is the answer)")
    if not reference and system is not None:
        reference = reference_from(item, system)
        if not reference:
            raise ValueError(f"{system.name} has no verdict on item {item.pk}")
    if not reference:
        reference = {f"{a.unit}.{a.field}": a.value for a in item.adjudications.all()}
    if not reference:
        raise ValueError("give a reference answer (or adjudicate the item first)")
    fields = kinds.categorical_fields(item.kind, item.project)
    for key, value in reference.items():
        unit, _, field = key.partition(".")
        if field not in fields:
            raise ValueError(f"{key}: {field!r} is not a categorical field of {item.kind} items")
        if fields[field] and value not in fields[field]:
            raise ValueError(f"{key}: {value!r} is not one of {', '.join(fields[field])}")
    with transaction.atomic():
        before = QualityItem.objects.filter(item=item).values("role", "reference", "explanation")
        was = before.first()
        q, _ = QualityItem.objects.update_or_create(
            item=item, defaults={"role": role, "reference": reference, "explanation": explanation}
        )
        if role == EXAMPLE:
            Assignment.objects.filter(item=item).open().delete()
        shown = {"role": role, "reference": reference, "explanation": explanation}
        if EXAMPLE in (role, was and was["role"]) and was != shown:
            # the examples are part of the instructions: annotators acknowledge them again
            Project.objects.filter(pk=item.project_id).update(
                instructions_version=F("instructions_version") + 1
            )
    return q


def mark_many(
    items: list[Item], role: str, *, system: System | None = None, explanation: str = ""
) -> tuple[int, list[str]]:
    """Mark several items (chosen from the items list, or `sample`d), each taking its
    reference from `system`'s verdicts or else its adjudications. Returns how many were
    marked and, for the others, why not (item id and the problem)."""
    marked, problems = 0, []
    for item in items:
        try:
            mark(item, role, {}, explanation, system=system)
        except ValueError as e:
            problems.append(f"item {item.pk}: {e}")
        else:
            marked += 1
    return marked, problems


def sample(project: Project, n: int, rng: random.Random | None = None) -> list[Item]:
    """Up to `n` items of each kind drawn at random among the project's unmarked items."""
    rng = rng or random.Random()
    chosen: list[Item] = []
    unmarked = Item.objects.filter(regular("pk"), project=project)
    for kind in sorted(set(unmarked.values_list("kind", flat=True))):
        ids = list(unmarked.filter(kind=kind).order_by("id").values_list("id", flat=True))
        chosen += Item.objects.filter(pk__in=rng.sample(ids, min(n, len(ids)))).order_by("id")
    return chosen


def mark_imported(items: list[Item]) -> int:
    """Mark new items from their document's import field `metadata.hiring.<kind>`:
    {"role": "training" | "check" | "example", "reference": {"unit.field": value},
    "explanation": ...}. ValueError names the document and the problem. Returns how many
    were marked."""
    if not items:
        return 0
    docs = {
        d.pk: d
        for d in Document.objects.filter(project_id=items[0].project_id, metadata__has_key="hiring")
    }
    n = 0
    for item in items:
        doc = docs.get(item.document_id)
        spec = doc.metadata["hiring"] if doc else None
        spec = spec.get(item.kind) if isinstance(spec, dict) else None
        if doc is None or spec is None:
            continue
        where = f"document {doc.external_id}: metadata.hiring.{item.kind}"
        if not isinstance(spec, dict) or not isinstance(spec.get("reference", {}), dict):
            raise ValueError(f"{where}: give an object with role, reference and explanation")
        try:
            mark(
                item,
                str(spec.get("role", "")),
                {str(k): str(v) for k, v in spec.get("reference", {}).items()},
                str(spec.get("explanation", "")),
            )
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
        n += 1
    return n
