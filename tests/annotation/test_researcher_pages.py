from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Document, Item, Membership, Project, System
from tests.conftest import SYSTEM_A, SYSTEM_B, canonical_line


@pytest.fixture
def alice(client: Client, users: dict[str, User]) -> Client:
    client.force_login(users["alice"])
    return client


def test_a_researcher_creates_a_project_and_becomes_its_researcher(
    alice: Client, users: dict[str, User]
) -> None:
    response = alice.post(reverse("project_new"), {"name": "gamma", "instructions": "Do it."})
    project = Project.objects.get(name="gamma")
    assert response["Location"] == reverse("project", args=[project.pk])
    assert project.role_of(users["alice"]) == Membership.RESEARCHER


def test_members_are_added_and_new_accounts_created(
    alice: Client, alpha: Project, users: dict[str, User]
) -> None:
    url = reverse("project_members", args=[alpha.pk])
    response = alice.post(url, {"username": "dave", "role": "annotator"}, follow=True)
    assert alpha.role_of(users["dave"]) == Membership.ANNOTATOR
    assert "Added dave as an annotator." in response.content.decode()
    response = alice.post(
        url, {"username": "newbie", "role": "annotator", "password": "s3cret-pass"}, follow=True
    )
    assert "Created the account newbie as an annotator." in response.content.decode()
    newbie = User.objects.get(username="newbie")
    assert newbie.check_password("s3cret-pass") and alpha.role_of(newbie) == Membership.ANNOTATOR
    response = alice.post(url, {"username": "ghost", "role": "annotator"}, follow=True)
    assert "No user &#x27;ghost&#x27;" in response.content.decode()


def test_changing_the_instructions_makes_a_new_version(alice: Client, alpha: Project) -> None:
    alice.post(
        reverse("project_instructions", args=[alpha.pk]), {"instructions": "Read carefully."}
    )
    alpha.refresh_from_db()
    assert alpha.instructions_version == 1
    alice.post(reverse("project_instructions", args=[alpha.pk]), {"instructions": "New."})
    alpha.refresh_from_db()
    assert alpha.instructions_version == 2


def test_the_upload_form_imports_a_file(alice: Client, alpha: Project) -> None:
    upload = SimpleUploadedFile("more.jsonl", canonical_line(10).encode())
    response = alice.post(
        reverse("project_import", args=[alpha.pk]), {"file": upload, "format": "auto"}, follow=True
    )
    assert "Imported more.jsonl" in response.content.decode()
    assert Document.objects.filter(project=alpha, external_id="doc-10").exists()


def test_the_upload_form_lists_errors_and_imports_nothing(alice: Client, alpha: Project) -> None:
    before = Document.objects.count()
    upload = SimpleUploadedFile("bad.jsonl", (canonical_line(11) + "\n{broken\n").encode())
    response = alice.post(
        reverse("project_import", args=[alpha.pk]), {"file": upload, "format": "auto"}
    )
    body = response.content.decode()
    assert "Nothing was imported" in body and "bad.jsonl, line 2: not valid JSON" in body
    assert Document.objects.count() == before


def test_comparison_items_are_created_and_assigned(alice: Client, alpha: Project) -> None:
    a = System.objects.get(project=alpha, name=SYSTEM_A)
    b = System.objects.get(project=alpha, name=SYSTEM_B)
    response = alice.post(
        reverse("project_items", args=[alpha.pk, "comparison"]),
        {"system_a": a.pk, "system_b": b.pk, "k": 2, "fraction": 0.5, "seed": 3},
        follow=True,
    )
    assert "Created 4 comparison item(s) and 6 assignment(s)." in response.content.decode()
    assert Item.objects.filter(project=alpha).count() == 4
    # again: nothing new
    alice.post(
        reverse("project_items", args=[alpha.pk, "comparison"]),
        {"system_a": a.pk, "system_b": b.pk, "k": 2, "fraction": 0.5, "seed": 3},
    )
    assert Item.objects.filter(project=alpha).count() == 4
    assert Assignment.objects.in_project(alpha).count() == 6


def test_the_same_system_twice_is_refused(alice: Client, alpha: Project) -> None:
    a = System.objects.get(project=alpha, name=SYSTEM_A)
    response = alice.post(
        reverse("project_items", args=[alpha.pk, "comparison"]),
        {"system_a": a.pk, "system_b": a.pk, "k": 1, "fraction": 0, "seed": 0},
        follow=True,
    )
    assert "Pick two different systems." in response.content.decode()
    assert not Item.objects.exists()


def test_the_dashboard_shows_progress(
    alice: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    a = Assignment.objects.filter(annotator=users["bob"]).first()
    assert a is not None
    a.submit({("item", "choice"): "1"}, guideline_version=1)
    body = alice.get(reverse("project", args=[alpha.pk])).content.decode()
    assert "A1 (bob)" in body and "25%" in body


def test_the_long_export_has_one_row_per_answer(
    alice: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    a = Assignment.objects.filter(annotator=users["bob"]).first()
    assert a is not None
    a.submit(
        {
            ("item", "choice"): "1",
            ("item", "hard"): "no",
            ("item", "justification"): "Because, yes, it is.",
        },
        guideline_version=1,
    )
    rows = list(
        csv.DictReader(
            io.StringIO(
                alice.get(reverse("project_export", args=[alpha.pk, "csv"])).content.decode()
            )
        )
    )
    assert len(rows) == 3
    row = next(r for r in rows if r["field"] == "choice")
    list1, list2 = a.presented_lists()
    assert row["value"] == "1" and row["annotator"] == "A1" and row["unit"] == "item"
    assert (row["list1_system"], row["list2_system"]) == (list1.system.name, list2.system.name)
    assert row["document"] == a.item.document.external_id and row["submitted_at"]
    data = json.loads(alice.get(reverse("project_export", args=[alpha.pk, "json"])).content)
    assert {(r["field"], r["value"]) for r in data} == {(r["field"], r["value"]) for r in rows}
    named = json.loads(
        alice.get(reverse("project_export", args=[alpha.pk, "json"]) + "?names=1").content
    )
    assert {r["annotator"] for r in named} == {"bob"}
    assert alice.get(reverse("project_export", args=[alpha.pk, "xml"])).status_code == 404
