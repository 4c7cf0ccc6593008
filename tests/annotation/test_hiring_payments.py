"""Issue 25: the payments export (page, API, command) checked against the stored
answers; a worker's personal data exported and deleted; who may see them."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db.models import Sum
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from statsmodels.stats.proportion import proportion_confint

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.models import Answer, Assignment, Item
from tests.annotation.api_helpers import token_client
from tests.annotation.test_hiring import answer, hire_of, invite, join, set_policy

__all__ = ["invite"]  # the fixture


@pytest.fixture
def study(invite: Invite, alpha_items: list[Item]) -> dict[str, Hire]:
    """Item 3 is a check; "done" passes training and answers everything (the check
    right), "out" fails training, "slow" passes training and answers nothing more."""
    hiring.mark(alpha_items[3], hiring.CHECK, {"item.hard": "no"})
    set_policy(
        invite.project,
        check_rate=1 / 3,
        pay_per_item=Decimal("0.50"),
        pay_per_correct_check=Decimal("0.25"),
    )
    invite.extra_params = ["STUDY_ID", "SESSION_ID"]
    invite.save()
    hires = {}
    for n, (worker, side) in enumerate((("done", "a"), ("out", "b"), ("slow", "a"))):
        client = Client(REMOTE_ADDR=f"10.0.0.{n + 1}")  # three people: three addresses
        join(client, invite, PROLIFIC_PID=f"w-{worker}", STUDY_ID="s1", SESSION_ID=f"x{worker}")
        hire = hire_of(client)
        mine = Assignment.objects.filter(annotator=hire.membership.user).order_by("position")
        for a in mine if worker == "done" else mine[:1]:
            answer(client, a, choice_side=side, hard="no" if side == "a" else "yes")
        mine.update(active_seconds=90)
        hires[worker] = hire
    return hires


def _expected(hire: Hire) -> dict[str, object]:
    """The row recomputed from the stored answers, not from hiring's own functions."""
    user = hire.membership.user
    mine = Assignment.objects.filter(annotator=user)
    real = mine.filter(item__quality__isnull=True, status=Assignment.SUBMITTED).count()
    checks = Answer.objects.filter(
        assignment__annotator=user,
        assignment__status=Assignment.SUBMITTED,
        assignment__item__quality__role=hiring.CHECK,
        field="hard",
    )
    right = checks.filter(value="no").count()
    minutes = (mine.aggregate(s=Sum("active_seconds"))["s"] or 0) / 60
    return {
        "real": real,
        "checks": checks.count(),
        "right": right,
        "minutes": round(minutes, 1),
        "bonus": Decimal("0.50") * real + Decimal("0.25") * right,
    }


def test_the_payments_rows_match_the_stored_answers(study: dict[str, Hire]) -> None:
    rows = {r["worker_id"]: r for r in hiring.payments(study["done"].membership.project)}
    assert {w: r["status"] for w, r in rows.items()} == {
        "w-done": hiring.COMPLETED,
        "w-out": hiring.SCREENED_OUT,
        "w-slow": hiring.IN_PROGRESS,
    }
    for worker, hire in study.items():
        row, want = rows[f"w-{worker}"], _expected(hire)
        assert row["worker_params"] == {"STUDY_ID": "s1", "SESSION_ID": f"x{worker}"}
        assert row["real_items_submitted"] == want["real"]
        assert (row["checks"], row["checks_correct"]) == (want["checks"], want["right"])
        assert row["active_minutes"] == want["minutes"] and row["bonus"] == want["bonus"]
        if want["checks"]:
            low, high = proportion_confint(want["right"], want["checks"], method="wilson")
            assert (row["check_ci_low"], row["check_ci_high"]) == (low, high)
    done = rows["w-done"]
    assert (done["real_items_submitted"], done["checks_correct"]) == (2, 1)
    assert done["bonus"] == Decimal("1.25") and done["active_minutes"] == 6.0


def test_csv_bonus_file_api_and_command_agree(
    study: dict[str, Hire], users: dict[str, User], tmp_path
) -> None:  # type: ignore[no-untyped-def]
    project = study["done"].membership.project
    alice = Client()
    alice.force_login(users["alice"])
    url = reverse("hiring_payments", args=[project.pk])
    page_csv = alice.get(url, {"layout": "csv"}).content.decode()
    table = list(csv.DictReader(io.StringIO(page_csv)))
    assert [r["worker_id"] for r in table] == ["w-done", "w-out", "w-slow"]
    assert table[0]["SESSION_ID"] == "xdone" and table[0]["bonus"] == "1.25"
    assert table[0]["status"] == "completed" and table[1]["status"] == "screened out"
    bonus = alice.get(url, {"layout": "bonus"}).content.decode()
    assert bonus == "w-done,1.25\n"  # nobody else earned a bonus
    api = token_client(users["alice"])
    rows = api.get(reverse("api_payments", args=[project.pk])).json()
    assert [(r["worker_id"], r["bonus"]) for r in rows][0] == ("w-done", "1.25")
    assert (
        api.get(reverse("api_payments", args=[project.pk]), {"layout": "csv"}).content.decode()
        == page_csv
    )
    assert (
        api.get(reverse("api_payments", args=[project.pk]), {"layout": "bonus"}).content.decode()
        == bonus
    )
    out = tmp_path / "bonus.csv"
    call_command("hiring_payments", str(project.pk), "--bonus", "-o", str(out))
    assert out.read_text() == bonus
    buf = io.StringIO()
    call_command("hiring_payments", "alpha", stdout=buf)
    assert buf.getvalue() == page_csv
    assert b'id="bonus-csv"' in alice.get(reverse("hiring", args=[project.pk])).content


def test_only_the_projects_researchers_see_payments_and_worker_data(
    study: dict[str, Hire], users: dict[str, User]
) -> None:
    project = study["done"].membership.project
    m = study["done"].membership_id
    worker = Client()
    worker.force_login(study["done"].membership.user)
    worker_api = token_client(study["done"].membership.user)
    for who in (users["bob"], users["erin"]):
        c = Client()
        c.force_login(who)
        assert c.get(reverse("hiring_payments", args=[project.pk])).status_code == 404
        assert c.get(reverse("hiring_worker_data", args=[project.pk, m])).status_code == 404
    for api in (worker_api, token_client(users["bob"]), token_client(users["erin"])):
        assert api.get(reverse("api_payments", args=[project.pk])).status_code == 404
        assert api.get(reverse("api_worker_data", args=[project.pk, m])).status_code == 404
        assert api.delete(reverse("api_worker_data", args=[project.pk, m])).status_code == 404
    assert worker.get(reverse("hiring_worker_data", args=[project.pk, m])).status_code == 404
    assert Hire.objects.get(pk=study["done"].pk).worker_id == "w-done"
    alice = token_client(users["alice"])
    bad = alice.get(reverse("api_payments", args=[project.pk]), {"layout": "xlsx"})
    assert bad.status_code == 400 and bad.json()["field"] == "layout"
    bob_m = project.memberships.get(user=users["bob"]).pk  # not a hire
    assert alice.get(reverse("api_worker_data", args=[project.pk, bob_m])).status_code == 404
    assert alice.get(reverse("api_worker_data", args=[project.pk, 10**9])).status_code == 404


def test_pay_rates_are_refused_outside_0_to_1000(study: dict[str, Hire], users) -> None:  # type: ignore[no-untyped-def]
    project = study["done"].membership.project
    api = token_client(users["alice"])
    url = reverse("api_hiring_policy", args=[project.pk])
    base = {"pass_mark": 0.8, "check_rate": 0.1, "pause_below": None, "pause_after": 3}
    for bad in ("-1", "1000000", "nan", "abc"):
        r = api.put(url, {**base, "pay_per_item": bad}, format="json")
        assert r.status_code == 400, bad
    r = api.put(url, {**base, "pay_per_correct_check": "0.05"}, format="json")
    assert r.status_code == 200 and r.json()["pay_per_item"] == "0.50"  # kept


def test_a_workers_data_is_exported_then_deleted_keeping_the_answers(
    study: dict[str, Hire], users: dict[str, User]
) -> None:
    hire = study["done"]
    project = hire.membership.project
    alice = Client()
    alice.force_login(users["alice"])
    data = alice.get(reverse("hiring_worker_data", args=[project.pk, hire.membership_id])).json()
    assert data["worker_id"] == "w-done" and data["worker_params"]["SESSION_ID"] == "xdone"
    stored = Answer.objects.filter(assignment__annotator=hire.membership.user).count()
    assert len(data["answers"]) == stored > 0
    old_url = reverse("hire_login", args=[hire.key])
    token_client(hire.membership.user)  # the worker has an API token
    alice.post(reverse("hiring_member", args=[project.pk, hire.membership_id]), {"action": "erase"})
    hire.refresh_from_db()
    assert (hire.worker_id, hire.worker_params, hire.erased_at is not None) == ("", {}, True)
    assert Answer.objects.filter(assignment__annotator=hire.membership.user).count() == stored
    assert Client().get(old_url).status_code == 404
    assert not Token.objects.filter(user_id=hire.membership.user_id).exists()
    page = alice.get(reverse("hiring", args=[project.pk])).content.decode()
    assert "w-done" not in page and "xdone" not in page
    assert "w-done" not in hiring.payments_file(project) + hiring.payments_file(project, "bonus")
    # the API deletes the same way
    api = token_client(users["alice"])
    r = api.delete(reverse("api_worker_data", args=[project.pk, study["out"].membership_id]))
    assert r.status_code == 204 and Hire.objects.get(pk=study["out"].pk).worker_id == ""
    # the id is free again: a new join with it makes a new, empty account
    assert Hire.objects.filter(worker_id="w-done").count() == 0
