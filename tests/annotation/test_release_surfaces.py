"""The release's page, API and command: researchers of the project only (annotators,
hired workers and other projects' researchers get 404, anonymous callers the login or
401); the zip each returns is the release."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from annotation import hiring
from annotation.models import Membership, Project

from .api_helpers import token_client
from .release_helpers import answer_everything, verification_study


@pytest.fixture
def study(users: dict[str, User], alpha: Project, beta: Project) -> Project:
    """alpha with verification items answered by bob, carol and a hired worker."""
    worker = User.objects.create_user("hired-worker")
    membership = alpha.add_member(worker, Membership.ANNOTATOR)
    hiring.Hire.objects.create(
        membership=membership, worker_id="5f00a1b2c3d4e5f6a7b8c9d0", passed_training=True
    )
    verification_study(alpha, [users["bob"], users["carol"], worker], n=4)
    answer_everything(alpha)
    return alpha


def _zip_names(content: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(content)) as z:
        return z.namelist()


def _content(response: Any) -> bytes:
    return b"".join(response.streaming_content)


def test_the_page_is_for_the_projects_researchers(
    study: Project, users: dict[str, User], client: Client
) -> None:
    url = f"/p/{study.pk}/release/"
    assert client.get(url).status_code == 302  # to the login
    for who in ("bob", "dave", "erin", "hired-worker"):  # annotators, a hire, beta's researcher
        client.force_login(User.objects.get(username=who))
        assert client.get(url).status_code == 404, who
        assert client.post(url, {"license": "mit", "languages": "en"}).status_code == 404, who
    client.force_login(users["alice"])
    page = client.get(url)
    assert page.status_code == 200
    assert "Human annotations of LLM factuality" in page.content.decode()  # the default
    response = client.post(
        url,
        {
            "license": "mit",
            "languages": "en, de",
            "task_categories": ["text-classification", "question-answering"],
            "summary": "Our own summary.",
            "bootstrap": "0",
        },
    )
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(_content(response))) as z:
        card = z.read(f"project-{study.pk}-release/README.md").decode()
    assert "license: mit" in card and "Our own summary." in card
    assert "- de" in card and "- question-answering" in card
    bad = client.post(url, {"license": "mit", "languages": "english!", "bootstrap": "0"})
    assert bad.status_code == 400
    named = client.post(url, {"license": "mit", "languages": "en", "summary": "hired-worker"})
    assert named.status_code == 400 and "nothing personal" in named.content.decode()


def test_the_api_is_for_the_projects_researchers(study: Project, users: dict[str, User]) -> None:
    url = f"/api/projects/{study.pk}/release/"
    assert token_client(None).post(url, {}, format="json").status_code == 401
    for who in ("bob", "dave", "erin", "hired-worker"):
        client = token_client(User.objects.get(username=who))
        assert client.get(url).status_code == 404, who
        assert client.post(url, {}, format="json").status_code == 404, who
    alice = token_client(users["alice"])
    defaults = alice.get(url).json()
    assert "summary" in defaults["defaults"] and "cc-by-4.0" in defaults["licences"]
    response = alice.post(url, {"license": "cc0-1.0", "bootstrap": 0}, format="json")
    assert response.status_code == 200
    assert any(n.endswith("croissant.json") for n in _zip_names(_content(response)))
    refused = alice.post(url, {"source_licences": ["../settings.py"]}, format="json")
    assert refused.status_code == 400
    assert refused.json()["field"] == "source_licences"


def test_the_command_writes_the_folder_and_the_zip(study: Project, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("What we annotated.", encoding="utf-8")
    out = io.StringIO()
    call_command(
        "release_dataset",
        str(study.pk),
        str(tmp_path / "rel"),
        "--zip",
        "--license",
        "cc-by-nc-4.0",
        "--summary-file",
        str(summary),
        "--bootstrap",
        "0",
        stdout=out,
        stderr=io.StringIO(),
    )
    assert "Released 'alpha'" in out.getvalue() and "annotations " in out.getvalue()
    assert (tmp_path / "rel.zip").is_file()
    card = (tmp_path / "rel" / "README.md").read_text()
    assert "license: cc-by-nc-4.0" in card and "What we annotated." in card
    meta = json.loads((tmp_path / "rel" / "croissant.json").read_text())
    assert meta["license"] == "cc-by-nc-4.0"
    with pytest.raises(CommandError, match="not an empty folder"):
        call_command("release_dataset", str(study.pk), str(tmp_path / "rel"), stderr=io.StringIO())
