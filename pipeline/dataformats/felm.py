"""FELM (Chen et al., 2023, App. B): one response per line, split into segments, each
labelled true (correct) or false.

Per-domain files: {index, source, prompt, response, segmented_response: [str],
labels: [bool], comment: [str], type?: [str|null], ref?: [str]}, `index` restarting at
"0" in every file; the combined file adds domain and ref_contents. A document's id is
felm:<domain>:<index>, the domain taken from the record, the --domain option, or the
file's name. Oddities of the published files are read as stated, each with a warning.
"""

from __future__ import annotations

import math
from typing import Any

from .common import REFERENCE, SOURCE, DocRecord, Line, SegmentRecord, json_type, label
from .veriscore import stable_id

NAME = "felm"
LABELS = "felm-labels"
KEYS = {
    "index",
    "source",
    "prompt",
    "response",
    "segmented_response",
    "labels",
    "comment",
    "type",
    "ref",
    "domain",
    "ref_contents",
}
KEPT = ("index", "source", "comment", "type", "ref", "ref_contents")


def parse(line: Line) -> DocRecord | None:
    prompt = line.get("prompt", str) or ""
    segments = line.get("segmented_response", list, required=True)
    labels = line.get("labels", list)
    kind = line.obj.get("type")  # some files name the domain here
    domain = (
        line.get("domain", str)
        or (kind if isinstance(kind, str) else "")
        or line.reader.options.get("domain")
        or line.file.rsplit("/", 1)[-1].split(".", 1)[0]
    )
    source: dict[str, Any] = {"format": NAME, "keys": list(line.obj)}
    response = line.obj.get("response")
    if isinstance(response, float) and math.isnan(response) and segments is not None:
        response = " ".join(s for s in segments if isinstance(s, str))
        source["response"] = "NaN"
        line.warn("response", "is NaN: read as the segments joined by a space")
    else:
        response = line.get("response", str, required=True)
    if isinstance(line.obj.get("ref"), str):
        line.warn("ref", "is a string, not a list: read as a one-item list")
    line.get("comment", list)
    records = []
    for i, seg in enumerate(segments or []):
        if not isinstance(seg, str):
            line.error(f"segmented_response[{i}]", f"must be a string, not {json_type(seg)}")
            continue
        if not seg.strip():
            line.warn(
                f"segmented_response[{i}]",
                "is empty: kept with its label, never shown as an annotation unit",
            )
        records.append(SegmentRecord(seg))
    if segments is not None and not segments:
        line.error("segmented_response", "is empty")
    if labels is not None and segments is not None:
        for i, value in enumerate(labels):
            if not isinstance(value, bool):
                line.error(f"labels[{i}]", f"must be true or false, not {json_type(value)}")
        if len(labels) < len(segments):
            line.error("labels", f"has {len(labels)} labels for {len(segments)} segments")
        elif len(labels) > len(segments):
            source["extra_labels"] = labels[len(segments) :]
            line.warn(
                "labels",
                f"has {len(labels)} labels for {len(segments)} segments: the "
                f"extra {len(labels) - len(segments)} are kept in metadata",
            )
    if line.failed:
        return None
    assert response is not None
    for record, value in zip(records, labels or [], strict=False):
        record.verdicts = {LABELS: label(value)}
    index = line.obj.get("index", line.obj.get("id"))
    ext = f"felm:{domain}:{index}" if isinstance(index, (str, int)) else stable_id(prompt, response)
    metadata = line.unknown_keys(KEYS, NAME)
    metadata.update({k: line.obj[k] for k in KEPT if k in line.obj})
    metadata[SOURCE] = source
    model = line.reader.options.get("source_model") or "chatgpt"
    return DocRecord(
        line.line, ext, response, prompt, domain, model, metadata, {}, records, {LABELS: REFERENCE}
    )


def write(record: DocRecord, *, labels: str | None) -> dict[str, Any]:
    """FELM's record of a document's segments, labels from the verdict set `labels`."""
    source = record.source() if record.source().get("format") == NAME else {}
    out: dict[str, Any] = {
        "index": record.external_id.rsplit(":", 1)[-1],
        "source": "",
        "prompt": record.question,
        "response": math.nan if source.get("response") == "NaN" else record.response,
        "segmented_response": [s.text for s in record.segments],
        "domain": record.domain,
    }
    if labels:
        out["labels"] = [_bool(s.verdicts.get(labels)) for s in record.segments]
        out["labels"] += source.get("extra_labels", [])
    out.update(record.extras(NAME))
    keys = source.get("keys")
    if keys is not None:
        # In the published order: PostgreSQL's jsonb keeps no key order of the metadata.
        out = {k: out[k] for k in [*keys, "labels"] if k in out}
    return out


def _bool(value: str | None) -> bool | None:
    return {"true": True, "false": False}.get(value or "")
