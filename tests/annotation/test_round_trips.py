"""Every released document file of ../shared/peer-data goes in as published, out as
canonical JSONL, in again, and out as published: the same file. (The other peer files
are prompts, caches and few-shot demos, not documents.)"""

from __future__ import annotations

import json

import pytest

from annotation import formats
from annotation.ingest import FACTSCORE_LABELS, ImportFailed, import_file
from annotation.models import Project
from tests.conftest import canonical_line, peer_file


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
