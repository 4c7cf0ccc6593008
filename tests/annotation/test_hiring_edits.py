"""Issue 38 (low): returned, paused and screened-out hires could still edit submitted
answers. They cannot; the hiring policy can lock a hire's answers at completion too.
Checked in the one answer operation (pages, API and Label Studio sync alike)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import User

from annotation import hiring
from annotation.hiring import Hire, HiringPolicy, Invite
from annotation.models import Assignment, Item, Project
from annotation.operations import Action, Result, answer
from tests.annotation.api_helpers import token_client

ANSWER = {
    "choice": "1",
    "hard": "no",
    "justification": "List 1 covers every fact of the text.",
}


def _edit(hire: Hire, assignment: Assignment, hard: str) -> Result:
    return answer(assignment, hire.membership, {**ANSWER, "hard": hard}, Action.RESUBMIT).result


@pytest.mark.parametrize("state", ["paused", "returned", "screened out", "completed+lock"])
def test_a_hire_who_stopped_cannot_edit_a_submitted_answer(
    alpha: Project, alpha_items: list[Item], state: str
) -> None:
    hire = hiring.join(
        Invite.objects.create(project=alpha, items_per_person=1), {"PROLIFIC_PID": "w1"}
    )
    hire.membership.acknowledge()
    mine = Assignment.objects.get(annotator=hire.membership.user)
    assert answer(mine, hire.membership, ANSWER).result == Result.SUBMITTED
    hire.refresh_from_db()
    assert hiring.status(hire) == hiring.COMPLETED
    assert _edit(hire, mine, "yes") == Result.SUBMITTED  # completed, not locked: may edit
    if state == "paused":
        Hire.objects.filter(pk=hire.pk).update(paused=True, paused_reason="by a researcher")
    elif state == "returned":
        Hire.objects.filter(pk=hire.pk).update(returned_at=dt.datetime.now(dt.UTC))
    elif state == "screened out":
        Hire.objects.filter(pk=hire.pk).update(failed_training=True)
    else:
        HiringPolicy.objects.filter(project=alpha).update(lock_at_completion=True)
    hire = Hire.objects.select_related("membership__project").get(pk=hire.pk)
    assert _edit(hire, mine, "no") == Result.REFUSED
    mine.refresh_from_db()
    assert mine.answers_dict()[("item", "hard")] == "yes"  # unchanged
    rows = [{"unit": "item", "field": k, "value": v} for k, v in {**ANSWER, "hard": "no"}.items()]
    r = token_client(hire.membership.user).post(
        f"/api/assignments/{mine.pk}/submit/", {"answers": rows, "edit": True}, format="json"
    )
    assert r.status_code == 409 and r.json()["code"].startswith("hiring_"), r.content


def test_a_regular_member_still_edits(alpha_items: list[Item], users: dict[str, User]) -> None:
    mine = Assignment.objects.filter(annotator=users["bob"]).first()
    assert mine is not None
    membership = mine.item.project.memberships.get(user=users["bob"])
    assert answer(mine, membership, ANSWER).result == Result.SUBMITTED
    HiringPolicy.objects.update_or_create(
        project=mine.item.project, defaults={"lock_at_completion": True}
    )
    hiring.set_state(membership, paused=True)
    membership.refresh_from_db()
    assert (
        answer(mine, membership, {**ANSWER, "hard": "yes"}, Action.RESUBMIT).result
        == Result.SUBMITTED
    )
