"""The format modules alone (no database): readers and writers give records back as
published, and the pipeline reads files through them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.dataformats import ImportFailed, factscore, parse_file, veriscore
from pipeline.formats import load_results, read_inputs
from tests.conftest import peer_file


def test_the_released_files_come_back_from_the_writers_as_published() -> None:
    path = peer_file("factscore_labeled/PerplexityAI.jsonl")
    fmt, records, warnings = parse_file(path.read_text(), file=path.name)
    assert (fmt, len(records), warnings) == ("factscore", 183, [])
    published = [json.loads(line) for line in path.read_text().splitlines()]
    assert [factscore.write(r, labels=factscore.LABELS) for r in records] == published
    path = peer_file("veriscore/data_sample.jsonl")
    _, [record], _ = parse_file(path.read_text(), file=path.name)
    assert veriscore.write(record, system="veriscore", verifier="veriscore-verifier") == json.loads(
        path.read_text()
    )


def test_the_pipeline_reads_veriscore_files_with_the_shared_reader(tmp_path: Path) -> None:
    row = {
        "response": "A. B.",
        "model": "m",
        "prompt_source": "x",
        "claim_list": [["No verifiable claim."], ["B is b."]],
        "all_claims": ["B is b."],
        "claim_verification_result": [
            {
                "claim": "B is b.",
                "search_results": "",
                "verification_result": "Supported.",
                "response": "raw",
            }
        ],
    }
    path = tmp_path / "verification.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "all_claims": [3]}) + "\n")
    with pytest.raises(ImportFailed, match=r"verification.jsonl, line 2, field 'all_claims\[0\]'"):
        load_results(path)
    path.write_text(json.dumps(row) + "\n")
    [result] = load_results(path)
    [claim] = result.claims
    assert (
        claim.claim.sentence_index,
        claim.verdict and claim.verdict.label,
        claim.verdict and claim.verdict.raw_output,
    ) == (1, "supported", "raw")


def test_pipeline_inputs_name_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "inputs.jsonl"
    path.write_text(
        json.dumps({"response": "ok", "model": "m", "prompt_source": "ELI5"})
        + "\n"
        + json.dumps({"model": "m"})
        + "\n"
    )
    with pytest.raises(ImportFailed, match="inputs.jsonl, line 2, field 'response': is missing"):
        read_inputs(path)
    path.write_text(json.dumps({"response": "ok", "model": "m", "prompt_source": "ELI5"}) + "\n")
    [one] = read_inputs(path)
    assert (one.model, one.domain) == ("m", "ELI5")
