"""The platform's own JSONL: one document per line with any number of claim lists.

{"id", "response", "question"?, "domain"?, "source_model"?, "metadata"?: {...},
 "claim_lists"?: {system: [claim text | {text, sentence_index?, sentence?, evidence?, verdicts?}]},
 "abstained"?: [system], "segments"?: [text | {text, labels?: {system: label}}],
 "knowledge"?: [{text, title?, url?}]}

The response may be empty only when every claim list is abstained (a model that
declined to answer, as FActScore's files have it).

`knowledge` holds the passages atomic facts are judged against; it is stored in the
document's metadata under "knowledge" and written back as the top-level key.
"""

from __future__ import annotations

from typing import Any

from .common import (
    REFERENCE,
    VERIFIER,
    ClaimRecord,
    DocRecord,
    EvidenceRecord,
    Line,
    ListRecord,
    SegmentRecord,
    json_type,
    label,
)

NAME = "canonical"
KEYS = {
    "id",
    "question",
    "response",
    "domain",
    "source_model",
    "metadata",
    "claim_lists",
    "abstained",
    "segments",
    "verdict_kinds",
    "knowledge",
}
KINDS = (REFERENCE, VERIFIER)


def parse(line: Line) -> DocRecord | None:
    ext = line.get("id", (str, int), required=True)
    if line.obj.get("response") is None:
        line.error("response", "is missing")
    response = line.get("response", str)  # may be empty: see _abstention below
    question = line.get("question", str) or ""
    domain = line.get("domain", str) or ""
    model = line.get("source_model", str) or line.reader.options.get("source_model", "")
    metadata = dict(line.get("metadata", dict) or {})
    metadata.update(line.unknown_keys(KEYS, NAME))
    knowledge = line.get("knowledge", list)
    if knowledge is not None:
        for i, p in enumerate(knowledge):
            if not (
                isinstance(p, dict)
                and isinstance(p.get("text"), str)
                and p["text"].strip()
                and all(isinstance(p.get(k, ""), str) for k in ("title", "url"))
            ):
                line.error(
                    f"knowledge[{i}]",
                    "must be an object with a non-empty 'text' string "
                    "and optional 'title' and 'url' strings",
                )
        if "knowledge" in metadata:
            line.error("knowledge", "is given twice (also as metadata.knowledge)")
        metadata["knowledge"] = knowledge
    lists_obj = line.get("claim_lists", dict) or {}
    abstained = line.get("abstained", list) or []
    for i, name in enumerate(abstained):
        if not isinstance(name, str):
            line.error(f"abstained[{i}]", f"must be a system name, not {json_type(name)}")
    lists = {}
    for name, value in lists_obj.items():
        if not name.strip():
            line.error("claim_lists", "a system name is empty")
            continue
        if _plain_texts(value):  # the bulk of large files: kept as texts
            lists[name] = ListRecord(texts=value, abstained=name in abstained)
            continue
        claims = claims_field(line, f"claim_lists.{name}", value)
        if claims is not None:
            lists[name] = ListRecord(claims=claims, abstained=name in abstained)
    if response is not None and not response.strip() and not _abstention(lists):
        line.error(
            "response",
            "is empty (an empty response is kept only when every claim list of the record "
            "is abstained: name them in 'abstained')",
        )
    segments = []
    for i, seg in enumerate(line.get("segments", list) or []):
        where = f"segments[{i}]"
        if isinstance(seg, dict) and isinstance(seg.get("text"), str):
            verdicts = verdicts_field(line, f"{where}.labels", seg.get("labels"))
            if verdicts is not None:
                segments.append(SegmentRecord(seg["text"], verdicts))
        elif isinstance(seg, str):
            segments.append(SegmentRecord(seg))
        else:
            line.error(where, "must be a string or an object with a 'text' string")
            continue
        if not segments[-1].text.strip():
            line.warn(where, "is an empty segment: kept, never shown as an annotation unit")
    kinds = line.get("verdict_kinds", dict) or {}
    for name, kind in kinds.items():
        if kind not in KINDS:
            line.error(f"verdict_kinds.{name}", f"must be one of {', '.join(KINDS)}, not {kind!r}")
    if line.failed:
        return None
    return DocRecord(
        line.line, str(ext), response, question, domain, model, metadata, lists, segments, kinds
    )


def _abstention(lists: dict[str, ListRecord]) -> bool:
    """The model abstained (FActScore's empty outputs): lists, all abstained and empty."""
    return bool(lists) and all(lst.abstained and not lst.claims for lst in lists.values())


def _plain_texts(value: Any) -> bool:
    """A non-empty list of claim texts, none blank (checked without a Python call per claim)."""
    return (
        type(value) is list
        and set(map(type, value)) == {str}
        and all(value)
        and not any(map(str.isspace, value))
    )


def claims_field(line: Line, name: str, value: Any) -> list[ClaimRecord] | None:
    if not isinstance(value, list):
        line.error(name, f"must be a list of claims, not {json_type(value)}")
        return None
    claims = []
    for i, c in enumerate(value):
        where = f"{name}[{i}]"
        if isinstance(c, str):
            record = ClaimRecord(c)
        elif isinstance(c, dict) and isinstance(c.get("text"), str):
            index = c.get("sentence_index")
            if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
                line.error(f"{where}.sentence_index", "must be an integer")
                return None
            sentence = c.get("sentence", "")
            if not isinstance(sentence, str):
                line.error(f"{where}.sentence", f"must be a string, not {json_type(sentence)}")
                return None
            evidence = evidence_field(line, f"{where}.evidence", c.get("evidence"))
            verdicts = verdicts_field(line, f"{where}.verdicts", c.get("verdicts"))
            if evidence is None or verdicts is None:
                return None
            record = ClaimRecord(c["text"], index, sentence, verdicts, evidence)
        else:
            line.error(where, "must be a string or an object with a 'text' string")
            return None
        if not record.text.strip():
            line.error(where, "is an empty claim")
            return None
        claims.append(record)
    return claims


def evidence_field(line: Line, name: str, value: Any) -> list[EvidenceRecord] | None:
    """Search results as [{title, snippet, link}] (Serper's organic results, VeriScore's files)."""
    if value is None:
        return []
    if not isinstance(value, list):
        line.error(name, f"must be a list of search results, not {json_type(value)}")
        return None
    results = []
    for i, r in enumerate(value):
        if isinstance(r, str):  # older files keep only the snippet
            results.append(EvidenceRecord("", r, ""))
            continue
        if not isinstance(r, dict):
            line.error(
                f"{name}[{i}]",
                f"must be an object with title, snippet and link, not {json_type(r)}",
            )
            return None
        for key in ("title", "snippet", "link"):
            if not isinstance(r.get(key, ""), str):
                line.error(f"{name}[{i}].{key}", f"must be a string, not {json_type(r[key])}")
                return None
        link = r.get("link", "")
        if link and not link.startswith(("http://", "https://")):
            line.error(f"{name}[{i}].link", f"must be an http(s) URL, not {link[:60]!r}")
            return None
        results.append(EvidenceRecord(r.get("title", ""), r.get("snippet", ""), link))
    return results


def verdicts_field(line: Line, name: str, value: Any) -> dict[str, str] | None:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k.strip() and isinstance(v, (str, bool)) for k, v in value.items()
    ):
        line.error(name, "must be an object mapping system names to labels")
        return None
    # Labels are kept as written (reports read every spelling); booleans become true/false.
    return {k.strip(): label(v) if isinstance(v, bool) else v for k, v in value.items()}


def write(record: DocRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"id": record.external_id, "response": record.response}
    for key, value in (
        ("question", record.question),
        ("domain", record.domain),
        ("source_model", record.source_model),
    ):
        if value:
            out[key] = value
    metadata = dict(record.metadata)
    knowledge = metadata.pop("knowledge", None)
    if metadata:
        out["metadata"] = metadata
    if knowledge is not None:
        out["knowledge"] = knowledge
    if record.lists:
        out["claim_lists"] = {
            name: [_claim(c) for c in lst.claims] for name, lst in record.lists.items()
        }
        abstained = [name for name, lst in record.lists.items() if lst.abstained]
        if abstained:
            out["abstained"] = abstained
    if record.segments:
        out["segments"] = [
            {"text": s.text, "labels": s.verdicts} if s.verdicts else s.text
            for s in record.segments
        ]
    references = {n: k for n, k in record.verdict_kinds.items() if k == REFERENCE}
    if references:
        out["verdict_kinds"] = references
    return out


def _claim(c: ClaimRecord) -> str | dict[str, Any]:
    out: dict[str, Any] = {"text": c.text}
    if c.sentence_index is not None:
        out["sentence_index"] = c.sentence_index
    if c.sentence:
        out["sentence"] = c.sentence
    if c.evidence:
        out["evidence"] = [
            {"title": e.title, "snippet": e.snippet, "link": e.link} for e in c.evidence
        ]
    if c.verdicts:
        out["verdicts"] = c.verdicts
    return out if len(out) > 1 else c.text
