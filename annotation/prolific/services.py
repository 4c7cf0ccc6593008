"""What the hiring page, the API and the `prolific` command do with Prolific's API
(issue 41): a draft study from an invite, publish and pause it, pull its submissions and
match them to hires, approve those that completed here, reject or return others only with
Prolific's required reason and the researcher's confirmation, and pay bonuses exactly once.

Who may be paid is the hiring rule (`hiring.payable_hires`: completed under the market id
that earned it, not flagged): a completion code alone proves nothing.

Bonuses, exactly once: a `ProlificBonus` per hire and amount is written (`pending`) before
Prolific is asked for anything; it becomes `sent`, with the bulk bonus id, before the pay
call (Prolific's pay call is not idempotent) and `paid` after it. `reconcile` settles what
a killed process or an unanswered call left: a `pending` record was never sent to pay
(void); a `sent` one is paid when the submission's `bonus_payments` (read back from
Prolific) hold its amount more often than the records already paid there. While a record
is `sent` and not confirmed, no more bonuses of the study are paid.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone

from .. import hiring
from ..hiring.markets import PROLIFIC, same_id
from ..hiring.models import Hire, HiringPolicy, Invite, regular
from ..hiring.services import Progress, progress
from ..models import Assignment, Project
from .client import REJECTION_CATEGORIES, Client, ProlificError, Unanswered
from .models import ProlificBonus, ProlificStudy, ProlificSubmission
from .workspaces import Workspace, get

AWAITING = "AWAITING REVIEW"
MAX_REWARD_CENTS = 10_000  # a study's reward per place: more is refused as a typo
MAX_PLACES = 10_000
MIN_REJECTION_MESSAGE = 100  # Prolific: "It must be at least 100 chars long"


def workspace_of(project: Project) -> Workspace:
    """The project's workspace; ValueError when it has none or the operator removed it."""
    return get(HiringPolicy.of(project).prolific_workspace)


def set_workspace(project: Project, name: str) -> None:
    if name:
        get(name)  # ValueError for a name the operator did not configure
    policy = HiringPolicy.of(project)
    policy.prolific_workspace = name
    policy.save(update_fields=["prolific_workspace"])


def _client(study_or_project: ProlificStudy | Project, client: Client | None) -> Client:
    if client is not None:
        return client
    if isinstance(study_or_project, ProlificStudy):
        return get(study_or_project.workspace).client()
    return workspace_of(study_or_project).client()


def pilot_minutes(invite: Invite) -> int:
    """The pilot's median active time per item (the project's submitted answers that count)
    times the invite's quota, in whole minutes (at least 1)."""
    seconds = list(
        Assignment.objects.filter(
            regular(),
            item__project_id=invite.project_id,
            status=Assignment.SUBMITTED,
            active_seconds__gt=0,
        ).values_list("active_seconds", flat=True)
    )
    if not seconds:
        raise ValueError(
            "No pilot answers with an active time yet: answer a few items first, or give "
            "the estimated minutes."
        )
    if not invite.items_per_person:
        raise ValueError("The invite gives no items per person: the time has no quota.")
    return max(1, math.ceil(statistics.median(seconds) * invite.items_per_person / 60))


def study_body(
    invite: Invite,
    url: str,
    *,
    name: str,
    description: str,
    reward_cents: int,
    places: int,
    minutes: int,
) -> dict[str, Any]:
    """The draft study Prolific's `POST /studies/` takes (its reference's CreateStudy)."""
    codes = [
        {
            "code": invite.completion_code,
            "code_type": "COMPLETED",
            "actions": [{"action": "MANUALLY_REVIEW"}],
            "actor": "participant",
        }
    ]
    if invite.screened_out_code:
        codes.append(
            {
                "code": invite.screened_out_code,
                "code_type": "OTHER",
                "actions": [{"action": "MANUALLY_REVIEW"}],
                "actor": "participant",
            }
        )
    return {
        "name": name,
        "internal_name": f"{invite.project.name} / invite {invite.pk}",
        "description": description,
        "external_study_url": url,
        "prolific_id_option": "url_parameters",
        "completion_codes": codes,
        "total_available_places": places,
        "estimated_completion_time": minutes,
        "reward": reward_cents,
        "device_compatibility": [],
        "peripheral_requirements": [],
    }


def _check_new_study(invite: Invite, reward_cents: int, places: int) -> None:
    if invite.market != PROLIFIC:
        raise ValueError("The invite's market is not Prolific.")
    if invite.revoked:
        raise ValueError("The invite was revoked.")
    if invite.study_id:
        raise ValueError(f"The invite already names the study {invite.study_id}.")
    if not invite.completion_code:
        raise ValueError("The invite needs a completion code (Prolific takes codes, not URLs).")
    if not 1 <= reward_cents <= MAX_REWARD_CENTS:
        raise ValueError(f"The reward is {reward_cents} cents: 1 to {MAX_REWARD_CENTS} allowed.")
    if not 1 <= places <= MAX_PLACES:
        raise ValueError(f"The places are {places}: 1 to {MAX_PLACES} allowed.")


def create_study(
    invite: Invite,
    url: str,
    *,
    name: str,
    description: str,
    reward_cents: int,
    places: int | None = None,
    minutes: int | None = None,
    by: User | None = None,
    client: Client | None = None,
) -> ProlificStudy:
    """A draft study on Prolific for `invite` (`url`: urls.study_url). The record is written
    first, so a second click makes no second draft; a refused call removes it."""
    places = places or invite.cap or 0
    _check_new_study(invite, reward_cents, places)
    minutes = minutes or pilot_minutes(invite)
    workspace = workspace_of(invite.project)
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction survives
            record = ProlificStudy.objects.create(
                invite=invite, workspace=workspace.name, study_id="", created_by=by
            )
    except IntegrityError:
        raise ValueError("This invite has a Prolific study already.") from None
    body = study_body(
        invite,
        url,
        name=name,
        description=description,
        reward_cents=reward_cents,
        places=places,
        minutes=minutes,
    )
    try:
        answer = _client(record, client).create_study(body)
    except (ProlificError, ValueError):
        record.delete()
        raise
    record.study_id, record.status = answer["id"], answer.get("status", "UNPUBLISHED")
    record.save(update_fields=["study_id", "status"])
    Invite.objects.filter(pk=invite.pk).update(study_id=record.study_id)
    return record


TRANSITIONS = {"publish": "PUBLISH", "pause": "PAUSE", "start": "START"}


def transition(study: ProlificStudy, action: str, client: Client | None = None) -> ProlificStudy:
    """Publish, pause or start again (Prolific's study transition)."""
    if action not in TRANSITIONS:
        raise ValueError(f"Choose {', '.join(TRANSITIONS)}.")
    if not study.study_id:
        raise ValueError("The study is being created: try again in a moment.")
    answer = _client(study, client).transition_study(study.study_id, TRANSITIONS[action])
    study.status = answer.get("status", study.status)
    study.save(update_fields=["status"])
    return study


def _hire_for(hires: list[Hire], participant: str, submission_id: str) -> Hire | None:
    """The hire who joined with the participant's id (the one with this SESSION_ID first)."""
    mine = [h for h in hires if h.worker_id and same_id(h.worker_id) == same_id(participant)]
    mine.sort(key=lambda h: h.worker_params.get("SESSION_ID") != submission_id)
    return mine[0] if mine else None


def pull(study: ProlificStudy, client: Client | None = None) -> list[ProlificSubmission]:
    """The study's submissions from Prolific, stored and matched to the invite's hires."""
    rows = _client(study, client).submissions(study.study_id)
    hires = list(Hire.objects.filter(invite=study.invite).select_related("membership"))
    for row in rows:
        ProlificSubmission.objects.update_or_create(
            submission_id=row["id"],
            defaults={
                "study": study,
                "participant_id": row.get("participant_id") or row.get("participant") or "",
                "status": row.get("status", ""),
                "study_code": row.get("study_code") or "",
                "started_at": row.get("started_at") or "",
                "completed_at": row.get("completed_at") or "",
                "hire": _hire_for(hires, row.get("participant_id") or "", row["id"]),
            },
        )
    study.synced_at = timezone.now()
    study.save(update_fields=["synced_at"])
    return list(study.submissions.select_related("hire__membership").order_by("pk"))


def review_rows(study: ProlificStudy) -> list[dict[str, Any]]:
    """Per stored submission: Prolific's status, the hire it matched, their status here,
    and whether approving pays a completed hire (`payable`). Progress is counted once."""
    project = study.invite.project
    payable = {h.pk for h in hiring.payable_hires(project)}
    counted = progress(project)
    rows = []
    for s in study.submissions.select_related("hire__membership", "hire__invite").order_by("pk"):
        rows.append(
            {
                "submission_id": s.submission_id,
                "participant_id": s.participant_id,
                "status": s.status,
                "annotator": s.hire.membership.pseudonym if s.hire else "",
                "here": hiring.status(s.hire, counted.get(s.hire.membership.user_id, Progress()))
                if s.hire
                else "no hire with this id",
                "payable": s.hire_id in payable,
            }
        )
    return rows


def approve(study: ProlificStudy, client: Client | None = None) -> dict[str, list[str]]:
    """Approve, on Prolific, the submissions awaiting review whose hire is payable here;
    the others are listed with the reason they were left."""
    c = _client(study, client)
    pull(study, c)
    approved, left = [], []
    for row in review_rows(study):
        if row["status"] != AWAITING:
            continue
        if not row["payable"]:
            left.append(f"{row['participant_id']}: {row['here']}, not payable here")
            continue
        answer = c.transition_submission(row["submission_id"], {"action": "APPROVE"})
        ProlificSubmission.objects.filter(submission_id=row["submission_id"]).update(
            status=answer.get("status", "APPROVED")
        )
        approved.append(row["participant_id"])
    return {"approved": approved, "left": left}


def refuse(
    study: ProlificStudy,
    submission_ids: list[str],
    *,
    action: str,
    category: str = "",
    message: str = "",
    reasons: list[str] | None = None,
    confirmed: bool = False,
    client: Client | None = None,
) -> list[dict[str, Any]]:
    """Reject (with Prolific's category and a message of at least 100 characters) or ask
    to return (with reasons) these submissions. Without `confirmed`, nothing is sent: the
    rows it would change are returned for the researcher to confirm. A payable hire's
    submission is never refused."""
    rows = {r["submission_id"]: r for r in review_rows(study)}
    chosen = [rows[s] for s in dict.fromkeys(submission_ids) if s in rows]
    if not chosen or len(chosen) != len(set(submission_ids)):
        raise ValueError("Choose submissions of this study (pull them first).")
    body = _refusal(action, category, message, reasons or [])
    for row in chosen:
        if row["payable"]:
            raise ValueError(f"{row['participant_id']} completed here: approve, not {action}.")
        allowed = (AWAITING,) if action == "reject" else (AWAITING, "ACTIVE")
        if row["status"] not in allowed:
            raise ValueError(
                f"{row['participant_id']} is {row['status']} on Prolific: not {action}."
            )
    if not confirmed:
        return chosen
    c = _client(study, client)
    for row in chosen:
        if action == "reject":
            answer = c.transition_submission(row["submission_id"], body)
            ProlificSubmission.objects.filter(submission_id=row["submission_id"]).update(
                status=answer.get("status", "REJECTED")
            )
        else:
            c.request_return(row["submission_id"], body["request_return_reasons"])
    return chosen


def _refusal(action: str, category: str, message: str, reasons: list[str]) -> dict[str, Any]:
    if action == "reject":
        if category not in REJECTION_CATEGORIES:
            raise ValueError(f"A rejection category: one of {', '.join(REJECTION_CATEGORIES)}.")
        if len(message.strip()) < MIN_REJECTION_MESSAGE:
            raise ValueError(
                f"Prolific requires a message of at least {MIN_REJECTION_MESSAGE} characters "
                "telling the participant why."
            )
        return {"action": "REJECT", "rejection_category": category, "message": message.strip()}
    if action == "return":
        kept = [r.strip() for r in reasons if r.strip()]
        if not kept:
            raise ValueError("Prolific requires at least one reason to ask for a return.")
        return {"request_return_reasons": kept}
    raise ValueError("Choose reject or return.")


# --- bonuses, exactly once -------------------------------------------------------------------


def cents(amount: Decimal) -> int:
    return int((amount * 100).to_integral_value())


def _recorded(hire_ids: list[int]) -> dict[int, Decimal]:
    """Per hire, the bonuses recorded and not void (pending, sent or paid)."""
    rows = (
        ProlificBonus.objects.filter(hire_id__in=hire_ids)
        .exclude(state=ProlificBonus.VOID)
        .values("hire_id")
        .annotate(total=Sum("amount"))
    )
    return {r["hire_id"]: r["total"] for r in rows}


def bonuses_due(
    study: ProlificStudy,
) -> tuple[list[tuple[Hire, ProlificSubmission, Decimal]], list[str]]:
    """(hire, their submission, the bonus still to pay) for the study's payable hires, at
    the hiring policy's rates less what was recorded; and the hires left out, with why."""
    project = study.invite.project
    rows = {r["membership"]: r for r in hiring.payments(project) if r["payable"] and r["bonus"] > 0}
    hires = list(
        Hire.objects.filter(invite=study.invite, membership_id__in=rows).select_related(
            "membership"
        )
    )
    subs = {s.hire_id: s for s in study.submissions.filter(hire__in=hires).order_by("pk")}
    recorded = _recorded([h.pk for h in hires])
    due, left = [], []
    for hire in hires:
        rest = rows[hire.membership_id]["bonus"] - recorded.get(hire.pk, Decimal(0))
        if rest <= 0:
            continue
        if hire.pk not in subs:
            left.append(f"{hire.membership.pseudonym}: no Prolific submission pulled")
            continue
        due.append((hire, subs[hire.pk], rest))
    return due, left


def pay_bonuses(
    study: ProlificStudy, by: User | None = None, client: Client | None = None
) -> dict[str, Any]:
    """Pay the bonuses due (bonuses_due) through one bulk bonus, exactly once. Call it in
    autocommit (as the page, the API and the command do): each record must be committed
    before the call it guards."""
    c = _client(study, client)
    reconcile(study, c)
    if study.bonuses.filter(state=ProlificBonus.SENT).exists():
        raise ValueError(
            "A bonus was sent to Prolific and is not confirmed paid yet: reconcile again "
            "later (Prolific pays bonuses within minutes) before paying more."
        )
    due, left = bonuses_due(study)
    limit = get(study.workspace).max_bonus
    too_big = [f"{h.membership.pseudonym}: {a}" for h, _, a in due if a > limit]
    if too_big:
        raise ValueError(
            f"Bonuses above the workspace's limit of {limit} refused: {'; '.join(too_big)}."
        )
    if not due:
        return {"paid": [], "left": left}
    records = _record(study, due, by)
    try:
        bulk = c.create_bonus_payments(
            study.study_id, "\n".join(f"{r.participant_id},{r.amount}" for r in records)
        )
    except ProlificError as e:
        _void(records, str(e))
        raise
    ids = [r.pk for r in records]
    sent = ProlificBonus.objects.filter(pk__in=ids, state=ProlificBonus.PENDING).update(
        state=ProlificBonus.SENT, bulk_id=bulk["id"]
    )
    if sent != len(ids):  # a reconcile voided them meanwhile: pay nothing
        ProlificBonus.objects.filter(pk__in=ids, state=ProlificBonus.SENT).update(
            state=ProlificBonus.VOID
        )
        raise ValueError("These bonuses were settled meanwhile: pay again to see what is due.")
    try:
        c.pay_bonus_payments(bulk["id"])
    except Unanswered:
        raise  # sent, unknown: reconcile reads Prolific's state back
    except ProlificError as e:
        _void(records, str(e))
        raise
    ProlificBonus.objects.filter(pk__in=ids, state=ProlificBonus.SENT).update(
        state=ProlificBonus.PAID, paid_at=timezone.now()
    )
    return {"paid": [f"{r.participant_id}: {r.amount}" for r in records], "left": left}


def _record(
    study: ProlificStudy, due: list[tuple[Hire, ProlificSubmission, Decimal]], by: User | None
) -> list[ProlificBonus]:
    """The records, written before any call; a concurrent payment of the same amounts
    fails here (one record per hire and total)."""
    recorded = _recorded([h.pk for h, _, _ in due])
    try:
        with transaction.atomic():
            return [
                ProlificBonus.objects.create(
                    hire=hire,
                    study=study,
                    submission_id=sub.submission_id,
                    participant_id=sub.participant_id,
                    amount=amount,
                    covers_to=recorded.get(hire.pk, Decimal(0)) + amount,
                    created_by=by,
                )
                for hire, sub, amount in due
            ]
    except IntegrityError:
        raise ValueError("These bonuses are being paid by another request already.") from None


def _void(records: list[ProlificBonus], error: str) -> None:
    ProlificBonus.objects.filter(pk__in=[r.pk for r in records]).exclude(
        state=ProlificBonus.PAID
    ).update(state=ProlificBonus.VOID, error=error[:2000])


def reconcile(study: ProlificStudy, client: Client | None = None) -> dict[str, int]:
    """Settle what a killed process or an unanswered call left: `pending` records were
    never sent to pay (void); a `sent` one is paid when its submission's bonus payments on
    Prolific hold its amount more often than the records paid there already."""
    voided = study.bonuses.filter(state=ProlificBonus.PENDING).update(
        state=ProlificBonus.VOID, error="never sent to pay (settled by reconcile)"
    )
    sent = list(study.bonuses.filter(state=ProlificBonus.SENT).order_by("pk"))
    if not sent:
        return {"void": voided, "paid": 0, "unconfirmed": 0}
    c = _client(study, client)
    confirmed = 0
    for submission_id in dict.fromkeys(r.submission_id for r in sent):
        shown = Counter(int(x) for x in c.submission(submission_id).get("bonus_payments") or [])
        ours = Counter(
            cents(a)
            for a in study.bonuses.filter(
                submission_id=submission_id, state=ProlificBonus.PAID
            ).values_list("amount", flat=True)
        )
        for record in (r for r in sent if r.submission_id == submission_id):
            c_ = cents(record.amount)
            if shown[c_] > ours[c_]:
                ours[c_] += 1
                confirmed += ProlificBonus.objects.filter(
                    pk=record.pk, state=ProlificBonus.SENT
                ).update(state=ProlificBonus.PAID, paid_at=timezone.now())
    return {"void": voided, "paid": confirmed, "unconfirmed": len(sent) - confirmed}


def release(study: ProlificStudy, confirmed: bool = False) -> int:
    """Void the bonuses sent and still unconfirmed after `reconcile`, once the researcher
    has checked on Prolific that they were not paid (its pay call failed before paying):
    they can then be paid again. Without `confirmed`, nothing changes; returns how many."""
    sent = study.bonuses.filter(state=ProlificBonus.SENT)
    if not confirmed:
        return sent.count()
    return sent.update(state=ProlificBonus.VOID, error="released: not paid on Prolific")


ACTIONS = (
    "create",
    "publish",
    "pause",
    "start",
    "pull",
    "approve",
    "reject",
    "return",
    "bonus",
    "reconcile",
    "release",
)


def study_of(invite: Invite) -> ProlificStudy:
    study = ProlificStudy.objects.filter(invite=invite).exclude(study_id="").first()
    if study is None:
        raise ValueError("This invite has no Prolific study yet: create the draft first.")
    return study


def act(invite: Invite, action: str, params: dict[str, Any], *, by: User, url: str) -> Any:
    """One researcher's action on the invite's study, as the page and the API both ask:
    `params` holds the action's inputs (the forms' and the serializer's names). Raises
    ValueError for a refused input, ProlificError for Prolific's refusal or silence."""
    if action == "create":
        return create_study(
            invite,
            url,
            name=params["name"],
            description=params["description"],
            reward_cents=params["reward_cents"],
            places=params.get("places"),
            minutes=params.get("estimated_minutes"),
            by=by,
        )
    study = study_of(invite)
    if action in TRANSITIONS:
        return transition(study, action)
    if action == "pull":
        return len(pull(study))
    if action == "approve":
        return approve(study)
    if action in ("reject", "return"):
        return refuse(
            study,
            params.get("submissions") or [],
            action=action,
            category=params.get("category", ""),
            message=params.get("message", ""),
            reasons=params.get("reasons") or [],
            confirmed=bool(params.get("confirm")),
        )
    if action == "bonus":
        return pay_bonuses(study, by)
    if action == "reconcile":
        return reconcile(study)
    if action == "release":
        return release(study, bool(params.get("confirm")))
    raise ValueError(f"Choose one of {', '.join(ACTIONS)}.")


def state(invite: Invite) -> dict[str, Any]:
    """What the page and the API show of the invite's study: the study, its submissions
    (review_rows) and the bonus records."""
    study = ProlificStudy.objects.filter(invite=invite).first()
    if study is None:
        return {"study": None, "submissions": [], "bonuses": []}
    return {
        "study": {
            "study_id": study.study_id,
            "status": study.status,
            "workspace": study.workspace,
            "synced_at": study.synced_at,
        },
        "submissions": review_rows(study),
        "bonuses": [
            {
                "annotator": b.hire.membership.pseudonym,
                "participant_id": b.participant_id,
                "amount": b.amount,
                "state": b.state,
                "paid_at": b.paid_at,
                "error": b.error,
            }
            for b in study.bonuses.select_related("hire__membership").order_by("pk")
        ],
    }
