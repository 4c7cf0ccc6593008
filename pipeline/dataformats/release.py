"""A released study (annotation/release: the platform's dataset release) read back: its
JSON lines tables, from the release folder or its zip.

The documents come back as `DocRecord`s: their fields from `items`, every claim list
with its claims and verdicts from `metric_outputs` (a list no claim of which is in it,
from `items`), each judged claim's search results from `items`, the segments from
`items`. The systems come back with how they were made (kind, origin, model, prompt
version; mode, templates and label mode in their config). The items, annotations and
gold rows are returned as read, checked for the columns a release has. A document named
only in `metric_outputs` has no text in the release: it is made with an empty response,
with a warning. `study.json` (what the release states of its study: instructions,
design, pay, the card's options, the gold method) is returned as read, a JSON object.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import (
    ClaimRecord,
    DocRecord,
    EvidenceRecord,
    ImportFailed,
    LineError,
    ListRecord,
    SegmentRecord,
)

NAME = "release"
TABLES = ("items", "annotations", "gold", "metric_outputs")
STUDY = "study.json"
REQUIRED = {
    "items": ("item", "kind", "role", "document", "response", "claim_system", "claim_position"),
    "annotations": ("item", "annotator", "unit", "field", "value_as_stored", "presented_swapped"),
    "gold": ("item", "unit", "field", "value_code", "decided_by", "note"),
    "metric_outputs": ("document", "extractor", "claim_position", "claim", "verifier", "verdict"),
}

Row = dict[str, Any]


@dataclass
class ReleaseData:
    documents: list[DocRecord]
    systems: dict[str, dict[str, Any]]  # name -> kind, origin, model, prompt_version, config
    items: list[Row]
    annotations: list[Row]
    gold: list[Row]
    warnings: list[LineError] = field(default_factory=list)
    study: dict[str, Any] | None = None  # study.json, None when the release has none
    study_file: str = STUDY


def _lines(source: Path, table: str) -> Iterator[tuple[str, int, str]]:
    """(file name, line number, text) of a table's JSON lines, in a folder or a zip."""
    name = f"jsonl/{table}.jsonl"
    if source.is_dir():
        path = source / name
        if not path.is_file():
            raise ImportFailed([LineError(str(path), 0, "", "missing: not a release folder")])
        with open(path, encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                yield str(path), number, text
        return
    try:
        z = zipfile.ZipFile(source)
    except (OSError, zipfile.BadZipFile) as e:
        raise ImportFailed([LineError(str(source), 0, "", f"not a release zip ({e})")]) from e
    with z:
        found = [n for n in z.namelist() if n == name or n.endswith("/" + name)]
        if len(found) != 1:
            raise ImportFailed([LineError(str(source), 0, "", f"{name}: not in the zip once")])
        with z.open(found[0]) as raw:
            for number, text in enumerate(io.TextIOWrapper(raw, encoding="utf-8"), 1):
                yield f"{source}:{found[0]}", number, text


def read_table(source: Path, table: str) -> list[Row]:
    rows, errors = [], []
    for file, number, text in _lines(source, table):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as e:
            errors.append(LineError(file, number, "", f"not JSON ({e.msg})"))
            continue
        missing = [c for c in REQUIRED[table] if not isinstance(row, dict) or c not in row]
        if missing:
            errors.append(LineError(file, number, missing[0], "missing (not a release's row)"))
            continue
        rows.append(row)
    if errors:
        raise ImportFailed(errors[:50])
    return rows


def _evidence(value: str | None) -> list[EvidenceRecord]:
    shown = sorted(json.loads(value or "[]"), key=lambda e: e["rank"])
    return [EvidenceRecord(e["title"], e["snippet"], e["link"]) for e in shown]


def _systems(outputs: list[Row]) -> dict[str, dict[str, Any]]:
    """How each system was made, as metric_outputs records it (a run's mode and templates
    kept in the config, where a release reads them again)."""
    systems: dict[str, dict[str, Any]] = {}
    for r in outputs:
        made = {"mode": r.get("mode"), "templates": r.get("templates")}
        systems.setdefault(
            r["extractor"],
            {
                "kind": "extractor",
                "origin": r.get("extractor_origin") or "import:release",
                "model": r.get("extraction_model") or "",
                "prompt_version": r.get("extraction_prompt_version") or "",
                "config": {k: v for k, v in made.items() if v},
            },
        )
        if r["verifier"]:
            config = {**made, "label_mode": r.get("label_mode")}
            systems.setdefault(
                r["verifier"],
                {
                    "kind": r.get("verifier_kind") or "verifier",
                    "origin": r.get("verifier_origin") or "import:release",
                    "model": r.get("verification_model") or "",
                    "prompt_version": r.get("verification_prompt_version") or "",
                    "config": {k: v for k, v in config.items() if v},
                },
            )
    return systems


def _documents(items: list[Row], outputs: list[Row], warnings: list[LineError]) -> list[DocRecord]:
    docs: dict[str, DocRecord] = {}
    for r in items:
        if r["document"] not in docs:
            docs[r["document"]] = DocRecord(
                line=0,
                external_id=r["document"],
                response=r["response"],
                question=r.get("question") or "",
                domain=r.get("domain") or "",
                source_model=r.get("source_model") or "",
            )
    claims: dict[tuple[str, str], dict[int, ClaimRecord]] = {}
    for number, r in enumerate(outputs, 1):
        if r["document"] not in docs:
            warnings.append(
                LineError("metric_outputs", number, "document", f"{r['document']!r}: no text in "
                          "the release (only its claims): made with an empty response")
            )  # fmt: skip
            docs[r["document"]] = DocRecord(line=0, external_id=r["document"], response="")
        listed = claims.setdefault((r["document"], r["extractor"]), {})
        claim = listed.setdefault(r["claim_position"], ClaimRecord(r["claim"]))
        if r["verifier"]:
            claim.verdicts[r["verifier"]] = r["verdict"]
            if r.get("verifier_kind") == "reference":
                docs[r["document"]].verdict_kinds[r["verifier"]] = "reference"
    for (document, system), by_position in claims.items():
        docs[document].lists[system] = ListRecord([by_position[p] for p in sorted(by_position)])
    for r in items:
        doc = docs[r["document"]]
        for side in ("a", "b"):
            if r.get(f"list_{side}_system"):
                doc.lists.setdefault(r[f"list_{side}_system"], ListRecord([]))
        if r["claim_system"] is not None and r.get("evidence"):
            lst = doc.lists[r["claim_system"]].claims
            lst[r["claim_position"]].evidence = _evidence(r["evidence"])
        if r.get("segments") and not doc.segments:
            shown = sorted(json.loads(r["segments"]), key=lambda s: s["position"])
            doc.segments = [SegmentRecord(s["text"]) for s in shown]
    return list(docs.values())


def _member(source: Path, name: str) -> tuple[str, str | None]:
    """(where, text) of a file of the release, None when it has none."""
    if source.is_dir():
        path = source / name
        return str(path), path.read_text(encoding="utf-8") if path.is_file() else None
    with zipfile.ZipFile(source) as z:
        found = [n for n in z.namelist() if n == name or n.endswith("/" + name)]
        if len(found) != 1:
            return f"{source}:{name}", None
        return f"{source}:{found[0]}", z.read(found[0]).decode("utf-8")


def read_study(source: Path) -> tuple[str, dict[str, Any] | None]:
    """study.json (what the release states of its study), None for a release without
    one (built before it was written); ImportFailed when it is not a JSON object."""
    where, text = _member(source, STUDY)
    if text is None:
        return where, None
    try:
        study = json.loads(text)
    except json.JSONDecodeError as e:
        raise ImportFailed([LineError(where, e.lineno, "", f"not JSON ({e.msg})")]) from e
    if not isinstance(study, dict):
        raise ImportFailed([LineError(where, 1, "", "not a JSON object")])
    return where, study


def read(source: Path) -> ReleaseData:
    """A release folder or zip, read whole; ImportFailed names the file and line."""
    items = read_table(source, "items")
    outputs = read_table(source, "metric_outputs")
    warnings: list[LineError] = []
    study_file, study = read_study(source)
    return ReleaseData(
        study=study,
        study_file=study_file,
        documents=_documents(items, outputs, warnings),
        systems=_systems(outputs),
        items=items,
        annotations=read_table(source, "annotations"),
        gold=read_table(source, "gold"),
        warnings=warnings,
    )
