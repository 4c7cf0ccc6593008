"""A release imports back into a new project (the `release` import format) with the same
items, answers under the release's pseudonyms and gold; a release of that project holds
the same tables as the first, file for file."""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth.models import User

from annotation import operations
from annotation.models import Assignment, Membership, Project
from annotation.release import ReleaseOptions, build_release
from annotation.release.load import import_release

from .release_helpers import answer_everything

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
