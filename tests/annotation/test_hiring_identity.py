"""Issue 38, H1: an invite names its market and takes only the ids that market
documents; ids compare in any letter case; a deleted id cannot join again; the study and
session ids are checked."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation import hiring
from annotation.hiring import ErasedWorker, Hire, Invite
from annotation.hiring.markets import PROLIFIC
from annotation.models import Item, Project
from tests.annotation.api_helpers import token_client
from tests.annotation.test_hiring import invite, join

__all__ = ["invite"]  # the fixture

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
STUDY = "60aa11bb22cc33dd44ee55ff"
SESSION = "61bb22cc33dd44ee55ff6600"


@pytest.fixture
def prolific(invite: Invite) -> Invite:
    invite.market, invite.study_id = PROLIFIC, STUDY
    invite.save()
    return invite


def post_join(invite: Invite, client: Client | None = None, **params: str) -> int:
    r = (client or Client()).post(reverse("join", args=[invite.key]), params)
    return int(r.status_code)


@pytest.mark.parametrize(
    "pid",
    [
        "w-123",  # the generic form: not a Prolific id
        PID.upper(),  # Prolific's ids are lowercase
        PID[:-1],
        PID + "0",
        "g" + PID[1:],
    ],
)
def test_a_prolific_link_takes_only_prolific_ids(prolific: Invite, pid: str) -> None:
    assert post_join(prolific, PROLIFIC_PID=pid, STUDY_ID=STUDY, SESSION_ID=SESSION) == 400
    api = token_client(None).post(
        reverse("api_join", args=[prolific.key]),
        {"PROLIFIC_PID": pid, "STUDY_ID": STUDY, "SESSION_ID": SESSION},
        format="json",
    )
    assert api.status_code == 400 and "24 lowercase hexadecimal" in api.json()["message"]
    assert not Hire.objects.exists()


def test_a_prolific_link_checks_the_study_and_stores_the_session(prolific: Invite) -> None:
    other_study = "7" * 24
    assert post_join(prolific, PROLIFIC_PID=PID, STUDY_ID=other_study, SESSION_ID=SESSION) == 400
    assert post_join(prolific, PROLIFIC_PID=PID, SESSION_ID=SESSION) == 400  # no study id
    assert post_join(prolific, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID="x") == 400
    assert not Hire.objects.exists()
    join(Client(), prolific, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=SESSION)
    hire = Hire.objects.get()
    assert hire.worker_id == PID
    assert hire.worker_params == {"STUDY_ID": STUDY, "SESSION_ID": SESSION}
    # a made-up id replaying someone's session gets no account
    assert post_join(prolific, PROLIFIC_PID="a" * 24, STUDY_ID=STUDY, SESSION_ID=SESSION) == 400
    assert Hire.objects.count() == 1


def test_an_upper_case_copy_of_an_id_is_the_same_worker(invite: Invite) -> None:
    join(Client(), invite, PROLIFIC_PID="w-abc")
    for copy in ("W-ABC", "w-Abc", "W-abc"):
        assert post_join(invite, PROLIFIC_PID=copy) == 409, copy
    api = token_client(None).post(
        reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "W-ABC"}, format="json"
    )
    assert api.status_code == 409
    # through a second invite of the same project too
    second = Invite.objects.create(project=invite.project, items_per_person=1)
    assert post_join(second, PROLIFIC_PID="W-aBc") == 409
    assert Hire.objects.count() == 1


def test_a_deleted_worker_id_cannot_join_again(invite: Invite) -> None:
    client = Client()
    join(client, invite, PROLIFIC_PID="w-gone")
    hiring.erase(Hire.objects.get())
    assert not Hire.objects.filter(worker_id__iexact="w-gone").exists()
    erased = ErasedWorker.objects.get()
    assert "w-gone" not in erased.digest and len(erased.digest) == 64  # a hash, not the id
    for again in ("w-gone", "W-GONE"):
        assert post_join(invite, PROLIFIC_PID=again) == 400, again
    r = token_client(None).post(
        reverse("api_join", args=[invite.key]), {"PROLIFIC_PID": "w-gone"}, format="json"
    )
    assert r.status_code == 400 and "deleted" in r.json()["message"]
    assert Hire.objects.count() == 1
    # another project's link still takes the id: the hash is per project
    other = Project.objects.create(name="other")
    assert hiring.identity_hash(other.pk, "w-gone") != erased.digest


def test_the_hash_is_keyed_by_the_secret_key(invite: Invite, settings: object) -> None:
    before = hiring.identity_hash(invite.project_id, "w-1")
    assert before == hiring.identity_hash(invite.project_id, "W-1")
    settings.SECRET_KEY = "another secret key, long enough to be a real one 0123456789"  # type: ignore[attr-defined]
    assert hiring.identity_hash(invite.project_id, "w-1") != before


@pytest.mark.parametrize(
    ("market", "good", "bad"),
    [
        ("mturk", "A1B2C3D4E5F6G7", ["a1b2c3d4e5f6g7", "B1B2C3D4E5F6G7", "A", "A-1"]),
        ("cloudresearch", "TP_1UPKSI2WHSJ4", ["tp_1upksi2whsj4", "TP-1", "X1"]),
    ],
)
def test_mturk_and_cloudresearch_links_take_their_forms(
    alpha: Project,
    alpha_items: list[Item],
    users: dict[str, User],
    market: str,
    good: str,
    bad: list[str],
) -> None:
    r = token_client(users["alice"]).post(
        reverse("api_invites", args=[alpha.pk]),
        {"market": market, "items_per_person": 1},
        format="json",
    )
    assert r.status_code == 201, r.content
    assert r.json()["worker_param"] == "workerId" and r.json()["market"] == market
    invite = Invite.objects.get()
    for worker in bad:
        assert post_join(invite, workerId=worker) == 400, worker
    assert post_join(invite, workerId=good, assignmentId="3AMYWKA6YBLU") == 200
    assert Hire.objects.get().worker_params == {"assignmentId": "3AMYWKA6YBLU"}


def test_a_market_invite_is_checked_when_made(alpha: Project, users: dict[str, User]) -> None:
    api = token_client(users["alice"])
    url = reverse("api_invites", args=[alpha.pk])
    for bad in (
        {"market": "ebay"},
        {"market": "prolific", "study_id": "not-hex"},
        {"market": "prolific", "worker_param": ""},
    ):
        assert api.post(url, bad, format="json").status_code == 400, bad
    r = api.post(url, {"market": "prolific", "study_id": STUDY}, format="json")
    assert r.status_code == 201 and r.json()["worker_param"] == "PROLIFIC_PID"
    # the page's form too: its Prolific default becomes the market's parameter
    client = Client()
    client.force_login(users["alice"])
    client.post(
        reverse("hiring", args=[alpha.pk]),
        {
            "action": "invite",
            "market": "mturk",
            "worker_param": "PROLIFIC_PID",
            "items_per_person": 1,
        },
    )
    assert Invite.objects.order_by("pk").last().worker_param == "workerId"  # type: ignore[union-attr]
