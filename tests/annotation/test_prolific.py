"""Issue 41: Prolific's API end to end against the fake Prolific server (a real HTTP
server on 127.0.0.1 speaking Prolific's shapes): create a draft study from an invite,
publish, pause, pull submissions and match them to hires, approve those that completed
here, reject with Prolific's reason only on confirmation, pay bonuses once; the client's
retries (429 Retry-After, 5xx backoff), 400 field messages and a wrong token.

The shapes the fake and the client use, and where they come from:
- Prolific's API reference, docs.prolific.com/api-reference: "Pay bonuses" (POST
  /api/v1/bulk-bonus-payments/{id}/pay/, "This endpoint is **not idempotent**"),
  "Submission object" (statuses RESERVED, ACTIVE, AWAITING REVIEW, APPROVED, RETURNED,
  REJECTED, SCREENED OUT), "Reviewing submissions and rewards" (create, transition to
  publish, approve by submission id).
- pyrolific 1.5.1 (generated from Prolific's OpenAPI description; read with `pip download
  pyrolific --no-deps`): api/bonuses/create_bonus_payments.py (POST
  /api/v1/submissions/bonus-payments/, body CreateBonusPaymentsBody {study_id,
  csv_bonuses "pid,4.25\\n..."}), models/bulk_bonus.py (BulkBonus {id, study, amount,
  fees, vat, total_amount}, in cents), models/submission_detail.py (bonus_payments "in
  pence / cents"), models/submission_transition.py (REJECT: message "at least 100 chars
  long" and rejection_category), models/request_submission_return_body.py
  (request_return_reasons), models/create_study.py (external_study_url with
  {{%PROLIFIC_PID%}} {{%STUDY_ID%}} {{%SESSION_ID%}}, completion_codes, reward in cents,
  estimated_completion_time in minutes, total_available_places), api/studies/
  publish_study.py (POST /api/v1/studies/{id}/transition/ {"action": "PUBLISH"}).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory

from annotation import hiring
from annotation.hiring import Hire, HiringPolicy, Invite
from annotation.models import Assignment, Item
from annotation.prolific import services
from annotation.prolific.client import Client as ProlificClient
from annotation.prolific.client import ProlificError, Unanswered, WrongToken
from annotation.prolific.fake import FakeProlific, new_id
from annotation.prolific.models import ProlificBonus, ProlificStudy
from annotation.prolific.urls import study_url
from tests.annotation.test_hiring import answer, hire_of, join, set_policy

TOKEN_ENV = "TEST_PROLIFIC_LAB_TOKEN"


@pytest.fixture
def fake() -> Iterator[FakeProlific]:
    with FakeProlific() as server:
        yield server


@pytest.fixture
def lab(fake: FakeProlific, settings: Any, monkeypatch: pytest.MonkeyPatch) -> FakeProlific:
    """The operator's workspace "lab" at the fake, its token in an environment variable."""
    settings.PROLIFIC_WORKSPACES = [
        {"name": "lab", "token_env": TOKEN_ENV, "base_url": fake.base_url, "max_bonus": "5"}
    ]
    monkeypatch.setenv(TOKEN_ENV, fake.token)
    return fake


@pytest.fixture
def pinvite(alpha_items: list[Item], users: dict[str, User], lab: FakeProlific) -> Invite:
    """A Prolific invite of alpha: item 0 is training, two real items per person; bob's
    pilot answer took 90 s of active time; the project uses the workspace "lab"."""
    project = alpha_items[0].project
    hiring.mark(alpha_items[0], hiring.TRAINING, {"item.choice": "a", "item.hard": "no"}, "x")
    bob = Client()
    bob.force_login(users["bob"])
    pilot = Assignment.objects.filter(annotator=users["bob"], item=alpha_items[1]).get()
    answer(bob, pilot, choice_side="a")
    Assignment.objects.filter(pk=pilot.pk).update(active_seconds=90)
    set_policy(project, pay_per_item=Decimal("0.50"), prolific_workspace="lab")
    return Invite.objects.create(
        project=project,
        created_by=users["alice"],
        market="prolific",
        items_per_person=2,
        cap=3,
        completion_code="C0DE42",
        screened_out_code="SCR9",
    )


def make_study(invite: Invite) -> ProlificStudy:
    request = RequestFactory().get("/")
    return services.create_study(
        invite,
        study_url(invite, request),
        name="Compare two fact lists",
        description="Read two lists and say which covers the text.",
        reward_cents=150,
    )


def take(fake: FakeProlific, study: ProlificStudy, invite: Invite, *, passes: bool) -> Hire:
    """A participant takes the study on Prolific, joins through the study URL with the ids
    Prolific fills in, and works: all right (completes) or training wrong (screened out)."""
    pid = new_id()
    sub = fake.add_submission(study.study_id, pid, status="ACTIVE")
    client = Client(REMOTE_ADDR=f"10.9.{len(fake.submissions)}.1")
    join(client, invite, PROLIFIC_PID=pid, STUDY_ID=study.study_id, SESSION_ID=sub["id"])
    hire = hire_of(client)
    mine = Assignment.objects.filter(annotator=hire.membership.user).order_by("position")
    for a in mine if passes else mine[:1]:
        answer(client, a, choice_side="a" if passes else "b", hard="no" if passes else "yes")
    mine.update(active_seconds=60)
    sub["status"] = "AWAITING REVIEW"  # they entered a code on Prolific
    hire.refresh_from_db()
    return hire


def test_a_draft_study_from_an_invite_then_publish_and_pause(
    pinvite: Invite, lab: FakeProlific
) -> None:
    study = make_study(pinvite)
    sent = lab.studies[study.study_id]
    key = pinvite.key
    assert sent["external_study_url"] == (
        f"http://testserver/join/{key}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert [(c["code"], c["code_type"]) for c in sent["completion_codes"]] == [
        ("C0DE42", "COMPLETED"),
        ("SCR9", "OTHER"),
    ]
    # the pilot's median active time (90 s) x the quota (2 items) = 3 minutes
    assert sent["estimated_completion_time"] == 3
    assert (sent["reward"], sent["total_available_places"]) == (150, 3)
    pinvite.refresh_from_db()
    assert pinvite.study_id == study.study_id  # a join must now name this study
    assert services.transition(study, "publish").status == "ACTIVE"
    assert services.transition(study, "pause").status == "PAUSED"
    assert services.transition(study, "start").status == "ACTIVE"
    with pytest.raises(ProlificError, match="action: 'PUBLISH' is not possible"):
        services.transition(study, "publish")  # a 400's field message, named
    with pytest.raises(ValueError, match="has a Prolific study already|already names"):
        make_study(pinvite)  # a second click makes no second draft
    assert len(lab.studies) == 1


def test_submissions_approve_reject_and_bonus_once(pinvite: Invite, lab: FakeProlific) -> None:
    study = make_study(pinvite)
    done = take(lab, study, pinvite, passes=True)
    out = take(lab, study, pinvite, passes=False)
    stranger = lab.add_submission(study.study_id, new_id())  # never joined here
    assert hiring.status(done) == hiring.COMPLETED
    assert hiring.status(out) == hiring.SCREENED_OUT
    subs = {s.participant_id: s for s in services.pull(study)}
    assert subs[done.worker_id].hire == done and subs[out.worker_id].hire == out
    assert subs[stranger["participant_id"]].hire is None

    result = services.approve(study)
    assert result["approved"] == [done.worker_id]  # only the completed hire's
    status = {s["participant_id"]: s["status"] for s in lab.submissions.values()}
    assert status[done.worker_id] == "APPROVED"
    assert status[out.worker_id] == status[stranger["participant_id"]] == "AWAITING REVIEW"

    out_sub = subs[out.worker_id].submission_id
    with pytest.raises(ValueError, match="at least 100 characters"):
        services.refuse(study, [out_sub], action="reject", category="FAILED_CHECK", message="no")
    reason = "You did not pass the training items; the study asked for the first answers. " * 2
    preview = services.refuse(
        study, [out_sub], action="reject", category="FAILED_CHECK", message=reason
    )
    assert [r["participant_id"] for r in preview] == [out.worker_id]
    assert lab.submissions[out_sub]["status"] == "AWAITING REVIEW"  # not without confirming
    services.refuse(
        study, [out_sub], action="reject", category="FAILED_CHECK", message=reason, confirmed=True
    )
    assert lab.submissions[out_sub]["status"] == "REJECTED"
    done_sub = subs[done.worker_id].submission_id
    with pytest.raises(ValueError, match="completed here"):  # a payable hire is never refused
        services.refuse(study, [done_sub], action="return", reasons=["x"], confirmed=True)

    paid = services.pay_bonuses(study)
    assert paid["paid"] == [f"{done.worker_id}: 1.00"]  # 2 real items x 0.50
    assert lab.paid == [(done.worker_id, 100)]
    assert services.pay_bonuses(study)["paid"] == []  # a replay pays nothing
    assert lab.paid == [(done.worker_id, 100)]
    assert lab.submissions[done_sub]["bonus_payments"] == [100]


def test_absurd_bonuses_are_refused(pinvite: Invite, lab: FakeProlific) -> None:
    study = make_study(pinvite)
    done = take(lab, study, pinvite, passes=True)
    services.pull(study)
    HiringPolicy.objects.filter(project=pinvite.project).update(pay_per_item=Decimal("999"))
    with pytest.raises(ValueError, match="above the workspace's limit of 5"):
        services.pay_bonuses(study)
    assert lab.paid == [] and not ProlificBonus.objects.exists()
    assert done.pk


def test_an_unanswered_pay_call_is_never_repeated_and_reconciles(
    pinvite: Invite, lab: FakeProlific
) -> None:
    study = make_study(pinvite)
    done = take(lab, study, pinvite, passes=True)
    services.pull(study)
    lab.fail("/pay/", 502)
    with pytest.raises(Unanswered):
        services.pay_bonuses(study)
    assert [r for r in lab.requests if "/pay/" in r[1]].__len__() == 1  # not retried
    record = ProlificBonus.objects.get(hire=done)
    assert record.state == ProlificBonus.SENT
    assert services.reconcile(study)["unconfirmed"] == 1  # Prolific shows no payment
    with pytest.raises(ValueError, match="not confirmed paid yet"):
        services.pay_bonuses(study)  # nothing more is paid while it is unknown
    assert lab.paid == []
    # the researcher checked on Prolific that it was not paid, and confirms the release
    assert services.release(study) == 1 and record.__class__.objects.get().state == "sent"
    assert services.release(study, confirmed=True) == 1
    assert services.pay_bonuses(study)["paid"] == [f"{done.worker_id}: 1.00"]
    assert lab.paid == [(done.worker_id, 100)]


def test_a_record_left_before_any_call_and_a_refused_bonus_pay_nothing_twice(
    pinvite: Invite, lab: FakeProlific
) -> None:
    study = make_study(pinvite)
    done = take(lab, study, pinvite, passes=True)
    sub = services.pull(study)[0]
    # a process died after writing its record and before asking Prolific anything
    ProlificBonus.objects.create(
        hire=done,
        study=study,
        submission_id=sub.submission_id,
        participant_id=sub.participant_id,
        amount=Decimal("1.00"),
        covers_to=Decimal("1.00"),
    )
    lab.fail("bonus-payments", 400)  # then Prolific refuses the next bulk bonus
    with pytest.raises(ProlificError, match="400"):
        services.pay_bonuses(study)  # reconciled first: the old record is void
    assert lab.paid == []
    assert sorted(ProlificBonus.objects.values_list("state", flat=True)) == ["void", "void"]
    assert services.pay_bonuses(study)["paid"] == [f"{done.worker_id}: 1.00"]
    assert services.pay_bonuses(study)["paid"] == []
    assert lab.paid == [(done.worker_id, 100)]


# --- the client alone ---------------------------------------------------------------------


def test_429_waits_retry_after_and_5xx_backs_off_without_sleeping(fake: FakeProlific) -> None:
    slept: list[float] = []
    client = ProlificClient(fake.base_url, fake.token, sleep=slept.append, backoff=0.5)
    fake.fail("studies/", 429, times=2, retry_after="7")
    study = client.create_study(_study_body())  # not safe to repeat, but a 429 did nothing
    assert slept == [7.0, 7.0]
    slept.clear()
    fake.fail("studies/", 503, times=3)
    assert client.get_study(study["id"])["status"] == "UNPUBLISHED"
    assert slept == [0.5, 1.0, 2.0]
    fake.fail("studies/", 500, times=5)  # the first try and 4 retries
    with pytest.raises(Unanswered, match="500"):
        client.get_study(study["id"])
    fake.fail("studies/", 429, retry_after="3600")
    with pytest.raises(ProlificError, match="rate limited for 3600 s"):
        client.get_study(study["id"])


def test_400_field_messages_and_a_wrong_token_are_clear(fake: FakeProlific) -> None:
    client = ProlificClient(fake.base_url, fake.token, sleep=lambda s: None)
    with pytest.raises(ProlificError) as e:
        client.create_study({**_study_body(), "reward": None})
    assert e.value.status == 400 and e.value.fields == {"reward": ["This field is required."]}
    assert "reward: This field is required." in str(e.value)
    wrong = ProlificClient(fake.base_url, "not-the-token", sleep=lambda s: None)
    with pytest.raises(WrongToken, match="401.*token is wrong"):
        wrong.get_study("x")


def _study_body() -> dict[str, Any]:
    return {
        "name": "n",
        "description": "d",
        "external_study_url": "https://h/join/k/?PROLIFIC_PID={{%PROLIFIC_PID%}}",
        "completion_codes": [{"code": "C1", "code_type": "COMPLETED", "actions": []}],
        "total_available_places": 1,
        "estimated_completion_time": 1,
        "reward": 10,
    }


def test_workspaces_are_the_operators_and_the_demo_fake_needs_no_token(
    fake: FakeProlific, settings: Any
) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from annotation.prolific import workspaces

    settings.PROLIFIC_WORKSPACES = []
    settings.PROLIFIC_DEMO_FAKE = f"127.0.0.1:{fake.port}"  # as `make demo` sets it
    demo = workspaces.get("fake")
    with pytest.raises(ProlificError, match="404"):
        demo.client().get_study("nope")  # the fake's token was accepted: a 404, not a 401
    assert workspaces.choices() == [
        ("", "none (the manual path)"),
        ("fake", "fake: a fake Prolific server for the demo: nobody is recruited or paid"),
    ]
    settings.PROLIFIC_DEMO_FAKE = ""
    for bad, says in (
        ([{"name": "x"}], "token_env"),
        ([{"name": "x", "token_env": "T", "base_url": "file:///etc"}], "not an http"),
        ([{"name": "x", "token_env": "T", "max_bonus": "-1"}], "positive"),
        ([{"name": "x", "token_env": "T", "token": "secret"}], "unknown key"),
    ):
        settings.PROLIFIC_WORKSPACES = bad
        with pytest.raises(ImproperlyConfigured, match=says):
            workspaces.workspaces()
        assert workspaces.check_workspaces()[0].id == "annotation.E002"
    settings.PROLIFIC_WORKSPACES = []
    with pytest.raises(ValueError, match="uses no Prolific workspace"):
        workspaces.get("")
