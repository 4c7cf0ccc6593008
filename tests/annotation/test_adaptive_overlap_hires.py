"""Issue 38, H2: adaptive overlap widens only onto people who can still work; a
completed hire stays completed; an item nobody could take waits for the next person
who can, and the report counts it."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation import hiring
from annotation.hiring import Invite
from annotation.models import AdaptiveOverlap, Assignment, Item, Membership, OverlapWait
from tests.annotation.api_helpers import token_client
from tests.annotation.test_adaptive_overlap import _post_page
from tests.annotation.test_hiring import answer, hire_of, invite, join

__all__ = ["invite"]  # the fixture


def test_a_completed_hire_gets_no_widened_item_and_the_item_waits(
    invite: Invite, alpha_items: list[Item], users: dict[str, User]
) -> None:
    AdaptiveOverlap.objects.create(
        project=invite.project, kind="comparison", field="choice", start=2, up_to=3
    )
    client = Client()
    join(client, invite, PROLIFIC_PID="w-done")
    hire = hire_of(client)
    for a in Assignment.objects.filter(annotator=hire.membership.user).order_by("position"):
        answer(client, a, choice_side="a")
    hire.refresh_from_db()
    assert hiring.status(hire) == hiring.COMPLETED
    item = alpha_items[3]  # bob's and carol's only
    assert not item.assignments.filter(annotator=hire.membership.user).exists()
    bob, carol = (item.assignments.get(annotator=users[n]) for n in ("bob", "carol"))
    _post_page(users["bob"], bob, "a")
    _post_page(users["carol"], carol, "b")  # they disagree: one more is wanted
    assert item.assignments.count() == 2  # nobody who can still work was free
    hire.refresh_from_db()
    assert hiring.status(hire) == hiring.COMPLETED and hire.returned_at is None
    assert OverlapWait.objects.filter(item=item).exists()
    alice = token_client(users["alice"])
    report = alice.get(f"/api/projects/{invite.project_id}/report/?bootstrap=20").json()
    section = next(s for s in report["sections"] if s["slug"] == "adaptive-overlap")
    summary = next(t for t in section["tables"] if t["name"] == "adaptive-overlap")["rows"][0]
    assert summary["items waiting for an annotator"] == 1
    # the next person who can work takes it when they ask for an item
    dave = User.objects.create_user("dave-h38a")
    invite.project.add_member(dave, Membership.ANNOTATOR).acknowledge()
    other = Client()
    other.force_login(dave)
    r = other.get(reverse("next_item", args=[invite.project_id]))
    given = item.assignments.get(annotator=dave)
    assert r["Location"] == reverse("assignment", args=[given.pk])
    assert not OverlapWait.objects.filter(item=item).exists()
