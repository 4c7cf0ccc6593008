"""Issue 38, M2: 447 hires cost the payments table 2,238 queries and the quality table
3,601 (the hiring page took 7-26 s, once past gunicorn's timeout). The hiring page, the
payments export and the quality table now cost the same number of queries for 5 hires
as for 50 (aggregated in SQL), and the page shows 200 rows at a time."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import hiring
from annotation.hiring import Hire, Invite
from annotation.models import Assignment, Item, Project
from tests.annotation.api_helpers import token_client
from tests.annotation.conftest import submit


def _hires(project: Project, items: list[Item], n: int) -> None:
    """n hires: training on item 0, a check on item 1, real items; some answered."""
    invite = Invite.objects.filter(project=project).first() or Invite.objects.create(
        project=project, items_per_person=2, time_limit_minutes=60
    )
    for i in range(Hire.objects.count(), n):
        hire = hiring.join(invite, {"PROLIFIC_PID": f"w{i}"})
        user = hire.membership.user
        for a in Assignment.objects.filter(annotator=user).order_by("position")[: i % 3]:
            submit(a.item, user, {("comparison", "choice"): "1", ("comparison", "hard"): "no"})
            hiring.after_submit(hire.membership, Assignment.objects.get(pk=a.pk))
    # some past the time limit (their status is counted, not queried per person)
    Hire.objects.filter(pk__in=Hire.objects.order_by("pk").values("pk")[: n // 2]).update(
        joined_at=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=59)
    )


def _counts(project: Project, alice: User) -> dict[str, int]:
    client = Client()
    client.force_login(alice)
    api = token_client(alice)
    calls = {
        "page": lambda: client.get(reverse("hiring", args=[project.pk])),
        "payments csv": lambda: client.get(reverse("hiring_payments", args=[project.pk])),
        "payments": lambda: hiring.payments(project),
        "quality": lambda: hiring.quality_rows(project),
        "api quality": lambda: api.get(f"/api/projects/{project.pk}/quality/"),
        "api payments": lambda: api.get(f"/api/projects/{project.pk}/payments/"),
    }
    counts = {}
    for name, call in calls.items():
        with CaptureQueriesContext(connection) as queries:
            response = call()
        assert getattr(response, "status_code", 200) == 200, name
        counts[name] = len(queries)
    return counts


def test_the_hiring_tables_cost_the_same_queries_for_5_and_50_hires(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    hiring.mark(alpha_items[0], hiring.TRAINING, {"comparison.choice": "a"}, "why")
    hiring.mark(alpha_items[1], hiring.CHECK, {"comparison.choice": "a"})
    _hires(alpha, alpha_items, 5)
    few = _counts(alpha, users["alice"])
    _hires(alpha, alpha_items, 50)
    many = _counts(alpha, users["alice"])
    assert many == few, (few, many)
    rows = hiring.payments(alpha)
    assert len(rows) == 50 and {r["status"] for r in rows} >= {hiring.IN_PROGRESS}


def test_the_hiring_page_shows_200_rows_at_a_time(
    alpha: Project, users: dict[str, User], settings: Any
) -> None:
    from annotation.views import hiring as page

    page.HIRING_PAGE_ROWS = 3
    try:
        invite = Invite.objects.create(project=alpha)
        for i in range(7):
            hiring.join(invite, {"PROLIFIC_PID": f"w{i}"})
        client = Client()
        client.force_login(users["alice"])
        url = reverse("hiring", args=[alpha.pk])
        first = client.get(url).content.decode()
        assert "page 1 of 3" in first and 'id="page-next"' in first
        last = client.get(url + "?page=3").content.decode()
        assert "page 3 of 3" in last and 'id="page-next"' not in last
        assert client.get(url + "?page=abc").status_code == 200  # the first page
    finally:
        page.HIRING_PAGE_ROWS = 200
