"""Parity with the released VeriScore 2.0.3 on its other paths (pipeline/released.py): the
fine-tuned checkpoints (use_external_extraction_model / use_external_verification_model),
Claude, and the two mixed, each on the VeriScore data sample and FActScore bios, in both
label modes. The released CLI runs in the venv of scripts/veriscore-venv: its model loading
replaced at the boundary by pipeline.parity.UNSLOTH_STANDIN (which sends the prompt strings
the released code built to the fake's /v1/completions), its Claude calls made by anthropic
0.34.2 to the fake Messages API. Our `--reference veriscore` runs with the stages' APIs
declared (--extraction-api, --verification-api). Every request body and every response's
(supported, claims) must be the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline import parity
from pipeline.split import SPACY_STANDIN

from .conftest import PEER_DATA
from .test_reference_parity import BIOS, VERISCORE, data_sample, released_python  # noqa: F401

pytestmark = pytest.mark.slow

EXTRACTOR = "SYX/mistral_based_claim_extractor"
VERIFIER = "SYX/llama3_based_claim_verifier"
CLAUDE = "claude-3-5-sonnet-20240620"

# name: (extraction model, verification model, released flags, our extra arguments)
PATHS: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "checkpoints": (
        EXTRACTOR, VERIFIER,
        ("--use_external_extraction_model", "--use_external_verification_model"),
        ("--extraction-api", "completions", "--verification-api", "completions"),
    ),
    "claude": (
        CLAUDE, CLAUDE, (),
        ("--extraction-api", "anthropic", "--verification-api", "anthropic",
         "--base-url", "{url}"),
    ),
    "checkpoint-then-claude": (
        EXTRACTOR, CLAUDE, ("--use_external_extraction_model",),
        ("--extraction-api", "completions", "--verification-api", "anthropic",
         "--verification-base-url", "{url}"),
    ),
    "gpt-then-checkpoint": (
        "gpt-4o-mini", VERIFIER, ("--use_external_verification_model",),
        ("--verification-api", "completions"),
    ),
}  # fmt: skip


def both_sides(
    python: Path, inputs: list[dict[str, Any]], work: Path, path: str, label_n: int
) -> parity.Parity:
    extraction, verification, flags, extra = PATHS[path]
    common: dict[str, Any] = dict(templates=VERISCORE, label_n=label_n, latency=0.0)
    released = parity.run_released(
        python, inputs, work / "released", model=extraction,
        verification_model=verification, flags=flags, **common,
    )  # fmt: skip
    ours = parity.run_ours(
        inputs, work / "ours", model=extraction, splitter=SPACY_STANDIN,
        extra_args=("--extraction-model", extraction, "--verification-model", verification,
                    *extra),
        **common,
    )  # fmt: skip
    return parity.compare(released, ours, inputs)


@pytest.mark.parametrize("label_n", [2, 3])
@pytest.mark.parametrize("path", list(PATHS))
def test_each_released_path_makes_the_same_requests_and_scores(
    released_python: Path,  # noqa: F811
    tmp_path: Path,
    path: str,
    label_n: int,
) -> None:
    inputs = data_sample() + parity.factscore_inputs(BIOS, 12)
    inputs += [{**i, "question": ""} for i in parity.factscore_inputs(BIOS, 2)]  # non-QA
    result = both_sides(released_python, inputs, tmp_path, path, label_n)
    print(path, label_n, parity.report(result))
    assert result.ours.error == ""
    assert result.released.error in ("", "ZeroDivisionError: division by zero")
    apis = {b.get("_api", "chat") for b in result.released.requests}
    expected = {
        "checkpoints": {"completions"},
        "claude": {"anthropic"},
        "checkpoint-then-claude": {"completions", "anthropic"},
        "gpt-then-checkpoint": {"chat", "completions"},
    }[path]
    assert apis == expected
    assert len(result.released.requests) > 100
    assert result.differences == [], result.differences[:3]
    assert result.score_differences == [], [
        (n, result.released.scores[n], result.ours.scores[n]) for n in result.score_differences
    ]


def test_verifastscore_uses_the_rows_evidence_and_calls_once_per_response(
    released_python: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The released VeriFastScore: a row with `claim_search_results` is not searched (its
    results make the evidence: snippet when the key is there, else title), a row with
    `evidence` is shown that text, the same response twice is two sampled calls, and every
    prompt is sent with `add_generation_prompt: false` (its PromptCausalLM's default)."""
    bios = parity.factscore_inputs(BIOS, 8)
    inputs = bios[:4]
    inputs.append({**bios[4], "evidence": "A given evidence line.\n\nAnd another one."})
    results = {
        "First sentence.": [{"title": "T1", "snippet": "S1", "link": "https://a.example"}],
        "Second.": [{"title": "Only a title", "link": "https://b.example"},
                    {"title": "T3", "snippet": "", "link": "https://c.example"}],
    }  # fmt: skip
    inputs.append({**bios[5], "claim_search_results": results})
    inputs.append({**bios[6], "claim_search_results": results, "evidence": "Both given."})
    inputs.append({**bios[3], "model": "another model"})  # the same response again
    model = "rishanthrajendhran/VeriFastScore"
    released = parity.run_released_verifastscore(
        released_python, inputs, tmp_path / "released", model=model, latency=0.0
    )
    ours = parity.run_ours(
        inputs, tmp_path / "ours", templates=PEER_DATA / "verifastscore", model=model,
        label_n=2, latency=0.0, splitter=SPACY_STANDIN, method="verifastscore",
    )  # fmt: skip
    result = parity.compare(released, ours, inputs)
    print(parity.report(result))
    assert released.error == "" and ours.error == ""
    assert len(released.requests) == len(inputs) == len(ours.requests)
    assert {b["add_generation_prompt"] for b in ours.requests} == {False}
    evidence = [b["messages"][-1]["content"].split("### Evidence\n", 1)[1] for b in ours.requests]
    assert "A given evidence line.\n\nAnd another one." in evidence
    assert "S1\n\nOnly a title\n" in evidence and "Both given." in evidence
    assert result.differences == [], result.differences[:3]
    assert result.score_differences == []
