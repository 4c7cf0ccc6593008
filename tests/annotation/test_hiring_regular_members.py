"""Issue 38 (low): pausing a regular annotator made them a hire: a payments row with a
bonus, and "delete worker data" deleted their API token. A regular member's pause never
makes them a hired worker."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.models import Membership, Project
from tests.annotation.api_helpers import token_client


def test_pausing_a_regular_member_never_makes_them_a_hire(
    alpha: Project, users: dict[str, User]
) -> None:
    bob = Membership.objects.get(project=alpha, user=users["bob"])
    token = Token.objects.create(user=users["bob"])
    client = Client()
    client.force_login(users["alice"])
    url = reverse("hiring_member", args=[alpha.pk, bob.pk])
    client.post(url, {"action": "pause"})
    assert Hire.objects.get(membership=bob).paused  # paused ...
    assert hiring.blocked(bob) == "paused"
    assert hiring.payments(alpha) == []  # ... but no payments row, no bonus
    row = next(r for r in hiring.quality_rows(alpha) if r["membership"] == bob.pk)
    assert row["paused"] and not row["hired"]
    client.post(url, {"action": "erase"})
    assert Token.objects.filter(pk=token.pk).exists()  # their API token stays
    api = token_client(users["alice"])
    data = f"/api/projects/{alpha.pk}/quality/{bob.pk}/data/"
    assert api.delete(data).status_code == 404
    assert Token.objects.filter(pk=token.pk).exists()
    assert client.get(reverse("hiring_worker_data", args=[alpha.pk, bob.pk])).status_code == 404
    # a hired worker still has both
    hire = hiring.join(Invite.objects.create(project=alpha), {"PROLIFIC_PID": "w1"})
    assert [r["worker_id"] for r in hiring.payments(alpha)] == ["w1"]
    Token.objects.create(user=hire.membership.user)
    assert (
        api.delete(f"/api/projects/{alpha.pk}/quality/{hire.membership_id}/data/").status_code
        == 204
    )
    assert not Token.objects.filter(user=hire.membership.user).exists()
