"""Every endpoint x every role: anonymous, an annotator of the project, an annotator of
another project, a researcher of the project, a researcher of another project. Objects
someone may not see answer 404 (as the pages do), anonymous requests 401."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from annotation.models import Assignment, Item, Project, System
from annotation.tasks import run_config, start_run
from tests.conftest import SYSTEM_A, SYSTEM_B, canonical_line

from .api_helpers import submit_body, token_client

CAROL_SECRET = "Carol thinks the second list is far more complete than the first one."
ROLES = ["anonymous", "bob", "dave", "alice", "erin"]  # bob/alice: alpha; dave/erin: beta


def researcher_endpoints(project: Project) -> list[tuple[str, str, Any]]:
    p = project.pk
    a = System.objects.get(project=project, name=SYSTEM_A).pk
    b = System.objects.get(project=project, name=SYSTEM_B).pk
    return [
        ("get", f"/api/projects/{p}/members/", None),
        ("post", f"/api/projects/{p}/members/", {"username": "frank", "password": "pw-frank-long"}),
        ("get", f"/api/projects/{p}/documents/", None),
        ("post", f"/api/projects/{p}/documents/import/", {"content": canonical_line(99)}),
        ("get", f"/api/projects/{p}/systems/", None),
        ("get", f"/api/projects/{p}/items/", None),
        ("post", f"/api/projects/{p}/items/comparison/", {"system_a": a, "system_b": b, "k": 1}),
        ("post", f"/api/projects/{p}/items/atomic/", {"system": a, "k": 1}),
        ("get", f"/api/projects/{p}/answers/", None),
        ("get", f"/api/projects/{p}/gold/", None),
        ("get", f"/api/projects/{p}/report/?bootstrap=20", None),
        (
            "get",
            f"/api/projects/{p}/plan/?kappa=0.5&shares=0.5,0.5&target=0.4&studies=20&bootstrap=20",
            None,
        ),
        ("get", f"/api/projects/{p}/pipeline-runs/", None),
        ("post", f"/api/projects/{p}/pipeline-runs/", {"model": "gpt-4o-mini", "offline": True}),
        ("get", f"/api/projects/{p}/pipeline-runs/{project.pipeline_runs.get().pk}/", None),
        ("get", f"/api/projects/{p}/invites/", None),
        ("post", f"/api/projects/{p}/invites/", {"note": "pilot"}),
        ("get", f"/api/projects/{p}/hiring-policy/", None),
        ("get", f"/api/projects/{p}/quality-items/", None),
        (
            "post",
            f"/api/projects/{p}/quality-items/",
            {
                "item": project.items.first().pk,
                "role": "training",
                "reference": {"item.hard": "no"},
            },
        ),
        ("get", f"/api/projects/{p}/quality/", None),
        ("get", f"/api/projects/{p}/release/", None),
        ("post", f"/api/projects/{p}/release/", {"bootstrap": 0}),
        (
            "post",
            f"/api/projects/{p}/quality/{project.memberships.get(number=3).pk}/",
            {"action": "pause"},
        ),
        *[
            ("get", f"/api/projects/{p}/exports/{name}", None)
            for name in [
                "answers.csv",
                "wide.csv",
                "veriscore.jsonl?system=" + SYSTEM_A,
                "felm.jsonl?source=gold",
                "factscore.jsonl?source=gold&system=" + SYSTEM_A,
            ]
        ],
    ]


def annotator_endpoints(project: Project, assignment: Assignment) -> list[tuple[str, str, Any]]:
    a = assignment.pk
    return [
        ("post", f"/api/projects/{project.pk}/instructions/acknowledge/", None),
        ("get", f"/api/assignments/{a}/", None),
        ("post", f"/api/assignments/{a}/draft/", submit_body()),
        ("post", f"/api/assignments/{a}/submit/", submit_body()),
        ("post", f"/api/assignments/{a}/skip/", {"reason": "unreadable"}),
    ]


def call(client: Any, method: str, url: str, body: Any) -> Any:
    return (
        getattr(client, method)(url, body, format="json") if method == "post" else client.get(url)
    )


@pytest.fixture
def world(
    alpha: Project, beta: Project, alpha_items: list[Item], users: dict[str, User]
) -> dict[str, Any]:
    for a in Assignment.objects.filter(annotator=users["carol"]):
        a.submit(
            {
                ("item", "choice"): "2",
                ("item", "hard"): "no",
                ("item", "justification"): CAROL_SECRET,
            },
            guideline_version=1,
        )
    bobs = Assignment.objects.filter(annotator=users["bob"]).first()
    assert bobs is not None
    start_run(project=alpha, user=users["alice"], config=run_config(model="m", offline=True))
    return {"alpha": alpha, "bobs": bobs}


def expected_researcher(role: str) -> set[int]:
    return {"anonymous": {401}, "alice": {200, 201, 202}}.get(role, {404})  # 202: enqueued


def expected_annotator(role: str) -> set[int]:
    return {"anonymous": {401}, "bob": {200}}.get(role, {404})


@pytest.mark.parametrize("role", ROLES)
def test_researcher_endpoints_are_for_the_projects_researchers(
    world: dict[str, Any], users: dict[str, User], role: str
) -> None:
    client = token_client(users.get(role))
    for method, url, body in researcher_endpoints(world["alpha"]):
        response = call(client, method, url, body)
        assert response.status_code in expected_researcher(role), (
            role,
            method,
            url,
            response.content[:300],
        )


@pytest.mark.parametrize("role", ROLES)
def test_annotator_endpoints_are_for_the_assignments_annotator(
    world: dict[str, Any], users: dict[str, User], role: str
) -> None:
    client = token_client(users.get(role))
    for method, url, body in annotator_endpoints(world["alpha"], world["bobs"]):
        response = call(client, method, url, body)
        if role == "bob" and url.endswith("/skip/"):
            assert response.status_code == 409  # submitted just before: cannot skip
            continue
        assert response.status_code in expected_annotator(role), (
            role,
            method,
            url,
            response.content[:300],
        )


@pytest.mark.parametrize("role", ROLES)
def test_lists_only_show_what_the_user_may_see(
    world: dict[str, Any], users: dict[str, User], role: str
) -> None:
    client = token_client(users.get(role))
    projects = client.get("/api/projects/")
    queue = client.get("/api/assignments/")
    if role == "anonymous":
        assert projects.status_code == queue.status_code == 401
        assert projects.json()["code"] == "not_authenticated"
        return
    names = {p["name"] for p in projects.json()["results"]}
    assert names == ({"alpha"} if role in ("alice", "bob") else {"beta"})
    mine = {a["id"] for a in queue.json()["results"]}
    assert mine == set(
        Assignment.objects.filter(annotator=users[role]).values_list("id", flat=True)
    )


def test_an_annotator_never_sees_system_names_or_other_peoples_answers(
    world: dict[str, Any], users: dict[str, User]
) -> None:
    client = token_client(users["bob"])
    alpha = world["alpha"]
    bodies = [
        client.get("/api/projects/").content,
        client.get("/api/assignments/").content,
        client.post(f"/api/projects/{alpha.pk}/instructions/acknowledge/").content,
    ]
    for a in Assignment.objects.filter(annotator=users["bob"]):
        bodies.append(client.get(f"/api/assignments/{a.pk}/").content)
        bodies.append(
            client.post(f"/api/assignments/{a.pk}/draft/", submit_body(), format="json").content
        )
        bodies.append(
            client.post(f"/api/assignments/{a.pk}/submit/", submit_body(), format="json").content
        )
        bodies.append(client.get(f"/api/assignments/{a.pk}/").content)
    for method, url, body in researcher_endpoints(alpha):
        bodies.append(call(client, method, url, body).content)
    for body in bodies:
        text = body.decode()
        for secret in (SYSTEM_A, SYSTEM_B, CAROL_SECRET, "carol", "list_a", "verdict"):
            assert secret not in text, secret


def test_session_writes_need_csrf_and_tokens_do_not(
    client: Any, world: dict[str, Any], users: dict[str, User]
) -> None:
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(users["alice"])
    response = browser.post(
        "/api/projects/", json.dumps({"name": "x"}), content_type="application/json"
    )
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert browser.get("/api/projects/").status_code == 200
    assert (
        token_client(users["alice"])
        .post("/api/projects/", {"name": "x"}, format="json")
        .status_code
        == 201
    )
