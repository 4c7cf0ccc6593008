"""Issue 43: a researcher manages a running study: removes a member (their unsubmitted
items back to the pool through hiring.give_back_open; their answers stay, marked),
withdraws or reassigns a person's items, deletes items or the project (a confirmation
counting what goes; soft, restorable, purged after DELETED_KEEP_DAYS; the report's data
version bumps). Pages, API, permissions and attacks."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation import exports, hiring, manage, operations
from annotation.answers import read_answers
from annotation.models import Answer, Assignment, Deletion, Item, Membership, Project

from .conftest import submit

VALUES = {("item", "choice"): "1", ("item", "hard"): "no"}
FORM = {"choice": "1", "hard": "no", "justification": "List 1 is right."}


def _client(user: User) -> Client:
    c = Client()
    c.force_login(user)
    return c


def _api(user: User) -> APIClient:
    c = APIClient()
    c.force_authenticate(user)
    return c


def _version(project: Project) -> int:
    return Project.objects.values_list("data_version", flat=True).get(pk=project.pk)


def _member(project: Project, user: User) -> Membership:
    return Membership.objects.get(project=project, user=user)


# --- permissions ------------------------------------------------------------------------


def test_only_the_projects_researchers_manage_it(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    bob = _member(alpha, users["bob"])
    carol = _member(alpha, users["carol"])
    ids = [alpha_items[0].pk]
    for who in ("bob", "erin"):  # an annotator of the project; another project's researcher
        c, api = _client(users[who]), _api(users[who])
        assert c.get(reverse("manage", args=[alpha.pk])).status_code == 404
        assert c.post(reverse("manage_remove", args=[alpha.pk, carol.pk])).status_code == 404
        r = c.post(reverse("manage", args=[alpha.pk]), {"member": carol.pk, "to": bob.pk})
        assert r.status_code == 404
        r = c.post(reverse("manage_delete", args=[alpha.pk]), {"items": ids[0], "confirm": "yes"})
        assert r.status_code == 404
        r = c.post(reverse("manage_delete", args=[alpha.pk]), {"whole": "1", "confirm": "yes"})
        assert r.status_code == 404
        base = f"/api/projects/{alpha.pk}"
        assert api.post(f"{base}/members/{carol.pk}/remove/").status_code == 404
        body = {"member": carol.pk, "to": bob.pk}
        assert api.post(f"{base}/withdraw/", body, format="json").status_code == 404
        assert api.post(f"{base}/delete-items/", {"items": ids}, format="json").status_code == 404
        assert api.post(f"{base}/delete/").status_code == 404
        assert api.get(f"{base}/deletions/").status_code == 404
    assert _member(alpha, users["carol"]).role == Membership.ANNOTATOR
    assert Item.objects.filter(project=alpha).count() == 4 and Project.objects.filter(pk=alpha.pk)
    assert Assignment.objects.filter(annotator=users["carol"]).count() == 4


def test_a_deletion_of_another_project_cannot_be_restored_through_mine(
    alpha: Project, beta: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    deletion = manage.delete_items(alpha, [alpha_items[0].pk], users["alice"])
    assert deletion is not None
    erin = _api(users["erin"])  # beta's researcher, naming alpha's deletion
    r = erin.post(f"/api/projects/{beta.pk}/deletions/{deletion.pk}/restore/")
    assert r.status_code == 200 and r.json() == {"restored": False}
    assert (
        erin.post(f"/api/projects/{alpha.pk}/deletions/{deletion.pk}/restore/").status_code == 404
    )
    assert not Item.objects.filter(pk=alpha_items[0].pk).exists()


# --- removing a member ------------------------------------------------------------------


def test_removing_a_member_frees_their_open_items_and_keeps_their_answers(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    submit(alpha_items[0], users["bob"], VALUES)
    bob = _member(alpha, users["bob"])
    before = _version(alpha)
    c = _client(users["alice"])
    r = c.post(reverse("manage_remove", args=[alpha.pk, bob.pk]), follow=True)
    assert "3 unsubmitted item(s) back to the pool" in r.content.decode()
    bob.refresh_from_db()
    assert bob.role == Membership.REMOVED and bob.removed_at is not None
    mine = Assignment.objects.filter(annotator=users["bob"])
    assert list(mine.values_list("status", flat=True)) == [Assignment.SUBMITTED]
    assert _version(alpha) > before
    # the answer stays in the exports under the pseudonym, marked on the manage page
    rows = exports.long_rows(alpha)
    assert {r["annotator"] for r in rows if r["item"] == alpha_items[0].pk} >= {bob.pseudonym}
    page = c.get(reverse("manage", args=[alpha.pk])).content.decode()
    assert "removed member" in page and "answers kept" in page
    page = c.get(reverse("annotators", args=[alpha.pk])).content.decode()
    assert f"{bob.pseudonym} (removed member)" in page
    # no access any more: queue, item page, API
    gone = _client(users["bob"])
    assert gone.get(reverse("next_item", args=[alpha.pk])).status_code == 404
    assert gone.get(reverse("assignment", args=[mine.get().pk])).status_code == 404
    assert _api(users["bob"]).get(f"/api/assignments/{mine.get().pk}/").status_code == 404
    assert _api(users["bob"]).get("/api/projects/").json()["results"] == []
    assert reverse("queue", args=[alpha.pk]) not in gone.get(reverse("home")).content.decode()
    # twice: nothing more happens
    r = _api(users["alice"]).post(f"/api/projects/{alpha.pk}/members/{bob.pk}/remove/")
    assert r.status_code == 200 and r.json() == {"member": bob.pseudonym, "freed": 0}


def test_a_researcher_cannot_remove_themselves(alpha: Project, users: dict[str, User]) -> None:
    alice = _member(alpha, users["alice"])
    r = _api(users["alice"]).post(f"/api/projects/{alpha.pk}/members/{alice.pk}/remove/")
    assert r.status_code == 400 and "yourself" in r.json()["message"]
    assert _member(alpha, users["alice"]).role == Membership.RESEARCHER


def test_a_removed_hired_worker_goes_through_give_back_open(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    invite = hiring.Invite.objects.create(project=alpha, items_per_person=2, worker_param="")
    hire = hiring.join(invite, {})
    assert Assignment.objects.filter(annotator=hire.membership.user).open().count() == 2
    freed = manage.remove_member(hire.membership, users["alice"])
    assert freed == 2 and not Assignment.objects.filter(annotator=hire.membership.user).exists()


# --- withdraw and reassign --------------------------------------------------------------


def test_reassigned_items_start_empty_for_the_other_person(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    alpha.add_member(users["dave"], Membership.ANNOTATOR)
    bob, dave = _member(alpha, users["bob"]), _member(alpha, users["dave"])
    submit(alpha_items[0], users["bob"], VALUES)
    draft = Assignment.objects.get(item=alpha_items[1], annotator=users["bob"])
    draft.save_draft({("item", "choice"): "2"}, guideline_version=1)
    r = _api(users["alice"]).post(
        f"/api/projects/{alpha.pk}/withdraw/",
        {"member": bob.pk, "items": [alpha_items[0].pk, alpha_items[1].pk], "to": dave.pk},
        format="json",
    )
    assert r.status_code == 200 and r.json() == {"withdrawn": 1, "reassigned": 1, "kept": 1}
    given = Assignment.objects.get(annotator=users["dave"])
    assert given.item_id == alpha_items[1].pk and given.status == Assignment.PENDING
    assert not Answer.objects.filter(assignment=given).exists()  # bob's draft stays his
    # the rest back to the pool, from the page
    c = _client(users["alice"])
    r = c.post(reverse("manage", args=[alpha.pk]), {"member": bob.pk, "items": ""}, follow=True)
    assert "2 unsubmitted item(s) withdrawn (back to the pool)" in r.content.decode()
    assert Assignment.objects.filter(annotator=users["bob"]).count() == 1


def test_reassigning_to_a_non_member_or_oneself_is_refused(
    alpha: Project, beta: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    bob = _member(alpha, users["bob"])
    api = _api(users["alice"])
    url = f"/api/projects/{alpha.pk}/withdraw/"
    dave_in_beta = _member(beta, users["dave"])
    r = api.post(url, {"member": bob.pk, "to": dave_in_beta.pk}, format="json")
    assert r.status_code == 400
    r = api.post(url, {"member": bob.pk, "to": bob.pk}, format="json")
    assert r.status_code == 400
    assert Assignment.objects.filter(annotator=users["bob"]).count() == 4


def test_a_submission_after_a_withdrawal_is_refused_with_a_message(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    """The two orders a submit and a withdrawal can take (each holds the row's lock in
    turn): submitted first is kept; withdrawn first refuses the submission, said."""
    bob = _member(alpha, users["bob"])
    first = Assignment.objects.get(item=alpha_items[0], annotator=users["bob"])
    second = Assignment.objects.get(item=alpha_items[1], annotator=users["bob"])
    page = operations.answer(first, bob, FORM)
    assert page.result == operations.Result.SUBMITTED
    stale = Assignment.objects.select_related("item__project").get(pk=second.pk)  # tab open
    n = manage.withdraw(alpha, bob, [alpha_items[0].pk, alpha_items[1].pk])
    assert n == {"withdrawn": 1, "reassigned": 0, "kept": 1}
    assert Assignment.objects.get(pk=first.pk).status == Assignment.SUBMITTED  # kept
    late = operations.answer(stale, bob, FORM)
    assert late.result == operations.Result.REFUSED and late.reason == operations.WITHDRAWN
    assert not Answer.objects.filter(assignment_id=second.pk).exists()
    # the page says so, never a silent loss
    c = _client(users["bob"])
    r = c.post(reverse("assignment", args=[second.pk]), FORM)
    assert r.status_code == 404 and "taken it back from you" in r.content.decode()


def test_the_api_refuses_a_withdrawn_submission_with_409(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    bob = _member(alpha, users["bob"])
    target = Assignment.objects.get(item=alpha_items[2], annotator=users["bob"])
    real_check = operations.too_long

    def withdrawn_meanwhile(project: Project, values: dict[tuple[str, str], str]) -> str | None:
        # another request's withdrawal, committed after the form was read and before the
        # submission's own transaction (which also writes its webhook events) begins
        manage.withdraw(alpha, bob, [target.item_id])
        return real_check(project, values)

    monkeypatch.setattr(operations, "too_long", withdrawn_meanwhile)
    body = {
        "answers": [
            {"unit": "item", "field": "choice", "value": "1"},
            {"unit": "item", "field": "hard", "value": "no"},
            {"unit": "item", "field": "justification", "value": "List 1 is right."},
        ]
    }
    r = _api(users["bob"]).post(f"/api/assignments/{target.pk}/submit/", body, format="json")
    assert r.status_code == 409 and r.json()["code"] == "withdrawn", r.content
    assert not Assignment.objects.filter(pk=target.pk).exists()


# --- deleting and restoring -------------------------------------------------------------


def test_deleting_items_confirms_counts_hides_them_and_restores(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    submit(alpha_items[0], users["bob"], VALUES)
    submit(alpha_items[0], users["carol"], VALUES)
    c = _client(users["alice"])
    url = reverse("manage_delete", args=[alpha.pk])
    ids = f"{alpha_items[0].pk}, {alpha_items[1].pk}, 999999"
    page = c.get(url, {"items": ids}).content.decode()
    assert "Delete 2 items of alpha?" in page
    assert "2 submitted assignments (4 answer values) by 2 annotators" in page
    assert "2 unsubmitted" in page and "left out: 999999" in page
    assert Item.objects.filter(project=alpha).count() == 4  # a GET deletes nothing
    before = _version(alpha)
    r = c.post(url, {"items": ids, "confirm": "yes"}, follow=True)
    assert "2 item(s) deleted" in r.content.decode()
    assert _version(alpha) > before
    gone = {alpha_items[0].pk, alpha_items[1].pk}
    assert not Item.objects.filter(pk__in=gone).exists()
    assert Item.all_objects.filter(pk__in=gone).count() == 2
    # out of the queue, the items API, the exports, the report's answers
    bob = _client(users["bob"])
    queue_first = Assignment.objects.get(item=alpha_items[1], annotator=users["bob"])
    assert bob.get(reverse("assignment", args=[queue_first.pk])).status_code == 404
    r = _api(users["alice"]).get(f"/api/projects/{alpha.pk}/items/")
    listed = {row["id"] for row in r.json()["results"]}
    assert listed == {alpha_items[2].pk, alpha_items[3].pk}
    assert not [row for row in exports.long_rows(alpha) if row["item"] in gone]
    assert not gone & set(read_answers(alpha).domains)  # the report's answers
    # twice: nothing more
    r = c.post(url, {"items": ids, "confirm": "yes"}, follow=True)
    assert "deleted already" in r.content.decode()
    assert Deletion.objects.count() == 1
    deletion = Deletion.objects.get()
    before = _version(alpha)
    restore = reverse("manage_restore", args=[alpha.pk, deletion.pk])
    assert "2 item(s) restored" in c.post(restore, follow=True).content.decode()
    assert _version(alpha) > before and Item.objects.filter(project=alpha).count() == 4
    assert "Restored already" in c.post(restore, follow=True).content.decode()
    assert len([r for r in exports.long_rows(alpha) if r["item"] == alpha_items[0].pk]) == 4


def test_deleting_the_project_hides_it_from_everyone_until_restored(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    invite = hiring.Invite.objects.create(project=alpha, items_per_person=1)
    c = _client(users["alice"])
    url = reverse("manage_delete", args=[alpha.pk])
    page = c.get(url, {"whole": "1"}).content.decode()
    assert "Delete the project alpha?" in page and "3 members" in page
    c.post(url, {"whole": "1", "confirm": "yes"})
    c.post(url, {"whole": "1", "confirm": "yes"})  # twice: one deletion
    assert Deletion.objects.filter(project=alpha, whole_project=True).count() == 1
    assert c.get(reverse("project", args=[alpha.pk])).status_code == 404
    assert reverse("project", args=[alpha.pk]) not in c.get(reverse("home")).content.decode()
    listed = _api(users["alice"]).get("/api/projects/").json()["results"]
    assert alpha.pk not in [p["id"] for p in listed]
    bob = _client(users["bob"])
    assert bob.get(reverse("next_item", args=[alpha.pk])).status_code == 404
    a = Assignment.objects.filter(annotator=users["bob"]).first()
    assert a is not None and bob.get(reverse("assignment", args=[a.pk])).status_code == 404
    assert Client().get(reverse("join", args=[invite.key])).status_code == 404
    trash = c.get(reverse("trash")).content.decode()
    assert "alpha" in trash and "restorable until" in trash
    d = Deletion.objects.get(project=alpha)
    api = _api(users["alice"])
    r = api.post(f"/api/projects/{alpha.pk}/deletions/{d.pk}/restore/")
    assert r.json() == {"restored": True}
    assert api.post(f"/api/projects/{alpha.pk}/deletions/{d.pk}/restore/").json() == {
        "restored": False
    }
    assert c.get(reverse("project", args=[alpha.pk])).status_code == 200
    assert bob.get(reverse("next_item", args=[alpha.pk])).status_code in (200, 302)


def test_the_purge_deletes_for_good_after_the_set_period(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], settings: object
) -> None:
    settings.DELETED_KEEP_DAYS = 7  # type: ignore[attr-defined]
    submit(alpha_items[0], users["bob"], VALUES)
    api = _api(users["alice"])
    r = api.post(
        f"/api/projects/{alpha.pk}/delete-items/", {"items": [alpha_items[0].pk]}, format="json"
    )
    row = r.json()
    assert r.status_code == 200 and row["summary"]["submitted"] == 1
    at = dt.datetime.fromisoformat(row["at"])
    assert dt.datetime.fromisoformat(row["purge_after"]) - at == dt.timedelta(days=7)
    assert manage.purge(now=timezone.now() + dt.timedelta(days=6)) == {"projects": 0, "items": 0}
    assert Item.all_objects.filter(pk=alpha_items[0].pk).exists()
    Deletion.objects.update(at=timezone.now() - dt.timedelta(days=8))
    call_command("purge_deleted", stdout=open("/dev/null", "w"))
    assert not Item.all_objects.filter(pk=alpha_items[0].pk).exists()
    assert not Answer.objects.filter(assignment__item_id=alpha_items[0].pk).exists()
    assert not Deletion.objects.exists() and Item.objects.filter(project=alpha).count() == 3
    manage.delete_project(alpha, users["alice"])
    Project.objects.filter(pk=alpha.pk).update(deleted_at=timezone.now() - dt.timedelta(days=8))
    Deletion.objects.update(at=timezone.now() - dt.timedelta(days=8))
    assert manage.purge() == {"projects": 1, "items": 0}
    assert not Project.objects.filter(pk=alpha.pk).exists()


def test_erasing_a_workers_personal_data_stays_a_real_deletion(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    invite = hiring.Invite.objects.create(project=alpha, items_per_person=1)
    hire = hiring.join(invite, {"PROLIFIC_PID": "w-erase-1"})
    manage.delete_items(
        alpha, [a.item_id for a in hire.membership.user.assignments.all()], users["alice"]
    )
    hiring.erase(hire)
    stored = hiring.Hire.objects.get(pk=hire.pk)
    assert stored.worker_id == "" and stored.worker_params == {}
    assert not hiring.Hire.objects.filter(worker_id="w-erase-1").exists()
    # restoring the items brings back no personal data
    for d in Deletion.objects.all():
        manage.restore(d.pk, alpha)
    assert hiring.Hire.objects.get(pk=hire.pk).worker_id == ""


def test_an_archived_project_is_closed_to_annotators_and_joins_not_to_researchers(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    invite = hiring.Invite.objects.create(project=alpha, items_per_person=1)
    c = _client(users["alice"])
    r = c.post(reverse("manage_archive", args=[alpha.pk]), {"archived": "1"}, follow=True)
    assert "Archived: closed to annotators" in r.content.decode()
    bob = _client(users["bob"])
    a = Assignment.objects.filter(annotator=users["bob"]).first()
    assert a is not None
    assert bob.get(reverse("next_item", args=[alpha.pk])).status_code == 404
    assert bob.get(reverse("assignment", args=[a.pk])).status_code == 404
    assert _api(users["bob"]).get(f"/api/assignments/{a.pk}/").status_code == 404
    assert reverse("queue", args=[alpha.pk]) not in bob.get(reverse("home")).content.decode()
    page = Client().get(reverse("join", args=[invite.key]) + "?PROLIFIC_PID=w1")
    assert page.status_code == 410 and "This study is closed." in page.content.decode()
    for name in ("project", "report", "manage", "hiring"):
        assert c.get(reverse(name, args=[alpha.pk])).status_code == 200, name
    api = _api(users["alice"])
    url = f"/api/projects/{alpha.pk}/archive/"
    assert api.post(url, {"archived": True}, format="json").json() == {
        "archived": True,
        "changed": False,
    }
    assert _api(users["bob"]).post(url, {"archived": False}, format="json").status_code == 404
    assert api.post(url, {"archived": False}, format="json").json() == {
        "archived": False,
        "changed": True,
    }
    assert bob.get(reverse("assignment", args=[a.pk])).status_code in (200, 302)
