"""What the endpoints do, through the same forms and model methods as the pages."""

from __future__ import annotations

import json

from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.models import Answer, Assignment, Document, Item, Membership, Project, System
from tests.conftest import SYSTEM_A, SYSTEM_B, canonical_line

from .api_helpers import submit_body, token_client


def test_a_researcher_creates_a_project_and_adds_members(users: dict[str, User]) -> None:
    client = token_client(users["erin"])
    created = client.post(
        "/api/projects/", {"name": "gamma", "instructions": "Be careful."}, format="json"
    )
    assert created.status_code == 201
    project = Project.objects.get(pk=created.json()["id"])
    assert created.json()["role"] == "researcher"
    assert project.created_by == users["erin"]
    added = client.post(f"/api/projects/{project.pk}/members/", {"username": "dave"}, format="json")
    assert added.json() == {
        "username": "dave",
        "role": "annotator",
        "pseudonym": "A1",
        "acknowledged_version": 0,
    }
    missing = client.post(
        f"/api/projects/{project.pk}/members/", {"username": "nobody"}, format="json"
    )
    assert missing.status_code == 400
    assert missing.json()["code"] == "unknown_user" and missing.json()["field"] == "username"
    listed = client.get(f"/api/projects/{project.pk}/members/").json()
    assert listed["count"] == 2 and [m["pseudonym"] for m in listed["results"]] == ["R1", "A1"]


def test_import_reports_every_bad_line_and_imports_nothing(
    alpha: Project, users: dict[str, User]
) -> None:
    client = token_client(users["alice"])
    before = Document.objects.count()
    text = "\n".join([canonical_line(10), "{not json", json.dumps({"id": "x"})])
    response = client.post(
        f"/api/projects/{alpha.pk}/documents/import/",
        {"content": text, "filename": "bad.jsonl"},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "import_failed"
    assert [(e["line"], e.get("field")) for e in body["errors"]] == [(2, None), (3, "response")]
    assert body["errors"][0]["file"] == "bad.jsonl"
    assert Document.objects.count() == before


def test_import_accepts_a_multipart_file(alpha: Project, users: dict[str, User], tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "more.jsonl"
    path.write_text(canonical_line(20) + "\n" + canonical_line(21))
    client = token_client(users["alice"])
    with path.open("rb") as f:
        response = client.post(
            f"/api/projects/{alpha.pk}/documents/import/",
            {"file": f, "format": "canonical"},
            format="multipart",
        )
    assert response.status_code == 201, response.content
    assert response.json()["documents_created"] == 2
    assert response.json()["claims_created"] == 6


def test_comparison_items_follow_the_assignment_policy(
    alpha: Project, users: dict[str, User]
) -> None:
    client = token_client(users["alice"])
    a = System.objects.get(project=alpha, name=SYSTEM_A)
    b = System.objects.get(project=alpha, name=SYSTEM_B)
    same = client.post(
        f"/api/projects/{alpha.pk}/items/comparison/",
        {"system_a": a.pk, "system_b": a.pk},
        format="json",
    )
    assert same.status_code == 400 and same.json()["message"] == "Pick two different systems."
    created = client.post(
        f"/api/projects/{alpha.pk}/items/comparison/",
        {"system_a": a.pk, "system_b": b.pk, "k": 2, "fraction": 0.5, "seed": 3},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["items_created"] == 4
    assert created.json()["assignments_created"] == 6  # 2 items x 2 annotators + 2 x 1
    items = client.get(f"/api/projects/{alpha.pk}/items/?kind=comparison&status=open").json()
    assert items["count"] == 4
    assert {i["system_a"] for i in items["results"]} == {SYSTEM_A}
    assert client.get(f"/api/projects/{alpha.pk}/items/?status=done").json()["count"] == 0
    bad = client.get(f"/api/projects/{alpha.pk}/items/?status=bogus")
    assert bad.status_code == 400 and bad.json()["field"] == "status"


def test_an_annotator_works_through_the_queue(
    alpha_items: list[Item], users: dict[str, User]
) -> None:
    bob = users["bob"]
    client = token_client(bob)
    queue = client.get("/api/assignments/?status=pending").json()
    assert queue["count"] == 4
    first = queue["results"][0]["id"]
    detail = client.get(f"/api/assignments/{first}/").json()
    assignment = Assignment.objects.get(pk=first)
    list1, list2 = assignment.presented_lists()
    assert detail["list1"] == [c.text for c in list1.claims.all()]
    assert detail["list2"] == [c.text for c in list2.claims.all()]

    draft = client.post(
        f"/api/assignments/{first}/draft/",
        {
            "answers": [
                {"unit": "item", "field": "choice", "value": "7"},  # not a valid choice: dropped
                {"unit": "item", "field": "justification", "value": "Half typed"},
            ]
        },
        format="json",
    )
    assert draft.status_code == 200
    assert draft.json()["status"] == "draft"
    assert draft.json()["answers"] == [
        {"unit": "item", "field": "justification", "value": "Half typed"}
    ]

    short = client.post(
        f"/api/assignments/{first}/submit/", submit_body(justification="ok"), format="json"
    )
    assert short.status_code == 400
    assert short.json()["field"] == "item.justification"
    assert short.json()["message"] == "Please justify your choice in at least one sentence."

    done = client.post(f"/api/assignments/{first}/submit/", submit_body(), format="json")
    assert done.status_code == 200 and done.json()["status"] == "submitted"
    assert Assignment.objects.get(pk=first).answers_dict()[("item", "choice")] == "1"
    again = client.post(f"/api/assignments/{first}/submit/", submit_body("2"), format="json")
    assert again.status_code == 409 and again.json()["code"] == "already_submitted"
    edited = client.post(
        f"/api/assignments/{first}/submit/", {**submit_body("2"), "edit": True}, format="json"
    )
    assert edited.status_code == 200
    assert Assignment.objects.get(pk=first).answers_dict()[("item", "choice")] == "2"
    skipped = client.post(
        f"/api/assignments/{queue['results'][1]['id']}/skip/", {"reason": "Too long"}, format="json"
    )
    assert skipped.json()["status"] == "skipped"


def test_new_instructions_must_be_acknowledged_first(
    alpha_items: list[Item], alpha: Project, users: dict[str, User]
) -> None:
    alpha.set_instructions("New rules.")
    client = token_client(users["bob"])
    first = Assignment.objects.filter(annotator=users["bob"]).first()
    assert first is not None
    blocked = client.post(f"/api/assignments/{first.pk}/submit/", submit_body(), format="json")
    assert blocked.status_code == 409 and blocked.json()["code"] == "instructions_not_acknowledged"
    ack = client.post(f"/api/projects/{alpha.pk}/instructions/acknowledge/")
    assert ack.json() == {"instructions_version": 2, "acknowledged_version": 2}
    assert (
        client.post(
            f"/api/assignments/{first.pk}/submit/", submit_body(), format="json"
        ).status_code
        == 200
    )
    assert Assignment.objects.get(pk=first.pk).guideline_version == 2


def test_answers_and_gold_are_filtered_and_paginated(
    alpha_items: list[Item], alpha: Project, users: dict[str, User]
) -> None:
    for name, choice in (("bob", "1"), ("carol", "1")):
        for a in Assignment.objects.filter(annotator=users[name]):
            list1, _ = a.presented_lists()
            # both pick the same storage side, whatever the presented order
            side = choice if list1.system.name == SYSTEM_A else "2"
            a.submit(
                {
                    ("item", "choice"): side,
                    ("item", "hard"): "no",
                    ("item", "justification"): "Because it is complete.",
                },
                guideline_version=1,
            )
    client = token_client(users["alice"])
    page = client.get(f"/api/projects/{alpha.pk}/answers/?field=choice&page_size=3").json()
    assert page["count"] == 8 and len(page["results"]) == 3 and page["next"]
    # the long format's gold and item role too (no training or check item here)
    assert {(r["gold"], r["gold_provenance"], r["item_role"]) for r in page["results"]} == {
        (SYSTEM_A, "unanimous", "")
    }
    bob = alpha.memberships.get(user=users["bob"]).pseudonym
    mine = client.get(f"/api/projects/{alpha.pk}/answers/?annotator={bob}").json()
    assert mine["count"] == 12 and {r["annotator"] for r in mine["results"]} == {bob}
    assert client.get(f"/api/projects/{alpha.pk}/answers/?since=2999-01-01").json()["count"] == 0
    assert client.get(f"/api/projects/{alpha.pk}/answers/?until=2999-01-01").json()["count"] == 24
    bad = client.get(f"/api/projects/{alpha.pk}/answers/?since=yesterday")
    assert bad.status_code == 400 and bad.json()["field"] == "since"
    golds = client.get(f"/api/projects/{alpha.pk}/gold/?field=choice").json()
    assert golds["count"] == 4
    assert {(g["value"], g["provenance"]) for g in golds["results"]} == {("a", "unanimous")}
    csv_text = client.get(f"/api/projects/{alpha.pk}/exports/answers.csv").content.decode()
    assert csv_text.startswith("item,kind,document") and csv_text.count("\n") == 25
    wide = client.get(f"/api/projects/{alpha.pk}/exports/wide.csv")
    assert wide.status_code == 200 and wide["Content-Type"].startswith("text/csv")
    assert client.get(f"/api/projects/{alpha.pk}/exports/nope.csv").json()["code"] == "not_found"


def test_token_writes_are_throttled(alpha: Project, users: dict[str, User], settings) -> None:  # type: ignore[no-untyped-def]
    from django.core.cache import cache

    cache.clear()
    settings.API_WRITE_RATE = "2/hour"  # the window never rolls over mid-test, however slow
    client = token_client(users["erin"])
    codes = [
        client.post("/api/projects/", {"name": f"p{i}"}, format="json").status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]
    throttled = client.post("/api/projects/", {"name": "again"}, format="json").json()
    assert throttled["code"] == "throttled"
    assert client.get("/api/projects/").status_code == 200  # reads are not throttled
    cache.clear()


def test_users_create_and_revoke_their_token(client: Client, users: dict[str, User]) -> None:
    client.force_login(users["bob"])
    assert "You have no API token" in client.get("/settings/tokens/").content.decode()
    client.post("/settings/tokens/", {"action": "create"})
    key = Token.objects.get(user=users["bob"]).key
    assert key in client.get("/settings/tokens/").content.decode()
    api = Client(headers={"Authorization": f"Token {key}"})
    assert api.get("/api/projects/").status_code == 200
    client.post("/settings/tokens/", {"action": "create"})
    assert api.get("/api/projects/").status_code == 401  # replaced
    client.post("/settings/tokens/", {"action": "revoke"})
    assert not Token.objects.filter(user=users["bob"]).exists()


def test_the_docs_page_and_schema_are_served_offline(
    client: Client, users: dict[str, User]
) -> None:
    client.force_login(users["bob"])
    docs = client.get("/api/docs/").content.decode()
    assert "cdn" not in docs.lower() and "swagger-ui" in docs
    schema = client.get("/api/schema/", headers={"Accept": "application/vnd.oai.openapi+json"})
    assert schema.status_code == 200
    assert "/api/assignments/{assignment_id}/submit/" in schema.json()["paths"]


def test_errors_have_a_stable_shape(users: dict[str, User], alpha: Project) -> None:
    client = token_client(users["alice"])
    missing = client.post("/api/projects/", {}, format="json").json()
    assert missing == {
        "code": "required",
        "message": "This field is required.",
        "field": "name",
        "errors": [{"code": "required", "message": "This field is required.", "field": "name"}],
    }
    assert client.get("/api/assignments/999999/").json() == {
        "code": "not_found",
        "message": "Not found.",
    }
    assert token_client(None).get("/api/projects/").json()["code"] == "not_authenticated"
    assert Membership.objects.filter(user=users["alice"]).count() == 1
    assert not Answer.objects.exists()


def test_the_admin_manages_tokens(client: Client, users: dict[str, User]) -> None:
    admin = User.objects.create_superuser("root", password="pw-root")
    client.force_login(admin)
    assert client.get("/admin/authtoken/tokenproxy/").status_code == 200
    assert users
