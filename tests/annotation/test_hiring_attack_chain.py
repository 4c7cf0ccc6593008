"""Issue 38, the H1 chain end to end, as a hostile crowd worker would walk it on a
Prolific study: a throwaway id harvests the training references from the feedback; the
person's real id fails training (screened out); they join again under a made-up id from
a private window, pass with the harvested references and get the study-wide completion
code, which they submit on Prolific under their real id. Nothing the payments export
(or an approval reading payable_hires) would pay goes to them, and the honest worker's
completion never flips."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.hiring.markets import PROLIFIC
from annotation.models import AdaptiveOverlap, Assignment, Item, OverlapWait
from tests.annotation.test_adaptive_overlap import _post_page
from tests.annotation.test_hiring import answer, hire_of, invite, set_policy

__all__ = ["invite"]  # the fixture

STUDY = "60aa11bb22cc33dd44ee55ff"


def _pid(n: int) -> str:
    return f"{n:024x}"


def _join(client: Client, invite: Invite, pid: str, session: str) -> Hire:
    params = {"PROLIFIC_PID": pid, "STUDY_ID": STUDY, "SESSION_ID": session}
    url = reverse("join", args=[invite.key])
    r = client.post(url, params)
    assert r.status_code == 200, r.content.decode()[:500]
    return hire_of(client)


def _queue(hire: Hire) -> list[Assignment]:
    return list(Assignment.objects.filter(annotator=hire.membership.user).order_by("position"))


def _training(hire: Hire) -> Assignment:
    return next(a for a in _queue(hire) if a.item.quality.role == hiring.TRAINING)  # type: ignore[attr-defined]


def test_the_made_up_id_chain_gets_nothing_paid(
    invite: Invite, alpha_items: list[Item], users: dict[str, User]
) -> None:
    invite.market, invite.study_id = PROLIFIC, STUDY
    invite.completion_code, invite.screened_out_code = "C0DE-42", "OUT-7"
    invite.time_limit_minutes = 60
    invite.save()
    set_policy(invite.project, pay_per_item=Decimal("1.00"))
    AdaptiveOverlap.objects.create(
        project=invite.project, kind="comparison", field="choice", start=2, up_to=4
    )

    # an honest worker completes
    honest_browser = Client(REMOTE_ADDR="192.0.2.10")
    honest = _join(honest_browser, invite, _pid(1), _pid(101))
    for a in _queue(honest):
        answer(honest_browser, a, choice_side="a")
    honest.refresh_from_db()
    assert hiring.status(honest) == hiring.COMPLETED

    # the attacker's browser: a throwaway id answers the training item and reads the
    # reference from the feedback
    browser = Client(REMOTE_ADDR="198.51.100.7")
    throwaway = _join(browser, invite, _pid(2), _pid(102))
    training = _training(throwaway)
    answer(browser, training, choice_side="b", hard="yes")
    feedback = browser.get(reverse("training_feedback", args=[training.pk])).content.decode()
    assert "the reference answer" in feedback and 'id="explanation"' in feedback  # harvested
    throwaway.refresh_from_db()
    assert hiring.status(throwaway) == hiring.SCREENED_OUT

    # their real Prolific id fails training too: screened out
    browser.cookies.pop("sessionid")
    real = _join(browser, invite, _pid(0xA3), _pid(103))
    answer(browser, _training(real), choice_side="b", hard="yes")
    real.refresh_from_db()
    assert hiring.status(real) == hiring.SCREENED_OUT
    assert not Assignment.objects.filter(annotator=real.membership.user).open().exists()

    # a made-up id from a private window (no cookie), the same address; a replayed
    # session id and an upper-case copy of the real id are refused outright
    private = Client(REMOTE_ADDR="198.51.100.7")
    url = reverse("join", args=[invite.key])
    for pid, session in ((_pid(4), _pid(103)), (_pid(0xA3).upper(), _pid(104))):
        r = private.post(url, {"PROLIFIC_PID": pid, "STUDY_ID": STUDY, "SESSION_ID": session})
        assert r.status_code == 400 and "_auth_user_id" not in private.session
    made_up = _join(private, invite, _pid(4), _pid(104))
    for a in _queue(made_up):  # the harvested reference, in this account's numbering
        answer(private, a, choice_side="a")
    page = private.get(reverse("next_item", args=[invite.project_id]), follow=True)
    assert "C0DE-42" in page.content.decode()  # the study-wide code is theirs to copy
    made_up.refresh_from_db()
    assert hiring.status(made_up) == hiring.COMPLETED

    # on Prolific they submit the code under the real id: nothing here pays it
    payable = {h.worker_id for h in hiring.payable_hires(invite.project)}
    assert payable == {_pid(1)}
    rows = {r["worker_id"]: r for r in hiring.payments(invite.project)}
    assert rows[_pid(0xA3)]["status"] == hiring.SCREENED_OUT and not rows[_pid(0xA3)]["payable"]
    assert not rows[_pid(4)]["payable"] and "same address as" in rows[_pid(4)]["flag"]
    assert not rows[_pid(2)]["payable"]
    assert hiring.payments_file(invite.project, "bonus") == f"{_pid(1)},2.00\n"

    # the honest completion never flips: widening and the time limit leave it completed
    held = {
        h.pk: Assignment.objects.filter(annotator=h.membership.user).count()
        for h in (honest, made_up)
    }
    for item in alpha_items[1:]:  # bob and carol disagree on every real item
        bob, carol = (item.assignments.get(annotator=users[n]) for n in ("bob", "carol"))
        _post_page(users["bob"], bob, "a")
        _post_page(users["carol"], carol, "b")
    Hire.objects.update(joined_at=timezone.now() - dt.timedelta(minutes=61))
    hiring.return_overdue(invite.project)
    for hire in (honest, made_up):
        hire.refresh_from_db()
        assert hiring.status(hire) == hiring.COMPLETED and hire.returned_at is None
        assert Assignment.objects.filter(annotator=hire.membership.user).count() == held[hire.pk]
    for item in alpha_items[1:]:  # m annotators, or waiting: nobody who can work was free
        assert item.assignments.count() == 4 or OverlapWait.objects.filter(item=item).exists()
    assert OverlapWait.objects.exists()
    assert hiring.payments_file(invite.project, "bonus") == f"{_pid(1)},2.00\n"
