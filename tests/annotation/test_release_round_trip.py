"""A release imports back into a new project (the `release` import format) with the same
items, answers under the release's pseudonyms and gold; a release of that project holds
the same tables as the first, file for file."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from annotation import operations
from annotation.models import Answer, Assignment, Membership, Project
from annotation.release import ReleaseOptions, build_release
from annotation.release.load import import_release
from pipeline.dataformats.common import ImportFailed

from .api_helpers import token_client
from .release_helpers import answer_everything, verification_study

TABLE_FILES = [
    f"{folder}/{name}.{ext}"
    for name in ("items", "annotations", "gold", "metric_outputs", "agreement")
    for folder, ext in (("jsonl", "jsonl"), ("data", "parquet"))
]


def _adjudicate_a_tie(project: Project, researcher: User) -> None:
    """One unit of the release gets an adjudicated value (a gold row decided_by
    adjudicated), so the round trip carries adjudications."""
    assignment = Assignment.objects.filter(
        item__project=project, item__kind="verification", status=Assignment.SUBMITTED
    ).first()
    assert assignment is not None
    operations.adjudicate(
        item=assignment.item,
        unit="item",
        field="label",
        value="supported",
        note="seen",
        by=researcher,
    )


def test_a_release_imports_back_and_releases_the_same(demo: Project, tmp_path: Path) -> None:
    answer_everything(demo, limit=150)
    researcher = demo.memberships.get(role=Membership.RESEARCHER).user
    _adjudicate_a_tie(demo, researcher)
    options = ReleaseOptions(bootstrap=100)
    first = build_release(demo, tmp_path / "first", options, make_zip=True)
    assert first.zip is not None
    copy = Project.create_with_owner(Project(name=demo.name, description=demo.description),
                                     researcher)  # fmt: skip
    summary = import_release(copy, first.zip, user=researcher)
    assert summary.items == first.rows["items"]
    assert summary.adjudications == 1
    again = build_release(copy, tmp_path / "again", options)
    assert again.rows == first.rows
    for name in TABLE_FILES:
        assert (tmp_path / "again" / name).read_bytes() == (
            tmp_path / "first" / name
        ).read_bytes(), name
    placeholders = copy.memberships.filter(role=Membership.ANNOTATOR)
    assert sorted(m.pseudonym for m in placeholders) == sorted(
        {json.loads(line)["annotator"] for line in
         (tmp_path / "first/jsonl/annotations.jsonl").read_text().splitlines()}
    )  # fmt: skip
    assert not any(m.user.is_active or m.user.has_usable_password() for m in placeholders)


def _small_release(tmp_path: Path, users: dict[str, User], alpha: Project) -> Path:
    verification_study(alpha, [users["bob"], users["carol"]], n=3)
    answer_everything(alpha)
    return build_release(
        alpha, tmp_path / "small", ReleaseOptions(bootstrap=0), make_zip=True
    ).folder


def test_the_release_format_imports_through_the_command_page_and_api(
    users: dict[str, User], alpha: Project, tmp_path: Path
) -> None:
    folder = _small_release(tmp_path, users, alpha)
    alice = users["alice"]
    by_command = Project.create_with_owner(Project(name="by command"), alice)
    out = io.StringIO()
    call_command("import_data", str(by_command.pk), str(folder), "--format", "release", stdout=out)
    assert f"{alpha.items.count()} items" in out.getvalue()
    assert by_command.items.count() == alpha.items.count()
    with pytest.raises(CommandError, match="new project"):  # documents there already
        call_command("import_data", str(by_command.pk), str(folder), "--format", "release")
    by_api = Project.create_with_owner(Project(name="by api"), alice)
    with open(folder.with_suffix(".zip"), "rb") as f:
        response = token_client(alice).post(
            f"/api/projects/{by_api.pk}/documents/import/",
            {"file": f, "format": "release"},
            format="multipart",
        )
    assert response.status_code == 201, response.content[:300]
    assert "placeholders" in response.json()["summary"]
    assert by_api.items.count() == alpha.items.count()
    client = Client()
    client.force_login(alice)
    by_page = Project.create_with_owner(Project(name="by page"), alice)
    with open(folder.with_suffix(".zip"), "rb") as f:
        page = client.post(f"/p/{by_page.pk}/import/", {"file": f, "format": "release"})
    assert page.status_code == 302, page.content[:500]
    assert Answer.objects.filter(assignment__item__project=by_page).count() == (
        Answer.objects.filter(assignment__item__project=alpha, assignment__status="submitted")
        .exclude(assignment__item__quality__role="example")
        .count()
    )


def test_a_broken_release_is_refused_naming_file_and_line(
    users: dict[str, User], alpha: Project, tmp_path: Path
) -> None:
    folder = _small_release(tmp_path, users, alpha)
    annotations = folder / "jsonl" / "annotations.jsonl"
    lines = annotations.read_text().splitlines()
    row = json.loads(lines[1])
    del row["annotator"]
    lines[1] = json.dumps(row)
    annotations.write_text("\n".join(lines) + "\n")
    target = Project.create_with_owner(Project(name="target"), users["alice"])
    with pytest.raises(ImportFailed) as e:
        import_release(target, folder)
    (error,) = e.value.errors
    assert error.line == 2 and error.field == "annotator" and "annotations.jsonl" in error.file
    assert not target.documents.exists() and not target.items.exists()
    with pytest.raises(ImportFailed, match="not a release zip"):
        bad = tmp_path / "bad.zip"
        bad.write_text("no zip")
        import_release(target, bad)
