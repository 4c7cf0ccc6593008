"""One rule for a VeriScore-input response on every surface (import_file, import_data,
the upload page, the API; the pipeline CLI in tests/pipeline/test_cli_input.py): empty,
whitespace-only, null or NaN is imported with a warning naming file, line and field (a
pipeline run abstains it); a number, a list or an object is an error naming them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotation.ingest import ImportFailed, import_file
from annotation.models import Document, Project
from tests.annotation.api_helpers import token_client
from tests.conftest import login


def row(n: int, response: Any) -> str:
    record = {"question": f"Q{n}?", "response": response, "model": "m", "prompt_source": "d"}
    return json.dumps(record)


GOOD = row(1, "Paris is the capital of France.")
# Python's json writes NaN as the bare token NaN, as pandas does for a missing text.
EMPTY = "\n".join([GOOD, row(2, ""), row(3, " \n\t"), row(4, None), row(5, float("nan"))])
WARNED = [
    "line 2, field 'response': is empty: read as an empty response",
    "line 3, field 'response': is only whitespace: read as an empty response",
    "line 4, field 'response': is null: read as an empty response",
    "line 5, field 'response': is NaN: read as an empty response",
]
BAD = {
    "a number": row(2, 5),
    "a list": row(2, ["a"]),
    "an object": row(2, {"text": "a"}),
}


@pytest.fixture
def project(db: None) -> Project:
    return Project.objects.create(name="empties")


def test_import_file_keeps_empty_responses_with_a_warning_each(project: Project) -> None:
    summary = import_file(project=project, text=EMPTY, file="in.jsonl")
    assert summary.documents_created == 5
    warnings = [str(w) for w in summary.warnings]
    assert len(warnings) == 4
    for warning, expected in zip(warnings, WARNED, strict=True):
        assert warning.startswith(f"in.jsonl, {expected}"), warning
    responses = sorted(Document.objects.values_list("response", flat=True))
    assert responses == ["", "", "", " \n\t", "Paris is the capital of France."]


@pytest.mark.parametrize("what", list(BAD))
def test_import_file_refuses_a_response_that_is_not_text(project: Project, what: str) -> None:
    with pytest.raises(ImportFailed, match=f"in.jsonl, line 2, field 'response': must be a "
                       f"string, not {what}"):  # fmt: skip
        import_file(project=project, text=f"{GOOD}\n{BAD[what]}", file="in.jsonl")
    assert Document.objects.count() == 0


def test_the_command_warns_and_refuses_alike(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "in.jsonl"
    good.write_text(EMPTY)
    call_command("import_data", str(project.pk), str(good))
    out = capsys.readouterr().out
    assert "5 new document(s)" in out and "4 warning(s)" in out and WARNED[0] in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f"{GOOD}\n{BAD['a list']}")
    with pytest.raises(CommandError, match="line 2, field 'response': must be a string") as e:
        call_command("import_data", str(project.pk), str(bad))
    assert e.value.returncode == 2
    assert Document.objects.count() == 5


def test_the_api_warns_and_refuses_with_400(alpha: Project, users: dict[str, Any]) -> None:
    client = token_client(users["alice"])
    url = f"/api/projects/{alpha.pk}/documents/import/"
    upload = SimpleUploadedFile("in.jsonl", EMPTY.encode())
    response = client.post(url, {"file": upload}, format="multipart")
    assert response.status_code == 201, response.content
    body = json.dumps(response.json())
    assert all(w.split(": read")[0].replace("'", "") in body.replace("'", "") for w in WARNED)
    bad = SimpleUploadedFile("bad.jsonl", f"{GOOD}\n{BAD['an object']}".encode())
    response = client.post(url, {"file": bad}, format="multipart")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["file"], error["line"], error["field"]) == ("bad.jsonl", 2, "response")
    assert "not an object" in error["message"]


def test_the_upload_page_warns_and_refuses(
    client: Client, alpha: Project, users: dict[str, Any]
) -> None:
    login(client, users["alice"])
    before = Document.objects.filter(project=alpha).count()
    url = reverse("project_import", args=[alpha.pk])
    upload = SimpleUploadedFile("in.jsonl", EMPTY.encode())
    body = client.post(url, {"file": upload, "format": "auto"}, follow=True).content.decode()
    assert "5 new document(s)" in body and "4 warning(s)" in body
    assert "in.jsonl, line 4, field &#x27;response&#x27;: is null" in body
    bad = SimpleUploadedFile("bad.jsonl", f"{GOOD}\n{BAD['a number']}".encode())
    body = client.post(url, {"file": bad, "format": "auto"}, follow=True).content.decode()
    assert "bad.jsonl, line 2, field &#x27;response&#x27;: must be a string, not a number" in body
    assert Document.objects.filter(project=alpha).count() == before + 5
