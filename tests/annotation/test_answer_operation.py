"""One answer operation (operations.answer) behind the pages, the API and the Label
Studio sync: the same answer ends in the same state whichever way it came, and the
hiring rules (training result, automatic pause) follow each of them."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation import hiring, labelstudio
from annotation.hiring import Hire, HiringPolicy
from annotation.models import Assignment, Item, Membership, Project
from annotation.operations import Action, Result, answer, answers_data
from tests.annotation.api_helpers import token_client

ANSWERS = {
    ("item", "choice"): "1",
    ("item", "hard"): "no",
    ("item", "justification"): "List 1 names every fact of the text.",
}
FORM = {field: value for (_, field), value in ANSWERS.items()}
LONG = [{"unit": u, "field": f, "value": v} for (u, f), v in ANSWERS.items()]


def hired(project: Project, user: User) -> Membership:
    membership = project.add_member(user, Membership.ANNOTATOR)
    membership.acknowledge()
    Hire.objects.create(membership=membership)
    return Membership.objects.select_related("project", "hire").get(pk=membership.pk)


def ls_user(project: Project, ls_id: int) -> User:
    """The account the sync makes for a Label Studio user, made a hire beforehand."""
    user = User.objects.create(username=f"ls-{ls_id}", is_active=False)
    hired(project, user)
    return user


def ls_export(item: Item, ls_id: int, answers: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    return [
        {
            "id": 1,
            "data": labelstudio.task_data(item),
            "annotations": [
                {
                    "completed_by": {"id": ls_id},
                    "result": labelstudio.answers_result(answers, kind=item.kind),
                }
            ],
        }
    ]


def state(assignment: Assignment) -> dict[str, Any]:
    assignment.refresh_from_db()
    hire = Hire.objects.get(
        membership__user=assignment.annotator, membership__project=assignment.item.project_id
    )
    return {
        "status": assignment.status,
        "answers": assignment.answers_dict(),
        "guideline_version": assignment.guideline_version,
        "skip_reason": assignment.skip_reason,
        "passed_training": hire.passed_training,
        "paused": hire.paused,
    }


@pytest.fixture
def training(alpha: Project, alpha_items: list[Item]) -> Item:
    """Item 0 is a training item whose reference is the answer sent (List 1 unswapped)."""
    Assignment.objects.filter(item=alpha_items[0]).update(swapped=False)
    hiring.mark(alpha_items[0], hiring.TRAINING, {"item.choice": "a", "item.hard": "no"})
    alpha.set_instructions("Version two.")
    return alpha_items[0]


def test_the_same_answer_through_page_api_and_sync_ends_in_the_same_state(
    alpha: Project, training: Item, users: dict[str, User]
) -> None:
    bob, carol = (hired(alpha, users[n]).user for n in ("bob", "carol"))
    page = Client()
    page.force_login(bob)
    posted = page.post(
        reverse("assignment", args=[training.assignments.get(annotator=bob).pk]), FORM
    )
    assert posted.status_code == 302
    api = token_client(carol)
    pk = training.assignments.get(annotator=carol).pk
    r = api.post(f"/api/assignments/{pk}/submit/", {"answers": LONG}, format="json")
    assert r.status_code == 200, r.content
    ls = ls_user(alpha, 7)
    summary = labelstudio.import_annotations(alpha, ls_export(training, 7, ANSWERS))
    assert (summary.submitted, summary.errors) == (1, [])

    states = [state(training.assignments.get(annotator=u)) for u in (bob, carol, ls)]
    assert states[0] == states[1] == states[2]
    assert states[0] == {
        "status": Assignment.SUBMITTED,
        "answers": ANSWERS,
        "guideline_version": 2,
        "skip_reason": "",
        "passed_training": True,  # after_submit ran on every path
        "paused": False,
    }


def test_a_hired_annotators_answer_through_the_sync_reaches_the_hiring_rules(
    alpha: Project, training: Item
) -> None:
    ls = ls_user(alpha, 8)
    wrong = {**ANSWERS, ("item", "choice"): "2", ("item", "hard"): "yes"}
    labelstudio.import_annotations(alpha, ls_export(training, 8, wrong))
    assert Assignment.objects.get(item=training, annotator=ls).status == Assignment.SUBMITTED
    hire = Hire.objects.get(membership__user=ls)
    assert not hire.passed_training  # failed: no real item opens
    # an answer to a real item is refused while training is not passed, and reported
    real = Item.objects.filter(project=alpha).exclude(pk=training.pk).first()
    assert real is not None
    summary = labelstudio.import_annotations(alpha, ls_export(real, 8, ANSWERS))
    assert summary.submitted == 0 and summary.errors == ["task 1, ls-8: not stored (training)"]
    assert not Assignment.objects.filter(item=real, annotator=ls).exists()


def test_check_accuracy_through_the_sync_pauses_automatically(
    alpha: Project, alpha_items: list[Item]
) -> None:
    HiringPolicy.of(alpha)
    HiringPolicy.objects.filter(project=alpha).update(pause_below=0.9, pause_after=1)
    check = alpha_items[1]
    hiring.mark(check, hiring.CHECK, {"item.hard": "yes"})
    ls = ls_user(alpha, 9)
    Hire.objects.filter(membership__user=ls).update(passed_training=True)
    labelstudio.import_annotations(alpha, ls_export(check, 9, ANSWERS))  # hard: "no"
    assert Hire.objects.get(membership__user=ls).paused
    summary = labelstudio.import_annotations(alpha, ls_export(alpha_items[2], 9, ANSWERS))
    assert summary.errors == ["task 1, ls-9: not stored (paused)"]


def test_outcomes_of_each_action(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    membership = Membership.objects.select_related("project").get(project=alpha, user=users["bob"])
    a = alpha_items[0].assignments.get(annotator=users["bob"])
    data = answers_data(LONG)
    assert answer(a, membership, {"choice": "9"}, Action.DRAFT).result == Result.SAVED
    assert a.answers_dict() == {}  # a draft keeps valid choices only
    invalid = answer(a, membership, {"choice": "1"})
    assert invalid.result == Result.INVALID and invalid.form is not None and invalid.form.errors
    assert answer(a, membership, data).result == Result.SUBMITTED
    assert answer(a, membership, data).result == Result.UNCHANGED  # a double click
    changed = {**data, "hard": "yes"}
    assert answer(a, membership, changed).result == Result.CONFLICT  # another tab won
    assert answer(a, membership, changed, Action.DRAFT).result == Result.CONFLICT
    assert answer(a, membership, {"reason": "no"}, Action.SKIP).result == Result.CONFLICT
    assert a.answers_dict() == ANSWERS and a.status == Assignment.SUBMITTED
    assert answer(a, membership, changed, Action.RESUBMIT).result == Result.SUBMITTED
    assert a.answers_dict()[("item", "hard")] == "yes"
    b = alpha_items[1].assignments.get(annotator=users["bob"])
    assert answer(b, membership, {"reason": ""}, Action.SKIP).result == Result.INVALID
    assert answer(b, membership, {"reason": "unclear"}, Action.SKIP).result == Result.SKIPPED
    assert answer(b, membership, {"reason": "unclear"}, Action.SKIP).result == Result.UNCHANGED


def test_someone_elses_assignment_is_refused_and_nothing_stored(
    alpha: Project, beta: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    bobs = alpha_items[0].assignments.get(annotator=users["bob"])
    carol = Membership.objects.select_related("project").get(project=alpha, user=users["carol"])
    dave = Membership.objects.select_related("project").get(project=beta, user=users["dave"])
    alice = Membership.objects.select_related("project").get(project=alpha, user=users["alice"])
    for membership in (carol, dave, alice):
        for action in Action:
            data = {"reason": "x"} if action == Action.SKIP else answers_data(LONG)
            outcome = answer(bobs, membership, data, action)
            assert (outcome.result, outcome.reason) == (Result.REFUSED, "not_yours")
    bobs.refresh_from_db()
    assert bobs.status == Assignment.PENDING and not bobs.answers.exists()
