"""The format modules alone (no database): readers and writers give records back as
published, and the pipeline reads files through them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline import dataformats
from pipeline.dataformats import (
    ImportFailed,
    factscore,
    iter_records,
    parse_file,
    safe,
    scan_file,
    veriscore,
)
from pipeline.dataformats.common import JsonStream
from pipeline.dataformats.safe import KEY
from pipeline.formats import load_results, read_inputs
from tests.conftest import canonical_line, peer_file

SAFE_FILE = Path(__file__).parents[1] / "annotation" / "data" / "safe" / "safe_results.json"


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


def _records(path: Path) -> tuple[list[Any], list[str]]:
    fmt, count, warnings = scan_file(path, file=path.name)
    records = list(iter_records(path, file=path.name, fmt=fmt))
    assert len(records) == count
    return records, [str(w) for w in warnings]


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 7 characters: every value and string is cut somewhere."""
    monkeypatch.setattr(JsonStream, "CHUNK", 7)


def test_a_json_array_file_is_read_as_a_stream_like_its_jsonl(
    tmp_path: Path, small_chunks: None
) -> None:
    lines = [canonical_line(i, metadata={"n": 12345.5, "ok": True, "s": "é😀"}) for i in range(4)]
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("\n".join(lines) + "\n")
    array = tmp_path / "c.json"
    array.write_text("\ufeff" + json.dumps([json.loads(x) for x in lines], indent=2))
    from_lines, _ = _records(jsonl)
    from_array, warnings = _records(array)
    assert [vars(r) | {"line": 0} for r in from_array] == [
        vars(r) | {"line": 0} for r in from_lines
    ]
    text = array.read_text()
    assert [r.line for r in from_array] == [
        text[: text.index(f'"doc-{i}"')].count("\n") for i in range(4)
    ]  # the line of each record's "{"
    assert warnings == [
        "c.json: the file is a JSON array, not JSON Lines: read as a list of 4 record(s)"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '[\n{"id": 1, "response": "a"},\n{"id": 2, "response": "b"\n]',
            "c.json, line 4: not valid JSON (Expecting ',' delimiter at column 1)",
        ),
        (
            '[\n{"id": 1, "response": "a"}\n{"id": 2}]',
            "c.json, line 3: not valid JSON (expecting ',' or ']', found '{' at column 1)",
        ),
        (
            '[\n{"id": 1, "response": "a"}, 3\n]',
            "c.json, line 2: must be a JSON object, not a number",
        ),
        (
            '[\n{"id": 1, "response": "a"}]\n[]',
            "c.json, line 3: not valid JSON (expecting the end of the file after the array",
        ),
        (
            '[\n{"id": 1, "response": "unterminated\n}]',
            "c.json, line 2: not valid JSON (Invalid control character",
        ),
    ],
)
def test_a_broken_json_array_file_names_the_line(
    tmp_path: Path, small_chunks: None, text: str, expected: str
) -> None:
    path = tmp_path / "c.json"
    path.write_text(text)
    with pytest.raises(ImportFailed) as e:
        scan_file(path, file=path.name)
    assert expected in str(e.value)


def test_a_bad_byte_in_a_json_array_file_names_its_line(tmp_path: Path, small_chunks: None) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(b'[\n{"id": 1, "response": "a"},\n{"id": 2, "response": "\xe9"}\n]')
    with pytest.raises(ImportFailed, match=r"c.json, line 3: is not UTF-8 text \(byte 0xe9\)"):
        scan_file(path, file=path.name)


def test_safe_files_are_read_as_a_stream_with_the_keys_around_the_entries(
    tmp_path: Path, small_chunks: None
) -> None:
    published = json.loads(SAFE_FILE.read_text())
    # the keys beside per_prompt_data, some after it
    reordered = {"prompt_set": published["prompt_set"], KEY: published[KEY]}
    reordered |= {k: v for k, v in published.items() if k not in reordered}
    path = tmp_path / "safe.json"
    path.write_text(json.dumps(reordered, indent=1))
    records, _ = _records(path)
    _, from_text, _ = parse_file(SAFE_FILE.read_text(), file="safe.json")
    assert [r.external_id for r in records] == [r.external_id for r in from_text]
    assert len(records) == 3
    back = safe.write_file(records, system="safe", verifier="safe-rater")
    assert back == published and list(back)[-1] == KEY


def test_plain_claim_lists_read_as_texts_give_the_claims_of_claim_objects() -> None:
    plain = canonical_line(1, claim_lists={"a": ["One.", " Two. "]})
    objects = canonical_line(1, claim_lists={"a": [{"text": "One."}, {"text": " Two. "}]})
    _, [p], _ = parse_file(plain, file="plain.jsonl")
    _, [o], _ = parse_file(objects, file="objects.jsonl")
    assert p.lists["a"].texts == ["One.", " Two. "]
    assert p == o and [c.text for c in p.lists["a"].claims] == ["One.", " Two. "]


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        (["One.", ""], r"line 1, field 'claim_lists\.a\[1\]': is an empty claim"),
        ([" \t", "One."], r"line 1, field 'claim_lists\.a\[0\]': is an empty claim"),
        (["One.", 3], r"field 'claim_lists\.a\[1\]': must be a string or an object"),
        ("One.", r"field 'claim_lists\.a': must be a list of claims, not a string"),
    ],
)
def test_a_claim_list_with_a_blank_or_odd_claim_names_it(claims: object, message: str) -> None:
    with pytest.raises(ImportFailed, match=message):
        parse_file(canonical_line(1, claim_lists={"a": claims}), file="f.jsonl")


def test_duplicate_ids_are_errors_in_the_order_of_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids are looked up a few records at a time (here 3): a duplicate found after later
    lines were read still takes its place among the errors."""
    monkeypatch.setattr(dataformats, "SEEN_BATCH", 3)
    lines = [
        canonical_line(0),
        canonical_line(0),
        '{"id": "x"}',
        canonical_line(4),
        canonical_line(4),
        canonical_line(1),
        '{"id": "y"}',
        canonical_line(8),
    ]
    with pytest.raises(ImportFailed) as e:
        parse_file("\n".join(lines), file="dup.jsonl")
    assert [str(error) for error in e.value.errors] == [
        "dup.jsonl, line 2, field 'id': duplicate id 'doc-0' (first on line 1)",
        "dup.jsonl, line 3, field 'response': is missing",
        "dup.jsonl, line 5, field 'id': duplicate id 'doc-4' (first on line 4)",
        "dup.jsonl, line 7, field 'response': is missing",
    ]
