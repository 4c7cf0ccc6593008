"""Parity with the released VeriScore (PyPI veriscore 2.0.3, in the venv built by
scripts/veriscore-venv): our `--reference veriscore` and the released CLI run on the same
inputs, each against its own fake provider and search, and every request is compared.

The released code calls spacy.load('en_core_web_sm'), a model on no package registry:
both sides split with one STAND-IN, spaCy's blank English pipeline with its rule-based
sentencizer (registered as en_core_web_sm in the reference venv, `spacy:sentencizer` on
our side). With the real model the sentences, and so the requests, would differ from
these; what is proven here is that, given the same sentences, every request is the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline import parity
from pipeline.split import SPACY_STANDIN
from tests.requires import unavailable

from .conftest import PEER_DATA

pytestmark = pytest.mark.slow

VERISCORE = PEER_DATA / "veriscore"
BIOS = PEER_DATA / "factscore_labeled" / "ChatGPT.jsonl"


@pytest.fixture(scope="module")
def released_python() -> Path:
    if not VERISCORE.is_dir() or not BIOS.exists():
        unavailable(f"the shared peer data is missing ({PEER_DATA})")
    python = parity.venv_python(build=True)
    if python is None:
        unavailable(parity.why_no_venv())
    return python


def data_sample() -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (VERISCORE / "data_sample.jsonl").read_text().splitlines()]
    keys = ("question", "response", "model", "prompt_source")
    return [{k: r[k] for k in keys} for r in rows]


def both_sides(
    python: Path, inputs: list[dict[str, Any]], work: Path, label_n: int
) -> parity.Parity:
    options: dict[str, Any] = dict(
        templates=VERISCORE, model="gpt-4o-mini", label_n=label_n, latency=0.0
    )
    released = parity.run_released(python, inputs, work / "released", **options)
    ours = parity.run_ours(inputs, work / "ours", splitter=SPACY_STANDIN, **options)
    return parity.compare(released, ours, inputs)


def crashes(result: parity.Parity) -> list[int]:
    """The responses the released code crashes on: with no claim, its utils.py divides
    S by |C| = 0 (ZeroDivisionError), after writing every output file."""
    zero = [n for n, s in enumerate(result.ours.scores) if s is not None and s[1] == 0]
    if zero:
        assert result.released.error == "ZeroDivisionError: division by zero"
    else:
        assert result.released.error == ""
    return zero


def test_fifty_bios_and_the_data_sample_make_the_same_requests(
    released_python: Path, tmp_path: Path
) -> None:
    inputs = data_sample() + parity.factscore_inputs(BIOS, 50)
    result = both_sides(released_python, inputs, tmp_path, label_n=3)
    print(parity.report(result))
    assert result.ours.error == ""
    assert len(result.released.requests) > 400  # extraction and verification calls
    assert result.differences == [], result.differences[:3]
    # Every response scores the same, except where the verifier answered with its reason
    # first: the released parser keeps the text before the first full stop, ours the
    # last ###label###.
    assert result.unexpected_score_differences == []
    assert result.may_differ and set(result.score_differences) <= set(result.may_differ)
    crashed = crashes(result)
    print(f"the released code crashes (ZeroDivisionError) on responses {crashed}")
    for n in crashed:
        assert result.released.scores[n] == (0, 0)


def test_non_qa_input_and_binary_labels_make_the_same_requests(
    released_python: Path, tmp_path: Path
) -> None:
    # Without a question: the windows of a long response lead with its first sentence.
    inputs = [{**i, "question": ""} for i in parity.factscore_inputs(BIOS, 6)]
    result = both_sides(released_python, inputs, tmp_path, label_n=2)
    print(parity.report(result))
    assert result.ours.error == ""
    assert result.released.requests and result.differences == [], result.differences[:3]
    assert result.unexpected_score_differences == []
    crashes(result)


def test_verifastscore_sends_what_the_released_code_would_send_its_model(
    released_python: Path, tmp_path: Path
) -> None:
    """The released VeriFastScore (0.1.5) runs a local Hugging Face model: in the venv it is
    installed without torch and transformers, which pipeline.parity.VFS_DRIVER stubs; the
    chat its own PromptCausalLM builds for the model (system message + user message) goes
    to the fake with its sampling settings (temperature 0.7, 2048 new tokens). Its
    get_verifastscore() crashes on every input (`dict_idx(...)` calls an int); the driver
    makes that index callable to get past it."""
    inputs = parity.factscore_inputs(BIOS, 20)
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
    assert len(released.requests) == 20 and released.queries
    assert {b["temperature"] for b in released.requests} == {0.7}
    assert result.differences == [], result.differences[:3]
    assert result.score_differences == []
