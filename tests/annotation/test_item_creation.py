from __future__ import annotations

import json
from collections import Counter

import pytest

from annotation.ingest import import_file
from annotation.kinds.segment import segment_items
from annotation.kinds.verification import verification_items
from annotation.models import Item, Project, Segment, System, sample_claims


def test_sampling_is_seeded() -> None:
    pool = [(i, "x") for i in range(100)]
    assert sample_claims(pool, n=10, seed=1) == sample_claims(list(reversed(pool)), n=10, seed=1)
    assert sample_claims(pool, n=10, seed=1) != sample_claims(pool, n=10, seed=2)
    assert len(sample_claims(pool, n=500, seed=0)) == 100


def test_stratified_sampling_is_proportional_and_keeps_small_strata() -> None:
    pool = (
        [(i, "Biography") for i in range(60)]
        + [(100 + i, "ELI5") for i in range(30)]
        + [(200 + i, "Rare") for i in range(10)]
    )
    chosen = sample_claims(pool, n=20, seed=4)
    stratum = dict(pool)
    assert Counter(stratum[c] for c in chosen) == {"Biography": 12, "ELI5": 6, "Rare": 2}
    # largest remainder: 7 of 100 -> 4.2, 2.1, 0.7 -> the rare stratum gets the leftover claim
    assert Counter(stratum[c] for c in sample_claims(pool, n=7, seed=4)) == {
        "Biography": 4,
        "ELI5": 2,
        "Rare": 1,
    }


@pytest.fixture
def project(db: None) -> Project:
    project = Project.objects.create(name="sampling")
    lines = []
    for i in range(12):
        domain, model = ("Biography", "gpt-4") if i < 8 else ("ELI5", "mistral")
        claims = [
            {
                "text": f"Claim {i}.{j}",
                "evidence": [{"title": "t", "snippet": "s", "link": "https://e.org"}],
            }
            for j in range(2)
        ] + [f"Claim {i} without evidence"]
        lines.append(
            json.dumps(
                {
                    "id": f"d{i}",
                    "response": f"Text {i}. More.",
                    "domain": domain,
                    "source_model": model,
                    "claim_lists": {"veriscore": claims},
                }
            )
        )
    import_file(project=project, text="\n".join(lines), file="s.jsonl")
    return project


def test_verification_items_sample_claims_with_evidence(project: Project) -> None:
    system = System.objects.get(name="veriscore")
    items = verification_items(
        project=project, system=system, n=6, seed=0, stratify=("domain", "source_model")
    )
    assert len(items) == 6
    assert all(i.claim is not None and i.claim.evidence.exists() for i in items)
    assert Counter(i.document.domain for i in items) == {"Biography": 4, "ELI5": 2}
    again = verification_items(project=project, system=system, n=100, seed=0)
    assert len(again) == 24 - 6  # only claims not already sampled
    with pytest.raises(ValueError, match="no claim of veriscore with search results is left"):
        verification_items(project=project, system=system, n=1, seed=0)
    with pytest.raises(ValueError, match="cannot stratify by colour"):
        verification_items(project=project, system=system, n=1, seed=0, stratify=("colour",))


def test_segment_items_split_documents_without_segments(project: Project) -> None:
    items = segment_items(project=project)
    assert len(items) == 12 and all(i.kind == Item.SEGMENT for i in items)
    assert list(
        Segment.objects.filter(document__external_id="d0").values_list("text", flat=True)
    ) == ["Text 0.", "More."]
    assert segment_items(project=project) == []
