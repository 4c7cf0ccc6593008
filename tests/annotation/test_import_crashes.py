"""Inputs that used to crash an importer (a traceback on the command line, HTTP 500 on
the upload page and the API) are named errors: file, line, field or mapping key; exit
2 on the command line, HTTP 400 on the page and the API. Likewise the API parameters
that overflowed a date."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from annotation import formats
from annotation.ingest import ImportFailed, import_file
from annotation.models import Document, Project
from tests.conftest import canonical_line

from .api_helpers import token_client
from .test_import_fuzz import BASES

HUGE = "9" * 4301  # one digit over Python's limit for int(str)
SAFE_FILE = Path(__file__).parent / "data" / "safe" / "safe_results.json"
MAPPING = "id: id\nresponse: response\nquestion: prompt\n"


def _with_huge(fmt: str) -> tuple[str, dict[str, str]]:
    """A file of the format whose second record holds an integer of 4,301 digits."""
    if fmt == "safe":
        text = SAFE_FILE.read_text()
        return text.replace('"num_claims": 3', f'"num_claims": {HUGE}', 1), {}
    if fmt == "mapping":
        rows = [{"id": "a", "response": "A."}, {"id": "b", "response": "B."}]
        options = {"mapping": MAPPING}
    else:
        rows = [BASES[fmt], {**BASES[fmt], "id": "second"}]
        options = {}
    lines = [json.dumps(r) for r in rows]
    lines[1] = lines[1][:-1] + f', "extra": {HUGE}}}'
    return "\n".join(lines), options


FORMATS = [*sorted(BASES), "safe", "mapping"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_integer_of_more_than_4300_digits_is_a_named_error(db: None, fmt: str) -> None:
    line_formats = {f.name for f in formats.FORMATS.values() if f.reads and not f.archive}
    assert set(FORMATS) == line_formats  # every format read line by line has its case
    project = Project.objects.create(name=fmt)
    text, options = _with_huge(fmt)
    with pytest.raises(ImportFailed) as e:
        import_file(project=project, text=text, file="big.jsonl", fmt=fmt, **options)
    (error,) = e.value.errors
    assert error.line == (2 if fmt != "safe" else error.line) and error.line > 0
    assert "4300 digits" in error.message, error
    assert not Document.objects.filter(project=project).exists()


@pytest.mark.parametrize(
    ("fmt", "key"),
    [
        ("veriscore-input", "question"),
        ("veriscore-input", "response"),
        ("veriscore-input", "model"),
        ("mapping", "response"),
        ("mapping", "prompt"),
    ],
)
def test_a_lone_surrogate_in_a_value_of_the_stable_id_is_named(
    db: None, fmt: str, key: str
) -> None:
    row = {**BASES.get(fmt, {"response": "A.", "prompt": "Q?"}), key: "x\ud800"}
    options = {"mapping": "response: response\nquestion: prompt\n"} if fmt == "mapping" else {}
    text = json.dumps(row)  # ASCII: the surrogate is the escape \ud800
    with pytest.raises(ImportFailed) as e:
        import_file(
            project=Project.objects.create(name="s"), text=text, file="s.jsonl", fmt=fmt, **options
        )
    (error,) = e.value.errors
    stored = {"model": "source_model", "prompt": "question"}  # the platform's field
    assert (error.line, error.field) == (1, stored.get(key, key)), error
    assert "lone surrogate (\\ud800)" in error.message


@pytest.mark.parametrize("where", ["prompt", "side1_response"])
def test_a_lone_surrogate_in_a_safe_prompt_or_response_is_named(db: None, where: str) -> None:
    text = SAFE_FILE.read_text()
    original = json.loads(text)["per_prompt_data"][0][where]
    text = text.replace(json.dumps(original), json.dumps(original + "\ud800"))
    with pytest.raises(ImportFailed) as e:
        import_file(project=Project.objects.create(name="s"), text=text, file="safe.json")
    assert e.value.errors and all(err.line > 0 for err in e.value.errors)
    assert any("lone surrogate" in err.message for err in e.value.errors), e.value


def test_a_mapping_expression_nested_3000_deep_is_a_named_error(db: None) -> None:
    deep = "(" * 3000 + "response" + ")" * 3000
    with pytest.raises(ImportFailed) as e:
        import_file(
            project=Project.objects.create(name="m"),
            text='{"response": "A."}',
            file="r.jsonl",
            mapping=f"response: '{deep}'\n",
            mapping_file="deep.yaml",
        )
    (error,) = e.value.errors
    assert (error.file, error.field) == ("deep.yaml", "response")
    assert "nested too deeply" in error.message


def test_a_jmespath_type_error_names_the_expression_and_the_line(db: None) -> None:
    rows = [{"id": "a", "response": "A.", "n": 1}, {"id": "b", "response": "B.", "n": "x"}]
    with pytest.raises(ImportFailed) as e:
        import_file(
            project=Project.objects.create(name="m"),
            text="\n".join(map(json.dumps, rows)),
            file="r.jsonl",
            mapping="id: id\nresponse: response\ndomain: abs(n)\n",
        )
    (error,) = e.value.errors
    assert (error.line, error.field) == (2, "domain")
    assert "abs(n)" in error.message and "invalid type" in error.message


def test_the_command_exits_2_naming_the_line(db: None, tmp_path: Path) -> None:
    Project.objects.create(name="cli")
    path = tmp_path / "big.jsonl"
    path.write_text(_with_huge("canonical")[0])
    with pytest.raises(CommandError) as e:
        call_command("import_data", "cli", str(path))
    assert e.value.returncode == 2
    assert "line 2" in str(e.value) and "4300 digits" in str(e.value)


def test_the_api_and_the_page_answer_400_naming_the_line(
    alpha: Project, users: dict[str, User]
) -> None:
    text = _with_huge("veriscore-input")[0]
    api = token_client(users["alice"]).post(
        f"/api/projects/{alpha.pk}/documents/import/",
        {"content": text, "filename": "big.jsonl"},
        format="json",
    )
    assert api.status_code == 400, api.content
    assert "line 2" in json.dumps(api.json()) and "4300 digits" in json.dumps(api.json())
    page = Client()
    page.force_login(users["alice"])
    from django.core.files.uploadedfile import SimpleUploadedFile

    answer = page.post(
        f"/p/{alpha.pk}/import/",
        {"file": SimpleUploadedFile("big.jsonl", text.encode()), "format": "auto"},
    )
    assert answer.status_code == 400
    assert b"big.jsonl, line 2" in answer.content and b"4300 digits" in answer.content


def _post_invite(client: Any, project: Project, days: int) -> Any:
    return client.post(
        f"/api/projects/{project.pk}/invites/", {"expires_in_days": days}, format="json"
    )


def test_an_invite_of_3000000_days_is_refused_with_its_field(
    alpha: Project, users: dict[str, User]
) -> None:
    client = token_client(users["alice"])
    refused = _post_invite(client, alpha, 3_000_000)
    assert refused.status_code == 400 and refused.json()["field"] == "expires_in_days"
    assert _post_invite(client, alpha, 3650).status_code == 201


@pytest.mark.parametrize("since", ["2026-99-99", "9999-12-31T23:59:59+99:00", "2026-02-30"])
def test_an_impossible_since_is_a_400_naming_the_parameter(
    alpha: Project, users: dict[str, User], since: str
) -> None:
    answer = token_client(users["alice"]).get(
        f"/api/projects/{alpha.pk}/answers/", {"since": since}
    )
    assert answer.status_code == 400, answer.content
    assert answer.json()["field"] == "since"


def test_every_bad_value_of_a_record_is_named_by_its_field(db: None) -> None:
    line = canonical_line(
        1,
        claim_lists={"x": ["a\x00", {"text": "b", "evidence": [{"snippet": "\ud800"}]}]},
        segments=[{"text": "c\x00", "labels": {"l": "true"}}],
    )
    with pytest.raises(ImportFailed) as e:
        import_file(project=Project.objects.create(name="n"), text=line, file="c.jsonl")
    assert [(err.line, err.field, err.message.split(" (")[0]) for err in e.value.errors] == [
        (1, "claim_lists.x[0]", "contains a NUL character"),
        (1, "claim_lists.x[1].evidence[0].snippet", "contains a lone surrogate"),
        (1, "segments[0].text", "contains a NUL character"),
    ]


def test_the_invite_form_refuses_3000000_days_with_its_field(
    alpha: Project, users: dict[str, User]
) -> None:
    """The page's invite form had no bound: the expiry date overflowed (HTTP 500)."""
    from django.test import Client
    from django.urls import reverse

    client = Client()
    client.force_login(users["alice"])
    page = client.post(
        reverse("hiring", args=[alpha.pk]),
        {"action": "invite", "worker_param": "PROLIFIC_PID", "expires_in_days": 3_000_000},
    )
    assert page.status_code in (200, 400)
    assert "less than or equal to 36500" in page.content.decode()
    assert not alpha.invites.exists()
