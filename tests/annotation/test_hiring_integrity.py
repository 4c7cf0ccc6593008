"""Issue 38: a completion code is not enough to be paid (H1/H2), and a hire that ends
gives its open items back (H4)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.models import Assignment, Item, Project
from tests.annotation.api_helpers import token_client
from tests.annotation.test_hiring import answer, hire_of, invite, join, set_policy

__all__ = ["invite"]  # the fixture


@pytest.fixture
def paid(invite: Invite) -> Invite:
    set_policy(invite.project, pay_per_item=Decimal("1.00"))
    invite.screened_out_code = "OUT-1"
    invite.save()
    return invite


def _mine(hire: Hire) -> list[Assignment]:
    return list(Assignment.objects.filter(annotator=hire.membership.user).order_by("position"))


def finish(client: Client, hire: Hire, side: str = "a") -> None:
    """Answer the whole queue: training on `side` ("a" is the reference)."""
    for a in _mine(hire):
        answer(client, a, choice_side=side, hard="no" if side == "a" else "yes")


def _training(hire: Hire) -> Assignment:
    return Assignment.objects.get(annotator=hire.membership.user, item__quality__role="training")


def bonus_file(invite: Invite) -> str:
    return hiring.payments_file(invite.project, "bonus")


def test_a_completion_is_recorded_with_the_market_id_that_earned_it(paid: Invite) -> None:
    client = Client()
    join(client, paid, PROLIFIC_PID="w-real")
    hire = hire_of(client)
    finish(client, hire)
    hire.refresh_from_db()
    assert hire.completed_at is not None and hire.completed_as == "w-real"
    assert [h.pk for h in hiring.payable_hires(paid.project)] == [hire.pk]
    assert bonus_file(paid) == "w-real,2.00\n"
    hiring.erase(hire)  # the id is gone: nothing to pay it under any more
    assert hiring.payable_hires(paid.project) == [] and bonus_file(paid) == ""


def test_a_screened_out_person_joining_again_in_the_same_browser_is_not_paid(
    paid: Invite, users: dict[str, User]
) -> None:
    browser = Client(REMOTE_ADDR="10.1.1.1")
    join(browser, paid, PROLIFIC_PID="w-first")
    first = hire_of(browser)
    assert browser.cookies["hiring_browser"].value == first.browser != ""
    answer(browser, _training(first), choice_side="b", hard="yes")
    first.refresh_from_db()
    assert hiring.status(first) == hiring.SCREENED_OUT
    browser.cookies.pop("sessionid")  # logged out; the browser is the same
    join(browser, paid, PROLIFIC_PID="w-second")
    second = hire_of(browser)
    assert second.pk != first.pk and second.browser == first.browser
    finish(browser, second)
    second.refresh_from_db()
    assert hiring.status(second) == hiring.COMPLETED  # the code was shown ...
    rows = {r["worker_id"]: r for r in hiring.payments(paid.project)}
    assert not rows["w-second"]["payable"]  # ... but nothing pays it
    assert (
        "same browser as " + first.membership.pseudonym + " (screened out)"
        in (rows["w-second"]["flag"])
    )
    assert hiring.payable_hires(paid.project) == [] and bonus_file(paid) == ""
    # the researcher looked and decided: pay anyway
    alice = Client()
    alice.force_login(users["alice"])
    page = alice.get(reverse("hiring", args=[paid.project_id])).content.decode()
    assert "check: the same browser as" in page and 'value="pay_anyway"' in page
    alice.post(
        reverse("hiring_member", args=[paid.project_id, second.membership_id]),
        {"action": "pay_anyway"},
    )
    assert [h.pk for h in hiring.payable_hires(paid.project)] == [second.pk]


def test_a_private_window_from_the_same_address_is_flagged_too(
    paid: Invite, settings: object
) -> None:
    out = Client(REMOTE_ADDR="10.2.2.2")
    join(out, paid, PROLIFIC_PID="w-out")
    answer(out, _training(hire_of(out)), choice_side="b", hard="yes")
    again = Client(REMOTE_ADDR="10.2.2.2")  # no cookie, same address
    join(again, paid, PROLIFIC_PID="w-again")
    finish(again, hire_of(again))
    assert hiring.suspicions(paid.project)[hire_of(again).pk].startswith("the same address as")
    assert bonus_file(paid) == ""
    other = Client(REMOTE_ADDR="10.3.3.3")  # someone else entirely
    join(other, paid, PROLIFIC_PID="w-other")
    finish(other, hire_of(other))
    assert bonus_file(paid) == "w-other,2.00\n"
    settings.HIRING_FLAG_SAME_ADDRESS = False  # type: ignore[attr-defined]
    assert bonus_file(paid) == "w-again,2.00\nw-other,2.00\n"
    assert Hire.objects.get(worker_id="w-again").address != "10.2.2.2"  # a hash, never the address


def test_a_completed_hire_stays_completed(paid: Invite, alpha_items: list[Item]) -> None:
    paid.time_limit_minutes = 5
    paid.save()
    client = Client(REMOTE_ADDR="10.4.4.4")
    join(client, paid, PROLIFIC_PID="w-done")
    hire = hire_of(client)
    finish(client, hire)
    # one more item given after completion (adaptive overlap did this, issue 38 H2)
    extra = next(
        i for i in alpha_items[1:] if not i.assignments.filter(annotator=hire.membership.user)
    )
    Assignment.objects.create(item=extra, annotator=hire.membership.user, position=99)
    Hire.objects.filter(pk=hire.pk).update(joined_at=timezone.now() - dt.timedelta(minutes=6))
    assert hiring.return_overdue(paid.project) == 0
    hire.refresh_from_db()
    assert hiring.status(hire) == hiring.COMPLETED and hire.returned_at is None
    assert bonus_file(paid) == "w-done,2.00\n"


# --- H4: a hire that ends gives its open items back --------------------------------------


def test_failing_training_gives_the_open_items_back(paid: Invite) -> None:
    client = Client(REMOTE_ADDR="10.5.5.5")
    join(client, paid, PROLIFIC_PID="w-fail")
    hire = hire_of(client)
    real = [a.item_id for a in _mine(hire) if a.item_id != _training(hire).item_id]
    assert len(real) == 2
    answer(client, _training(hire), choice_side="b", hard="yes")
    assert not Assignment.objects.filter(annotator=hire.membership.user).open().exists()
    queue = client.get(reverse("queue", args=[paid.project_id])).content.decode()
    assert 'id="next"' not in queue and 'id="held"' in queue
    assert "OUT-1" in client.get(reverse("next_item", args=[paid.project_id])).content.decode()
    # the next person gets those items (they are the least covered again)
    other = Client(REMOTE_ADDR="10.6.6.6")
    join(other, paid, PROLIFIC_PID="w-next")
    given = {a.item_id for a in _mine(hire_of(other))}
    assert set(real) <= given


def test_an_automatic_pause_gives_the_open_items_back(
    paid: Invite, alpha_items: list[Item]
) -> None:
    hiring.mark(alpha_items[3], hiring.CHECK, {"item.hard": "no"})
    set_policy(paid.project, check_rate=0.5, pause_below=0.9, pause_after=1)
    client = Client(REMOTE_ADDR="10.7.7.7")
    join(client, paid, PROLIFIC_PID="w-careless")
    hire = hire_of(client)
    answer(client, _training(hire), choice_side="a")
    check = Assignment.objects.get(annotator=hire.membership.user, item=alpha_items[3])
    answer(client, check, choice_side="a", hard="yes")  # the check wrong
    hire.refresh_from_db()
    assert hire.paused and hiring.status(hire) == hiring.SCREENED_OUT
    assert not Assignment.objects.filter(annotator=hire.membership.user).open().exists()


def test_a_hire_let_through_after_a_screen_out_gets_a_queue_again(
    paid: Invite, users: dict[str, User]
) -> None:
    client = Client(REMOTE_ADDR="10.8.8.8")
    join(client, paid, PROLIFIC_PID="w-again")
    hire = hire_of(client)
    answer(client, _training(hire), choice_side="b", hard="yes")
    hiring.set_state(hire.membership, let_through=True)
    assert Assignment.objects.filter(annotator=hire.membership.user).open().count() == 2


# --- M3: checks that two accounts could spot --------------------------------------------


def test_an_invite_whose_checks_could_be_spotted_is_refused(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    """Real items differ per person while checks come from the marked pool: with fewer
    checks than real items per person, the items two accounts share are the checks."""
    set_policy(alpha, check_rate=0.25)
    hiring.mark(alpha_items[0], hiring.CHECK, {"item.hard": "no"})
    api = token_client(users["alice"])
    url = reverse("api_invites", args=[alpha.pk])
    r = api.post(url, {"items_per_person": 3}, format="json")
    assert r.status_code == 400 and "Checks can be spotted" in r.content.decode()
    Invite.objects.create(project=alpha, items_per_person=3)  # made before the checks
    alice = Client()
    alice.force_login(users["alice"])
    page = alice.get(reverse("hiring", args=[alpha.pk])).content.decode()
    assert 'id="check-pool"' in page and "Mark at least 3 checks" in page
    for item in alpha_items[1:3]:
        hiring.mark(item, hiring.CHECK, {"item.hard": "no"})
    assert api.post(url, {"items_per_person": 3}, format="json").status_code == 201
    assert 'id="check-pool"' not in alice.get(reverse("hiring", args=[alpha.pk])).content.decode()
