"""VeriScore-compatible JSONL in and out.

Output records carry VeriScore's fields (`claim_list` per sentence, `all_claims`,
`claim_search_results`, `claim_verification_result`) so its tools can read them, plus a
`pipeline` field with our full result, so a later stage (or the platform) loses nothing.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pipeline.dataformats import ImportFailed, decode, parse_file, veriscore
from pipeline.dataformats.common import (
    SOURCE,
    ClaimRecord,
    DocRecord,
    EvidenceRecord,
    Line,
    LineError,
    ListRecord,
    Reader,
)
from pipeline.extract import NO_CLAIM
from pipeline.prompts.verification import format_evidence
from pipeline.score import ScoresTable
from pipeline.types import (
    Claim,
    ClaimResult,
    Evidence,
    ResponseInput,
    ResponseResult,
    Verdict,
    result_from_dict,
)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_atomic(path: str | Path, parts: Iterable[str]) -> None:
    """Write to a temporary name beside `path`, then rename it into place: a full disk or
    a killed process leaves the previous file whole, never a file cut off mid-line."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            for part in parts:
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise OSError(
            e.errno, f"could not write {path} ({e.strerror}); it was left as it was"
        ) from e
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    write_atomic(path, (json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def read_inputs(path: str | Path, warnings: list[LineError] | None = None) -> list[ResponseInput]:
    """VeriScore input: {question?, response, model, prompt_source}; `id` if present, else
    the id the platform gives the same record. Read by the platform's reader
    (pipeline.dataformats, format veriscore-input): a bad record raises ImportFailed
    naming its line and field; the reader's warnings (an empty response: read as "")
    are added to `warnings`."""
    text = decode(Path(path).read_bytes(), str(path))
    _, records, found = parse_file(text, file=str(path), fmt=veriscore.INPUT)
    if warnings is not None:
        warnings += found
    return [
        ResponseInput(
            id=r.external_id,
            response=r.response,
            question=r.question or None,
            model=r.source_model,
            domain=r.domain or str(r.metadata.get("domain", "")),
            metadata={k: v for k, v in r.metadata.items() if k not in (SOURCE, "domain")},
        )
        for r in records
    ]


STAGES = ("claims", "evidence", "verification")
VERIFIER_NAME = f"{veriscore.NAME}-verifier"  # names nothing in the file


def veriscore_record(r: ResponseResult, stage: str, evidence_in_prompt: int = 5) -> dict[str, Any]:
    """One record of our `claims`, `evidence` or `verification` file, written by the
    platform's VeriScore writer. A sentence whose call failed has no claim list (null,
    never the placeholder), a failed verification is an `error` verdict, a claim not
    verified has no entry; the record says `incomplete`, `pipeline` keeps the full result."""
    later = STAGES.index(stage)
    keys = ["id", "question", "response", "model", "prompt_source", "abstained"]
    if not r.abstained:
        keys += ["claim_list", "all_claims", "claim_search_results", "claim_verification_result"][
            : 2 + later
        ]
    claims = [
        ClaimRecord(
            c.claim.text,
            c.claim.sentence_index,
            verdicts={VERIFIER_NAME: c.verdict.label} if later == 2 and c.verdict else {},
            evidence=[EvidenceRecord(e.title, e.snippet, e.link) for e in c.evidence]
            if later
            else [],
        )
        for c in r.claims
    ]
    source: dict[str, Any] = {
        "format": veriscore.NAME,
        "keys": keys,
        "claim_list": [None if s.failed else (s.claims or [NO_CLAIM]) for s in r.sentences],
        "verifications": [
            {
                "claim": c.claim.text,
                "search_results": format_evidence(c.evidence[:evidence_in_prompt]),
                "verification_result": c.verdict.label,
                "response": c.verdict.raw_output,
            }
            for c in r.claims
            if later == 2 and c.verdict
        ],
    }
    doc = DocRecord(
        0,
        r.id,
        r.response.strip(),
        (r.question or "").strip(),
        r.domain,
        r.model,
        metadata={
            "prompt_tok_cnt": r.usage.prompt_tokens,
            "response_tok_cnt": r.usage.completion_tokens,
            "incomplete": r.incomplete,
            "pipeline": dataclasses.asdict(r),
            SOURCE: source,
        },
        lists={veriscore.NAME: ListRecord(claims, r.abstained)},
    )
    return veriscore.write(doc, system=veriscore.NAME, verifier=VERIFIER_NAME)


def write_veriscore(
    out: Path, name: str, stage: str, results: list[ResponseResult], evidence_in_prompt: int = 5
) -> None:
    """`{stage}_{name}.jsonl` in `out`, written whole or not at all (write_atomic)."""
    write_jsonl(
        out / f"{stage}_{name}.jsonl",
        (veriscore_record(r, stage, evidence_in_prompt) for r in results),
    )


def load_results(path: str | Path) -> list[ResponseResult]:
    """Results from one of our output files, or from VeriScore's own output files."""
    return [from_record(r, n, str(path)) for n, r in enumerate(read_jsonl(path), start=1)]


def from_record(r: dict[str, Any], n: int = 0, file: str = "record") -> ResponseResult:
    if "pipeline" in r:
        return result_from_dict(r["pipeline"])
    # A file VeriScore wrote: read by the platform's VeriScore reader (ImportFailed names
    # the line and field of a record it cannot use).
    reader = Reader(file)
    doc = veriscore.parse(Line(r, n, reader))
    if doc is None:
        raise ImportFailed(reader.errors)
    [lst] = doc.lists.values()
    claims = []
    for c in lst.claims:
        item = ClaimResult(
            Claim(c.text, -1 if c.sentence_index is None else c.sentence_index, c.sentence),
            [Evidence(i, e.title, e.snippet, e.link) for i, e in enumerate(c.evidence, start=1)],
        )
        for name, label in c.verdicts.items():
            item.verdict = Verdict(label, c.raw_outputs.get(name, ""), True)
        claims.append(item)
    return ResponseResult(
        id=str(r["id"]) if "id" in r else doc.external_id,
        response=doc.response,
        question=doc.question or None,
        model=doc.source_model,
        domain=doc.domain,
        abstained=lst.abstained,
        extractor="imported",
        extraction_model="",
        verification_model="",
        prompt_version="",
        label_mode="",
        retriever="",
        claims=claims,
    )


def scores_json(table: ScoresTable) -> dict[str, Any]:
    return dataclasses.asdict(table)
