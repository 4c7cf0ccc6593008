"""The queries an annotator's next, draft and submit cost, pinned (pages and API): the
load benchmark's paced p95 depends on them, so a change that adds one fails here and
has to say why. Counts are for a comparison item on a test database (an atomic block
inside the test's transaction is a SAVEPOINT and its RELEASE: two of the counted)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation import hiring
from annotation.hiring import Invite
from annotation.models import Answer, Assignment, Item

from ..conftest import login
from .test_hiring import invite

__all__ = ["invite"]  # the fixture

JUSTIFICATION = "List 1 covers every fact of the text."
FULL = {"choice": "1", "hard": "no", "justification": JUSTIFICATION}


# The hired worker's path (issue 41's launch), per request; before the launch's query cuts
# (28 Nov 2026): link 10, join 57, next 8 and 9, item page 16, submit 37 (training) and 30.
HIRE_PATH = {
    "link": 9,
    "join": 53,
    "instructions": 5,
    "training next": 4,
    "training page": 10,
    "training submit": 24,
    "real next": 5,
    "real page": 10,
    "real submit": 20,
}


def counted(call: Any) -> tuple[Any, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = call()
    return response, [q["sql"] for q in queries.captured_queries]


def pinned(sql: list[str], n: int) -> None:
    assert len(sql) == n, f"{len(sql)} queries, pinned at {n}:\n" + "\n".join(sql)


def test_the_pages_next_draft_and_submit_cost_a_fixed_number_of_queries(
    client: Client, users: dict[str, Any], alpha_items: list[Item]
) -> None:
    login(client, users["bob"])
    project = alpha_items[0].project_id
    # next: session, user, membership with its hire, the first open assignment
    r, sql = counted(lambda: client.get(f"/p/{project}/next/"))
    assert r.status_code == 302
    pinned(sql, 4)
    url = r["Location"]
    # the item: session, user, assignment with item, document and claim lists,
    # membership, stored answers, the queue (neighbours and progress), the two claim
    # lists' claims (one query), started_at (first opening only) and the project's data
    # version it bumps (the report cache's key, models.bump_data_version), the page instance
    r, sql = counted(lambda: client.get(url))
    assert r.status_code == 200
    pinned(sql, 10)
    r, sql = counted(lambda: client.get(url))
    pinned(sql, 8)
    # draft: session, user, assignment, membership; the store (savepoint, lock, stored
    # answers, one insert, the assignment, the data version, release)
    hx = {"HX-Request": "true"}
    r, sql = counted(lambda: client.post(url, {"action": "draft", "choice": "1"}, headers=hx))
    assert r.status_code == 200
    pinned(sql, 11)
    # submit: the same, one insert of the two new fields and the project's adaptive
    # overlap (operations.widen_overlap); whether it is a training item comes with the
    # assignment (hiring.is_training)
    r, sql = counted(lambda: client.post(url, {"action": "submit", **FULL}, headers=hx))
    assert "HX-Redirect" in r, r.content.decode()[:500]
    # + the submission's webhook events in its transaction (operations._submit: a savepoint
    # around Assignment.submit's own, and the project's active hooks read once)
    pinned(sql, 15)


def test_the_api_next_draft_and_submit_cost_a_fixed_number_of_queries(
    users: dict[str, Any], alpha_items: list[Item]
) -> None:
    api = Client(headers={"Authorization": f"Token {Token.objects.create(user=users['carol'])}"})
    project = alpha_items[0].project_id

    def post(path: str, values: dict[str, str]) -> Any:
        rows = [{"unit": "item", "field": f, "value": v} for f, v in values.items()]
        return api.post(path, {"answers": rows}, content_type="application/json")

    # next: the queue's first pending entry (token with user, count, page) ...
    r, sql = counted(
        lambda: api.get("/api/assignments/", {"project": project, "status": "pending"})
    )
    pinned(sql, 3)
    pk = r.json()["results"][0]["id"]
    # ... and the item: token, assignment, membership, activity and the data version it
    # bumps, answers, the claims of both lists (one query)
    r, sql = counted(lambda: api.get(f"/api/assignments/{pk}/"))
    assert r.status_code == 200
    pinned(sql, 7)
    # draft: token; the write limit in the shared cache (read, count, savepoint, read,
    # write, release); assignment, membership; the store (7 with the data version);
    # answers and the claims of both lists (one query)
    r, sql = counted(lambda: post(f"/api/assignments/{pk}/draft/", {"choice": "2"}))
    assert r.status_code == 200, r.content
    pinned(sql, 18)
    # submit: the same with one update (the choice changed) besides the insert (the
    # hiring rules read the hire fetched with the membership)
    r, sql = counted(lambda: post(f"/api/assignments/{pk}/submit/", FULL))
    assert r.status_code == 200, r.content
    # + the adaptive overlap lookup and the data version; + the webhook events' savepoint
    # and hooks lookup (as on the page); the claims in one query
    pinned(sql, 23)


@pytest.mark.parametrize("via", ["draft", "submit"])
def test_storing_updates_changed_answers_adds_new_ones_and_removes_cleared_ones(
    users: dict[str, Any], alpha_items: list[Item], via: str
) -> None:
    assignment = Assignment.objects.filter(annotator=users["bob"]).first()
    assert assignment is not None
    key = {f: ("item", f) for f in ("choice", "hard", "justification")}
    assert assignment.save_draft({key["choice"]: "1", key["hard"]: "yes"}, guideline_version=1)
    before = {a.field: a for a in assignment.answers.all()}
    values = {key["choice"]: "1", key["justification"]: JUSTIFICATION}  # hard cleared
    if via == "draft":
        assert assignment.save_draft(values, guideline_version=1)
    else:
        assert assignment.submit(values, guideline_version=1)
    after = {a.field: a for a in Answer.objects.filter(assignment=assignment)}
    assert {f: a.value for f, a in after.items()} == {"choice": "1", "justification": JUSTIFICATION}
    assert after["choice"].pk == before["choice"].pk  # kept, not deleted and re-inserted
    assert after["choice"].updated_at == before["choice"].updated_at  # unchanged value
    assert assignment.answers_dict() == values
    assignment.refresh_from_db()
    assert assignment.status == (Assignment.DRAFT if via == "draft" else Assignment.SUBMITTED)
    # a changed value is updated in place, with its time
    values[key["choice"]] = "2"
    assert assignment.save_draft(values, guideline_version=1) == (via == "draft")
    changed = Answer.objects.get(assignment=assignment, field="choice")
    if via == "draft":
        assert (changed.pk, changed.value) == (before["choice"].pk, "2")
        assert changed.updated_at > before["choice"].updated_at
    else:  # a submitted assignment is not turned back into a draft
        assert changed.value == "1"


def test_a_hired_workers_join_next_page_and_submit_cost_a_fixed_number_of_queries(
    invite: Invite,
) -> None:
    """Issue 41: the launch's path for a stranger (the invite link, Start, the
    instructions, a training item, then a real one), every hiring rule on it included."""
    client = Client()
    url = reverse("join", args=[invite.key])
    params = {"PROLIFIC_PID": "w-launch-1", "STUDY_ID": "s1"}
    counts: dict[str, int] = {}

    def count(name: str, status: int, method: Any, *args: Any, **kwargs: Any) -> Any:
        r, sql = counted(lambda: method(*args, **kwargs))
        assert r.status_code == status, (name, r.status_code)
        counts[name] = len(sql)
        return r

    count("link", 200, client.get, url, params)
    count("join", 200, client.post, url, params)
    project = invite.project_id
    hx = {"HX-Request": "true"}
    count("instructions", 302, client.post, f"/p/{project}/instructions/", headers=hx)
    for step in ("training", "real"):
        page = count(f"{step} next", 302, client.get, f"/p/{project}/next/")["Location"]
        count(f"{step} page", 200, client.get, page)
        mine = Assignment.objects.get(pk=page.strip("/").split("/")[-1])
        choice = hiring.presented(mine, "choice", "a")  # the training's reference: passed
        data = {"action": "submit", "choice": choice, "hard": "no", "justification": JUSTIFICATION}
        r = count(f"{step} submit", 200, client.post, page, data, headers=hx)
        assert "HX-Redirect" in r
    assert counts == HIRE_PATH, repr(counts)
