"""Issue 43: the join page states how long the study takes (the pilot's median active
time per item x the items a person gets; "not yet measured" before a pilot) and what it
pays (the hiring policy's bonus rates), as Prolific expects of a study."""

from __future__ import annotations

from decimal import Decimal
from html import unescape

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation import hiring
from annotation.hiring import HiringPolicy, Invite
from annotation.models import Assignment, Item, Project

from .conftest import submit


def _join_page(invite: Invite) -> str:
    url = reverse("join", args=[invite.key]) + "?PROLIFIC_PID=w1"
    return unescape(Client().get(url).content.decode())


def test_before_a_pilot_the_time_is_not_yet_measured(
    alpha: Project, alpha_items: list[Item]
) -> None:
    invite = Invite.objects.create(project=alpha, items_per_person=3)
    page = _join_page(invite)
    assert "How long it takes" in page and "not yet measured" in page
    assert "3 items" in page and "no bonus" in page


def test_after_a_pilot_the_median_time_times_the_quota(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    seconds = [10, 20, 30, 40, 200]  # median 30 s; the slow one does not pull it up
    pairs = [(users["bob"], item) for item in alpha_items] + [(users["carol"], alpha_items[0])]
    for (who, item), s in zip(pairs, seconds, strict=True):
        a = submit(item, who, {("item", "choice"): "1", ("item", "hard"): "no"})
        Assignment.objects.filter(pk=a.pk).update(active_seconds=s)
    HiringPolicy.objects.update_or_create(
        project=alpha,
        defaults={"pay_per_item": Decimal("0.25"), "pay_per_correct_check": Decimal("0.10")},
    )
    invite = Invite.objects.create(project=alpha, items_per_person=4)
    terms = hiring.study_terms(invite)
    assert terms.seconds_per_item == 30 and terms.measured == 5 and terms.items == 4
    page = _join_page(invite)
    assert "about 2 minutes" in page  # 30 s x 4 items
    assert "median of 30 seconds per item over the 5 items" in page
    assert "bonus of 0.25 per item" in page and "0.10 per known-answer check" in page
    assert "up to 1.00 in all" in page
