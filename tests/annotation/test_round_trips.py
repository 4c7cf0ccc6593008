"""Every released document file of ../shared/peer-data goes in as published, out as
canonical JSONL, in again, and out as published: the same file. (The other peer files
are prompts, caches and few-shot demos, not documents.) An export that needs a label
source names the sources there are; `export_data` writes every export of the API."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from annotation import formats
from annotation.ingest import FACTSCORE_LABELS, FELM_LABELS, ImportFailed, import_file
from annotation.models import Project
from tests.conftest import SYSTEM_A, canonical_line, peer_file

from .api_helpers import token_client
from .test_import_as_published import FELM_MATH, FELM_SCIENCE, jsonl


def records(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def published(project: Project, name: str) -> list[dict[str, object]]:
    if name.startswith("factscore_labeled/"):
        model = name.split("/")[1].removesuffix(".jsonl")
        return formats.factscore_records(project, source=FACTSCORE_LABELS, source_model=model)
    return formats.veriscore_records(project, system="veriscore")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "factscore_labeled/InstructGPT.jsonl",
        "factscore_labeled/ChatGPT.jsonl",
        "factscore_labeled/PerplexityAI.jsonl",
        "veriscore/data_sample.jsonl",
    ],
)
def test_a_released_file_round_trips_through_canonical(db: None, name: str) -> None:
    path = peer_file(name)
    first = Project.objects.create(name="first")
    import_file(project=first, text=path.read_bytes(), file=path.name)
    canonical = formats._jsonl(formats.canonical_records(first))
    second = Project.objects.create(name="second")
    summary = import_file(project=second, text=canonical, file="canonical.jsonl")
    assert summary.warnings == []
    assert formats.canonical_records(second) == records(canonical)
    assert published(second, name) == records(path.read_text())


def test_an_empty_response_is_kept_only_for_an_abstention(db: None) -> None:
    project = Project.objects.create(name="p")
    abstained = canonical_line(1, response="", claim_lists={"x": []}, abstained=["x"])
    assert import_file(project=project, text=abstained, file="c.jsonl").documents_created == 1
    for line in (
        canonical_line(2, response=""),
        canonical_line(3, response=" ", claim_lists={"x": ["A."]}, abstained=["x"]),
        canonical_line(4, response="", claim_lists={"x": [], "y": []}, abstained=["x"]),
        canonical_line(5, response=None),
    ):
        with pytest.raises(ImportFailed) as e:
            import_file(project=project, text=line, file="c.jsonl")
        ((error),) = e.value.errors
        assert error.field == "response" and error.message.startswith("is"), error


@pytest.fixture
def researcher(alpha: Project, users: dict[str, User]) -> APIClient:
    """alice's client on alpha (comparison items, no gold label yet), with FELM records."""
    import_file(project=alpha, text=jsonl(FELM_MATH), file="math.jsonl")
    import_file(project=alpha, text=jsonl(FELM_SCIENCE), file="science.jsonl")
    return token_client(users["alice"])


def test_a_felm_export_without_gold_names_the_sources(
    alpha: Project, researcher: APIClient
) -> None:
    url = f"/api/projects/{alpha.pk}/exports/felm.jsonl"
    refused = researcher.get(url)
    assert refused.status_code == 400
    message = refused.json()["message"]
    assert "gold" in message and message.endswith(f"one of {FELM_LABELS}"), message
    chosen = researcher.get(url, {"source": FELM_LABELS})
    assert chosen.status_code == 200
    assert records(chosen.content.decode()) == [FELM_MATH, FELM_SCIENCE]
    unknown = researcher.get(url, {"source": "felm"})
    assert unknown.status_code == 400 and FELM_LABELS in unknown.json()["message"]


@pytest.mark.slow
def test_a_factscore_export_without_gold_names_the_sources(db: None, tmp_path: Path) -> None:
    path = peer_file("factscore_labeled/InstructGPT.jsonl")
    project = Project.objects.create(name="fs")
    import_file(project=project, text=path.read_bytes(), file=path.name)
    with pytest.raises(CommandError) as e:
        call_command("export_data", "fs", "--format", "factscore.jsonl")
    assert e.value.returncode == 2 and str(e.value).endswith(f"one of {FACTSCORE_LABELS}")
    out = tmp_path / "out.jsonl"
    call_command(
        "export_data",
        "fs",
        "--format",
        "factscore.jsonl",
        "--source",
        FACTSCORE_LABELS,
        "--output",
        str(out),
        stderr=io.StringIO(),
    )
    assert records(out.read_text()) == records(path.read_text())


def test_export_data_writes_every_export_the_api_has(alpha: Project, researcher: APIClient) -> None:
    params = {
        "veriscore.jsonl": {"system": SYSTEM_A},
        "factscore.jsonl": {"system": SYSTEM_A, "source": "gold"},
        "felm.jsonl": {"source": FELM_LABELS},
        "safe.json": {"system": SYSTEM_A},
        "answers.csv": {"kind": "comparison"},
    }
    assert set(params) < set(formats.EXPORTS)
    for name in formats.EXPORTS:
        api = researcher.get(f"/api/projects/{alpha.pk}/exports/{name}", params.get(name, {}))
        assert api.status_code == 200, (name, api.content[:300])
        out = io.StringIO()
        options = [f"--{k.replace('_', '-')}={v}" for k, v in params.get(name, {}).items()]
        call_command("export_data", str(alpha.pk), "--format", name, *options, stdout=out)
        assert out.getvalue() == api.content.decode(), name
        assert out.getvalue().strip(), name
