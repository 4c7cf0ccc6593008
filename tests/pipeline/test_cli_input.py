"""`python -m pipeline run` on input the platform's VeriScore-input reader warns about or
refuses: an empty, whitespace-only, null or NaN response is read as "" with a warning
naming file, line and field and the run goes on (exit 0); a number, a list or an object
where the text belongs is an error naming them (exit 2, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.split import SPACY_STANDIN
from tests.requires import unavailable

from .conftest import PEER_DATA
from .test_cli import cli, endpoints, read

GOOD = "The Danube rises in the Black Forest in Germany. It flows into the Black Sea."


def row(n: int, response: Any) -> str:
    record = {"question": f"Q{n}?", "response": response, "model": "m", "prompt_source": "d"}
    return json.dumps(record)  # NaN is written as the bare token NaN, as pandas writes it


def empties(path: Path) -> Path:
    lines = [row(1, GOOD), row(2, ""), row(3, " \n\t"), row(4, None), row(5, float("nan"))]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_empty_responses_are_abstained_with_a_warning_each(tmp_path: Path) -> None:
    data = empties(tmp_path / "in.jsonl")
    with FakeOpenAI() as llm, FakeSerper() as serper:
        out = tmp_path / "out"
        proc = cli("run", str(data), *endpoints(llm, serper, tmp_path), "--out", str(out))
    for line, what in ((2, "is empty"), (3, "is only whitespace"), (4, "is null"), (5, "is NaN")):
        assert f"warning: {data}, line {line}, field 'response': {what}: read as" in proc.stderr
    abstained = [r["abstained"] for r in read(out / "verification_in.jsonl")]
    assert abstained == [False, True, True, True, True]
    scores = json.loads((out / "scores_in.json").read_text())
    assert scores["rows"][0]["abstained"] == 4 and scores["rows"][0]["responses"] == 1


def test_the_reference_mode_scores_them_as_the_released_code(tmp_path: Path) -> None:
    """The released code abstains none of them: each is split (whitespace gives one empty
    sentence, so one extraction call), has no claim, counts for K with 0 claims and is
    listed where the released code divides by zero."""
    prompts = PEER_DATA / "veriscore" / "prompt"
    if not prompts.is_dir():
        unavailable(f"the released templates are missing ({prompts})")
    data = empties(tmp_path / "in.jsonl")
    with FakeOpenAI(verdicts="varied") as llm, FakeSerper() as serper:
        out = tmp_path / "out"
        args = ["--reference", "veriscore", "--prompt-dir", str(prompts)]
        args += ["--splitter", SPACY_STANDIN, "--out", str(out)]
        proc = cli("run", str(data), *endpoints(llm, serper, tmp_path), *args)
        extractions = [r for r in llm.requests if "<SOS><EOS>" in json.dumps(r["body"])]
    assert proc.stderr.count("field 'response'") == 4
    rows = read(out / "verification_in.jsonl")
    assert [r["abstained"] for r in rows] == [False] * 5
    assert [len(r["all_claims"]) for r in rows][1:] == [0, 0, 0, 0]
    assert len(extractions) == 1  # the whitespace-only response's empty sentence
    scores = json.loads((out / "scores_in.json").read_text())
    # K_median is the third of (0, 0, 0, 0, 2): 0, so the released code divides the one
    # response with claims by 0 too (its recall S / K).
    assert scores["released"]["k"] == {"d": {"K_median": 0, "K_max": 2}}
    errors = scores["released"]["errors"]
    assert [e["error"] for e in errors] == ["ZeroDivisionError"] * 5
    assert "released: ZeroDivisionError on 5 response(s)" in proc.stdout
    assert [r["released"] for r in scores["responses"]] == [""] + ["ZeroDivisionError"] * 4


@pytest.mark.parametrize(
    ("value", "what"), [(5, "a number"), (["a"], "a list"), ({"t": "a"}, "an object")]
)
def test_a_response_that_is_not_text_is_an_error_naming_it(
    tmp_path: Path, value: Any, what: str
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text(f"{row(1, GOOD)}\n{row(2, value)}\n")
    proc = cli("run", str(data), "--estimate", check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"{data}, line 2, field 'response': must be a string, not {what}" in proc.stderr
    assert "Traceback" not in proc.stderr
