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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pipeline import parity
from pipeline.fakes import VARIED, varied_shape
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


# Responses no test file has, each not first (an abstention first stops the released code:
# test_an_abstention_first_stops_the_released_code): empty and whitespace-only (processed,
# claimless: its ZeroDivisionError), and an abstention.
EDGE_CASES = [
    {"question": "Who is Ada Lovelace?", "response": "", "model": "ChatGPT",
     "prompt_source": "factscore"},
    {"question": "Who is Alan Turing?", "response": "  \n\t ", "model": "ChatGPT",
     "prompt_source": "factscore"},
    {"question": "Write a poem.", "response": "Sorry, I can't do that.", "model": "gpt-4o",
     "prompt_source": "sharegpt"},
]  # fmt: skip


@dataclass(frozen=True)
class ReleasedPath:
    """One path of the released code: how to run it and our reference mode alike."""

    name: str
    model: str
    run_released: Callable[..., parity.Side]
    run_ours: Callable[..., parity.Side]


PATHS = {
    "gpt": ReleasedPath("gpt", "gpt-4o-mini", parity.run_released, parity.run_ours),
}


def both_sides(
    python: Path, inputs: list[dict[str, Any]], work: Path, label_n: int, path: ReleasedPath
) -> parity.Parity:
    options: dict[str, Any] = dict(
        templates=VERISCORE, model=path.model, label_n=label_n, latency=0.0
    )
    released = path.run_released(python, inputs, work / "released", **options)
    ours = path.run_ours(inputs, work / "ours", splitter=SPACY_STANDIN, **options)
    return parity.compare(released, ours, inputs)


def assert_same(result: parity.Parity) -> None:
    print(parity.report(result))
    assert result.ours.error == ""
    assert result.differences == [], result.differences[:3]
    assert result.score_differences == [], result.score_differences
    assert result.figure_differences == [], result.figure_differences
    assert result.released.k and result.released.printed


def claimless(result: parity.Parity) -> list[int]:
    """The responses the released code crashes on: with no claim, its utils.py divides
    S by |C| = 0 (ZeroDivisionError), after writing every output file."""
    zero = [n for n, s in enumerate(result.ours.scores) if s is not None and s[1] == 0]
    if zero:
        assert result.released.error == "ZeroDivisionError: division by zero"
    else:
        assert result.released.error == ""
    return zero


@pytest.mark.parametrize("label_n", [3, 2], ids=["ternary", "binary"])
@pytest.mark.parametrize("path", list(PATHS.values()), ids=list(PATHS))
def test_bios_and_the_data_sample_give_the_released_requests_and_numbers(
    released_python: Path, tmp_path: Path, path: ReleasedPath, label_n: int
) -> None:
    """The data sample, 50 FActScore bios and the edge cases; the fake verifier answers
    in every shape of pipeline.fakes.VARIED (label first, reasoning first, text after
    the label, no label): every request (search bodies included), every response's
    (supported, claims) and every figure the released code prints are the same."""
    inputs = data_sample() + EDGE_CASES + parity.factscore_inputs(BIOS, 50)
    result = both_sides(released_python, inputs, tmp_path, label_n, path)
    assert_same(result)
    assert len(result.released.requests) > 400  # extraction and verification calls
    assert all(set(b) == {"q"} for b in result.released.searches)
    zero = claimless(result)
    print(f"the released code crashes (ZeroDivisionError) on responses {zero}")
    assert {1, 2} <= set(zero)  # the empty and the whitespace-only response
    assert result.ours.scores[3] is None  # the abstention
    shapes = Counter(
        varied_shape(c) for claims in result.ours.claims for c in claims
    )  # every shape of answer was given
    assert set(shapes) == set(VARIED), shapes


@pytest.mark.parametrize("path", list(PATHS.values()), ids=list(PATHS))
def test_non_qa_input_and_binary_labels_give_the_released_requests_and_numbers(
    released_python: Path, tmp_path: Path, path: ReleasedPath
) -> None:
    # Without a question: the windows of a long response lead with its first sentence.
    inputs = [{**i, "question": ""} for i in parity.factscore_inputs(BIOS, 6)]
    result = both_sides(released_python, inputs, tmp_path, 2, path)
    assert_same(result)
    claimless(result)


@pytest.mark.parametrize("path", list(PATHS.values()), ids=list(PATHS))
def test_an_abstention_first_stops_the_released_code(
    released_python: Path, tmp_path: Path, path: ReleasedPath
) -> None:
    """veriscore.py writes `question` before it is set: an abstention first in the file is
    an UnboundLocalError before any call. Our reference mode scores the rest and lists it."""
    inputs = [EDGE_CASES[2], *parity.factscore_inputs(BIOS, 3)]
    options: dict[str, Any] = dict(templates=VERISCORE, model=path.model, label_n=3, latency=0.0)
    released = path.run_released(released_python, inputs, tmp_path / "released", **options)
    assert released.error.startswith("UnboundLocalError"), released.error
    assert released.requests == [] and released.searches == []
    ours = path.run_ours(inputs, tmp_path / "ours", splitter=SPACY_STANDIN, **options)
    assert ours.error == "" and ours.requests
    scores = json.loads((tmp_path / "ours" / "out" / "scores_input.json").read_text())
    first = {"id": scores["responses"][0]["id"], "error": "UnboundLocalError"}
    assert scores["responses"][0]["abstained"] and first in scores["released"]["errors"]


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
