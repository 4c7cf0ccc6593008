"""A release imports back into a new project (the `release` import format) with the same
items, answers under the release's pseudonyms and gold; a release of that project holds
the same tables as the first, file for file."""

from __future__ import annotations

import difflib
import io
import json
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from annotation import hiring, operations
from annotation.models import Adjudication, Answer, Assignment, Membership, Project
from annotation.release import ReleaseOptions, build_release
from annotation.release.load import import_release
from pipeline.dataformats.common import ImportFailed

from .api_helpers import token_client
from .release_helpers import answer_everything, hired_project, verification_study

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


# The only fields of a release that may differ between two releases of the same study:
# croissant.json's datePublished (the day it was built). No other file holds a date.
DATE_FIELDS = {"croissant.json": ("datePublished",)}


def _masked(folder: Path) -> dict[str, bytes]:
    """Every file of a release folder as bytes, the DATE_FIELDS blanked."""
    files = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = str(path.relative_to(folder))
        data = path.read_bytes()
        if name in DATE_FIELDS:
            meta = json.loads(data)
            for key in DATE_FIELDS[name]:
                assert meta.pop(key), (name, key)  # present, then masked
            data = json.dumps(meta, indent=1, ensure_ascii=False).encode()
        files[name] = data
    return files


def _diff(before: dict[str, bytes], after: dict[str, bytes], names: list[str]) -> str:
    out = []
    for name in names:
        a = before[name].decode("utf-8", "replace").splitlines()
        b = after[name].decode("utf-8", "replace").splitlines()
        out += [name, *difflib.unified_diff(a, b, lineterm="", n=1)][:40]
    return "\n".join(out)


def _round_trip(project: Project, tmp_path: Path, options: ReleaseOptions) -> Project:
    """Release `project`, import the zip into a new project, release that with its own
    defaults (the options the release states), and compare every file."""
    researcher = project.memberships.filter(role=Membership.RESEARCHER).first().user
    first = build_release(project, tmp_path / "first", options, make_zip=True)
    assert first.zip is not None
    copy = Project.create_with_owner(Project(name="another lab's copy"), researcher)
    summary = import_release(copy, first.zip, user=researcher)
    assert summary.items == first.rows["items"]
    assert not summary.warnings, summary
    again = build_release(copy, tmp_path / "again", None)  # the imported project's defaults
    assert again.rows == first.rows
    before, after = _masked(tmp_path / "first"), _masked(tmp_path / "again")
    assert sorted(after) == sorted(before)
    assert {"README.md", "croissant.json", "study.json"} <= set(before)
    differ = [name for name, data in before.items() if after[name] != data]
    assert not differ, _diff(before, after, differ)
    return copy


def test_a_release_imports_back_and_releases_the_same(demo: Project, tmp_path: Path) -> None:
    answer_everything(demo, limit=150)
    researcher = demo.memberships.get(role=Membership.RESEARCHER).user
    _adjudicate_a_tie(demo, researcher)
    options = ReleaseOptions(
        bootstrap=100,
        license="cc-by-sa-4.0",
        languages=("en", "de"),
        limitations="Edited by hand: few annotators, one week.",
        citation="@misc{demo, title={Demo}}",
        source_licences=("demo/LICENSE.factscore.MIT.txt",),
    )
    copy = _round_trip(demo, tmp_path, options)
    assert copy.items.count() == demo.items.count()
    assert copy.instructions == demo.instructions
    assert copy.instructions_version == demo.instructions_version
    assert Adjudication.objects.filter(item__project=copy).count() == 1
    placeholders = copy.memberships.filter(role=Membership.ANNOTATOR)
    assert sorted(m.pseudonym for m in placeholders) == sorted(
        {json.loads(line)["annotator"] for line in
         (tmp_path / "first/jsonl/annotations.jsonl").read_text().splitlines()}
    )  # fmt: skip
    assert not any(m.user.is_active or m.user.has_usable_password() for m in placeholders)


def test_a_hired_mace_study_imports_back_and_releases_the_same(db: None, tmp_path: Path) -> None:
    """The privacy test's project (five Prolific-form hires, members with emails), paid
    per item with a bonus per check, MACE gold: the card's pay, hires by outcome and gold
    method come back from study.json (the imported project has no hire)."""
    project, secrets = hired_project()
    hiring.Hire.objects.filter(membership__project=project).update(invited=True)
    policy = hiring.HiringPolicy.of(project)
    policy.pay_per_item, policy.pay_per_correct_check = Decimal("0.15"), Decimal("0.05")
    policy.check_rate, policy.pause_below, policy.careless_action = 0.2, 0.5, "pause"
    policy.save()
    project.set_instructions("Judge each claim against the results.\n\n```\nfenced\n```")
    Project.objects.filter(pk=project.pk).update(gold_method="mace")
    project.refresh_from_db()
    answer_everything(project)
    copy = _round_trip(project, tmp_path, ReleaseOptions(bootstrap=50))
    assert copy.gold_method == "mace"  # a new project takes the release's method
    assert not hiring.Hire.objects.filter(membership__project=copy).exists()
    stated = json.loads((tmp_path / "again" / "study.json").read_text())
    assert stated["hired"] and sum(stated["hired"].values()) == 5
    assert stated["pay"] == {"per_item": "0.15", "per_correct_check": "0.05"}
    copied = hiring.HiringPolicy.of(copy)
    assert (copied.pay_per_item, copied.check_rate, copied.careless_action) == (
        Decimal("0.15"), 0.2, "pause"
    )  # fmt: skip
    card = (tmp_path / "again" / "README.md").read_text()
    assert "0.15 per item" in card and "mace" in card
    for path in (tmp_path / "again").rglob("*"):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", errors="replace")
            assert not any(s in text for s in secrets), path


def test_a_projects_own_gold_method_is_kept_with_a_warning(
    users: dict[str, User], alpha: Project, tmp_path: Path
) -> None:
    verification_study(alpha, [users["bob"], users["carol"]], n=3)
    answer_everything(alpha)
    Project.objects.filter(pk=alpha.pk).update(gold_method="mace")
    alpha.refresh_from_db()
    folder = build_release(alpha, tmp_path / "mace", ReleaseOptions(bootstrap=0)).folder
    fresh = Project.create_with_owner(Project(name="fresh"), users["alice"])
    assert import_release(fresh, folder).gold_method == "mace"
    fresh.refresh_from_db()
    assert fresh.gold_method == "mace"
    chosen = Project.create_with_owner(Project(name="chosen", gold_method="glad"), users["alice"])
    summary = import_release(chosen, folder)
    chosen.refresh_from_db()
    assert chosen.gold_method == "glad" and summary.gold_method == "glad"
    (warning,) = [w for w in summary.warnings if w.field == "gold_method"]
    assert warning.field == "gold_method" and "mace" in warning.message
    assert "keeps its own, glad" in warning.message and "glad" in str(summary)


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


def test_a_bad_study_json_is_refused_naming_its_fields(
    users: dict[str, User], alpha: Project, tmp_path: Path
) -> None:
    folder = _small_release(tmp_path, users, alpha)
    stated = json.loads((folder / "study.json").read_text())
    stated["gold_method"] = "coin-toss"
    stated["pay"]["per_item"] = "-1"
    stated["design"]["check_rate"] = 7
    stated["card"]["license"] = "all-mine"
    stated["hired"] = {"completed": "many"}
    (folder / "study.json").write_text(json.dumps(stated))
    target = Project.create_with_owner(Project(name="target"), users["alice"])
    with pytest.raises(ImportFailed) as e:
        import_release(target, folder)
    wrong = {(err.field, err.file.endswith("study.json")) for err in e.value.errors}
    assert wrong == {
        ("gold_method", True),
        ("pay.per_item", True),
        ("design.check_rate", True),
        ("card.license", True),
        ("hired", True),
    }
    assert not target.documents.exists() and not target.items.exists()
    target.refresh_from_db()
    assert target.gold_method == "majority" and not target.instructions


def test_a_release_without_study_json_imports_with_a_warning(
    users: dict[str, User], alpha: Project, tmp_path: Path
) -> None:
    """A release built before study.json was written: its tables import, and the
    summary says what is not carried."""
    folder = _small_release(tmp_path, users, alpha)
    (folder / "study.json").unlink()
    target = Project.create_with_owner(Project(name="target"), users["alice"])
    summary = import_release(target, folder)
    assert summary.items == alpha.items.count()
    assert any("no study.json" in w.message for w in summary.warnings)


def test_an_imported_projects_release_page_starts_from_the_release(
    users: dict[str, User], alpha: Project, tmp_path: Path
) -> None:
    verification_study(alpha, [users["bob"], users["carol"]], n=3)
    answer_everything(alpha)
    options = ReleaseOptions(
        license="mit", languages=("en", "fr"), limitations="Edited by us.", bootstrap=0
    )
    folder = build_release(alpha, tmp_path / "r", options).folder
    copy = Project.create_with_owner(Project(name="copy"), users["alice"])
    import_release(copy, folder)
    client = Client()
    client.force_login(users["alice"])
    page = client.get(f"/p/{copy.pk}/release/").content.decode()
    assert '<option value="mit" selected>' in page
    assert 'value="en, fr"' in page and "Edited by us." in page
