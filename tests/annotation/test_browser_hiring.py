"""Issue 18: a new annotator's path from an invite link through training to the
completion code, keyboard only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.models import Assignment, Item, Project
from tests.browser import autofocused

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _answer(pg, choice: str, text: str) -> None:  # type: ignore[no-untyped-def]
    pg.wait_for_selector("#answer-form")
    pg.wait_for_load_state("load")  # keys work once the deferred scripts have run
    url = pg.url
    pg.keyboard.press(choice)
    pg.keyboard.press("n")
    pg.keyboard.press("w")  # the justification (j/k move between results elsewhere)
    pg.keyboard.type(text)
    pg.keyboard.press("Control+Enter")
    pg.wait_for_url(lambda u, url=url: u != url)


def test_invite_training_and_completion_code_from_the_keyboard(
    page, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    hiring.mark(
        alpha_items[0],
        hiring.TRAINING,
        {"item.choice": "a", "item.hard": "no"},
        "The first stored list names every fact.",
    )
    invite = Invite.objects.create(
        project=alpha, items_per_person=1, completion_code="DONE-7", extra_params=["STUDY_ID"]
    )

    page.goto(f"/join/{invite.key}/?PROLIFIC_PID=w-9&STUDY_ID=s-1")
    autofocused(page)
    page.keyboard.press("Enter")  # Start has the focus
    page.wait_for_selector("#personal-url")
    hire = Hire.objects.get(worker_id="w-9")
    assert hire.key in page.input_value("#personal-url")
    assert hire.worker_params == {"STUDY_ID": "s-1"}
    page.wait_for_load_state("load")
    page.keyboard.press("Enter")  # Begin
    page.wait_for_url("**/instructions/")
    autofocused(page)
    page.keyboard.press("Enter")  # acknowledge

    user = hire.membership.user
    training = Assignment.objects.get(annotator=user, item=alpha_items[0])
    page.wait_for_url(f"**/a/{training.pk}/")
    _answer(page, hiring.presented(training, "choice", "a"), "It names every fact of the text.")
    page.wait_for_selector("#explanation")
    assert "The first stored list names every fact." in page.inner_text("#explanation")
    page.wait_for_load_state("load")
    page.keyboard.press("Enter")  # Continue

    real = Assignment.objects.get(annotator=user, item__quality__isnull=True)
    page.wait_for_url(f"**/a/{real.pk}/")
    _answer(page, "1", "The first list covers more of the facts.")
    page.wait_for_selector("#completion-code")
    assert page.inner_text("#completion-code") == "DONE-7"
    assert Assignment.objects.filter(annotator=user, status=Assignment.SUBMITTED).count() == 2
