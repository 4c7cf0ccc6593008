"""SAFE's results (Wei et al., 2024; google-deepmind/long-form-factuality, eval/safe and
eval/run_eval.py): one JSON object {"per_prompt_data": [{prompt, side1_response,
side2_response, side1_posthoc_eval_data, side2_posthoc_eval_data, ...}]}.

Each response is a document (id as VeriScore gives a record without one, so the same
response imported from a VeriScore file is the same document). Its posthoc block
{prompt, response, num_claims, sentences_and_atomic_facts, all_atomic_facts,
checked_statements: [{sentence, atomic_fact, self_contained_atomic_fact, relevance_data,
rate_data, annotation}], revised_fact_jsonified_all, past_steps_jsonified_all:
[{google_searches: [{query, result}]}], Supported, Not Supported, Irrelevant} gives:
the self-contained atomic facts as the claim list of system `safe` (--system), their
annotations as the verdicts of `safe-rater` (--verifier), the searches of each fact as
its evidence (title = query, snippet = result, no link). The rest of the block is kept
and written back by `write_file`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .common import (
    SOURCE,
    ClaimRecord,
    DocRecord,
    EvidenceRecord,
    JsonStream,
    Line,
    LineError,
    ListRecord,
    Reader,
    json_type,
    label,
)
from .veriscore import stable_id

NAME = "safe"
KEY = "per_prompt_data"
ROW = "__safe__"  # row key: {"entry": index in per_prompt_data, "side": "side1" | "side2"}
SIDES = ("side1", "side2")
ANNOTATIONS = ("Supported", "Not Supported", "Irrelevant")
SPELLING = {label(a): a for a in ANNOTATIONS}  # our label -> SAFE's spelling


def is_safe(text: str) -> bool:
    """A file holding one JSON object with per_prompt_data (any layout, any indent)."""
    head = text.lstrip()[:1]
    return head == "{" and f'"{KEY}"' in text and "\n{" not in text.strip()


def read_rows(source: str | Path, reader: Reader) -> Iterator[tuple[int, dict[str, Any]]]:
    """One row per (entry, side) holding a response, numbered by the line its entry starts
    on. The file (its text, or its path) is read as a stream, one entry at a time; the keys
    beside per_prompt_data go with the rows of the last entry."""
    f = io.BytesIO(source.encode()) if isinstance(source, str) else open(source, "rb")
    top: dict[str, Any] = {}
    found, pending = False, None
    with f:
        stream = JsonStream(f, reader.file)
        try:
            if not stream.take("{"):
                raise stream.fail("'{'")
            while not stream.take("}"):
                if top or found:
                    if not stream.take(","):
                        raise stream.fail("',' or '}'")
                line, key = stream.value()
                if not stream.take(":"):
                    raise stream.fail("':'")
                if key != KEY:
                    top[str(key)] = stream.value()[1]
                    continue
                found = True
                if stream.peek() != "[":
                    reader.errors.append(
                        LineError(reader.file, line, KEY, "must be a list of prompts")
                    )
                    return
                for i, (number, entry) in enumerate(stream.array()):
                    if pending:
                        yield from _sides(*pending, None, reader)
                    pending = (i, number, entry)
            if stream.peek():
                raise stream.fail("the end of the file")
        except ValueError as e:
            line, message = e.args
            reader.errors.append(LineError(reader.file, line, "", message))
            return
    if not found:
        reader.errors.append(LineError(reader.file, 1, KEY, "must be a list of prompts"))
    elif pending:
        yield from _sides(*pending, top, reader)


def _sides(
    i: int, line: int, entry: Any, top: dict[str, Any] | None, reader: Reader
) -> Iterator[tuple[int, dict[str, Any]]]:
    if not isinstance(entry, dict):
        reader.errors.append(
            LineError(
                reader.file, line, f"{KEY}[{i}]", f"must be an object, not {json_type(entry)}"
            )
        )
        return
    for side in SIDES:
        if entry.get(f"{side}_response") is not None or entry.get(f"{side}_posthoc_eval_data"):
            yield line, {ROW: {"entry": i, "side": side, "top": top}, **entry}


def parse(line: Line) -> DocRecord | None:
    row = line.obj.get(ROW)
    if not isinstance(row, dict):
        line.error("", f"is not SAFE's results: a SAFE file is one JSON object with {KEY}")
        return None
    side = row["side"]
    prompt = line.get("prompt", str) or ""
    block = line.get(f"{side}_posthoc_eval_data", dict) or {}
    response = line.get(f"{side}_response", str)
    if response is None:
        response = block.get("response") if isinstance(block.get("response"), str) else None
    if not response or not response.strip():
        line.error(f"{side}_response", "is missing or empty")
        return None
    system = line.reader.options.get("system") or NAME
    verifier = line.reader.options.get("verifier") or f"{system}-rater"
    statements = block.get("checked_statements", [])
    steps = block.get("past_steps_jsonified_all", [])
    where = f"{side}_posthoc_eval_data"
    if not isinstance(statements, list) or not isinstance(steps, list):
        line.error(where, "checked_statements and past_steps_jsonified_all must be lists")
        return None
    claims, kept_statements, kept_steps = [], [], []
    for i, st in enumerate(statements):
        at = f"{where}.checked_statements[{i}]"
        if not isinstance(st, dict):
            line.error(at, f"must be an object, not {json_type(st)}")
            continue
        fact = st.get("self_contained_atomic_fact")
        if not isinstance(fact, str) or not fact.strip():
            line.error(f"{at}.self_contained_atomic_fact", "must be a non-empty string")
            continue
        annotation = st.get("annotation")
        if annotation is not None and annotation not in ANNOTATIONS:
            line.error(
                f"{at}.annotation", f"must be one of {', '.join(ANNOTATIONS)}, not {annotation!r}"
            )
            continue
        sentence = s if isinstance(s := st.get("sentence"), str) else ""
        step = steps[i] if i < len(steps) else None
        evidence = []
        searches = step.get("google_searches") if isinstance(step, dict) else None
        for k, s in enumerate(searches or []):
            if not isinstance(s, dict) or not all(
                isinstance(s.get(x, ""), str) for x in ("query", "result")
            ):
                line.error(
                    f"{where}.past_steps_jsonified_all[{i}].google_searches[{k}]",
                    "must be an object with query and result strings",
                )
                continue
            evidence.append(EvidenceRecord(s.get("query", ""), s.get("result", ""), ""))
        verdicts = {verifier: label(annotation)} if annotation else {}
        claims.append(ClaimRecord(fact, None, sentence, verdicts, evidence))
        kept_statements.append(
            {k: v for k, v in st.items() if k not in ("self_contained_atomic_fact", "annotation")}
            | {"keys": list(st)}
        )
    for step in steps:
        kept_steps.append(
            {k: v for k, v in step.items() if k != "google_searches"} | {"keys": list(step)}
            if isinstance(step, dict)
            else step
        )
    if line.failed:
        return None
    rest = {
        k: v
        for k, v in block.items()
        if k not in ("checked_statements", "past_steps_jsonified_all")
    }
    entry = {k: v for k, v in line.obj.items() if k != ROW and not k.startswith(SIDES)}
    source = {
        "format": NAME,
        NAME: {
            "entry": row["entry"],
            "side": side,
            "top": row["top"],
            "keys": [k for k in line.obj if k != ROW],
            "entry_fields": {k: v for k, v in entry.items() if k != "prompt"},
            "side_fields": {
                k: v
                for k, v in line.obj.items()
                if k.startswith(side) and k not in (f"{side}_response", where)
            },
            "block": rest,
            "block_keys": list(block),
            "statements": kept_statements,
            "steps": kept_steps,
            "has_response": f"{side}_response" in line.obj,
        },
    }
    model = line.reader.options.get("source_model", "")
    return DocRecord(
        line.line,
        stable_id(prompt, response, model),
        response,
        prompt,
        "",
        model,
        {SOURCE: source},
        {system: ListRecord(claims)},
    )


def write_file(records: list[DocRecord], *, system: str, verifier: str) -> dict[str, Any]:
    """SAFE's results file for documents read from one (others get a fresh entry each)."""
    entries: dict[Any, dict[str, Any]] = {}
    top: dict[str, Any] = {}
    for r in records:
        kept = r.source().get(NAME) or {}
        side = kept.get("side", "side1")
        key = kept.get("entry", ("new", r.external_id))
        top = top or kept.get("top") or {}
        entry = entries.setdefault(key, {"prompt": r.question, **kept.get("entry_fields", {})})
        entry["_keys"] = kept.get("keys")
        entry.update(kept.get("side_fields", {}))
        if kept.get("has_response", True):
            entry[f"{side}_response"] = r.response
        lst = r.lists.get(system)
        statements, steps = [], []
        for i, c in enumerate(lst.claims if lst else []):
            st_kept = (
                dict(kept["statements"][i])
                if i < len(kept.get("statements", []))
                else {"sentence": c.sentence}
            )
            keys = st_kept.pop("keys", None) or [
                *st_kept,
                "self_contained_atomic_fact",
                "annotation",
            ]
            value = c.verdicts.get(verifier) if verifier else None
            st = {
                **st_kept,
                "self_contained_atomic_fact": c.text,
                "annotation": SPELLING.get(value, value) if value is not None else None,
            }
            statements.append({k: st[k] for k in keys if k in st})
        for i, step in enumerate(kept.get("steps", [])):
            if not isinstance(step, dict):
                steps.append(step)
                continue
            step = dict(step)
            keys = step.pop("keys")
            claim = lst.claims[i] if lst and i < len(lst.claims) else None
            step["google_searches"] = [
                {"query": e.title, "result": e.snippet} for e in (claim.evidence if claim else [])
            ]
            steps.append({k: step[k] for k in keys if k in step})
        block = {
            **kept.get("block", {"prompt": r.question, "response": r.response}),
            "checked_statements": statements,
            "past_steps_jsonified_all": steps,
        }
        block_keys = kept.get("block_keys") or list(block)
        entry[f"{side}_posthoc_eval_data"] = {k: block[k] for k in block_keys if k in block}
    out = []
    for entry in entries.values():
        keys = entry.pop("_keys", None)
        out.append({k: entry[k] for k in keys if k in entry} if keys else entry)
    return {**{k: v for k, v in top.items()}, KEY: out}
