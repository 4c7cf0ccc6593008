"""VeriScore's JSONL (Song et al., 2024): its input, and its claims, evidence and
verification outputs (with the older key names all_claim_lst and claim_snippets_dict).

Input: {question?, response, model, prompt_source}. Outputs add abstained, claim_list
(claims per sentence, "No verifiable claim." for a sentence without any),
all_claims, claim_search_results ({claim: [{title, snippet, link}]}) and
claim_verification_result ([{claim, search_results, verification_result}]).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from .canonical import evidence_field
from .common import SOURCE, ClaimRecord, DocRecord, Line, ListRecord, json_type, label

NAME = "veriscore"
INPUT = "veriscore-input"
NO_CLAIM = "No verifiable claim."
INPUT_KEYS = {"id", "question", "response", "model", "prompt_source"}
OUTPUT_KEYS = {
    "abstained",
    "claim_list",
    "all_claims",
    "all_claim_lst",
    "claim_search_results",
    "claim_snippets_dict",
    "claim_verification_result",
}
# Written by VeriScore or by our pipeline; kept in metadata without a warning.
KEPT_KEYS = {"prompt_tok_cnt", "response_tok_cnt", "incomplete", "pipeline"}


def stable_id(*parts: str) -> str:
    """A lone surrogate passes (the record's check names it); other texts are UTF-8."""
    text = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return "sha1:" + hashlib.sha1(text).hexdigest()[:16]


EMPTY_RESPONSE = (
    "is {what}: read as an empty response, which a pipeline run abstains (the reference "
    "mode scores it as the released VeriScore does: no claim)"
)


def _empty(value: Any) -> str:
    """What an unusable but harmless response is ("" when it is not one): empty or only
    whitespace, null, or NaN (pandas writes a missing text as NaN)."""
    if value is None:
        return "null"
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, str) and not value.strip():
        return "empty" if not value else "only whitespace"
    return ""


def _response(line: Line) -> str | None:
    """The response; one rule for every surface (the CLI, import_data, the upload page):
    empty, whitespace-only, null or NaN is read as an empty response ("", or the
    whitespace as it is: the released code splits it) with a warning naming the line; a
    missing key, a number, a list or an object is an error."""
    what = _empty(line.obj.get("response", 0))
    if not what:
        response: str | None = line.get("response", str, required=True)
        return response
    line.warn("response", EMPTY_RESPONSE.format(what=what))
    return str(line.obj["response"]) if what == "only whitespace" else ""


def _document(line: Line, fmt: str, known: set[str]) -> DocRecord | None:
    response = _response(line)
    question = line.get("question", str) or ""
    model = line.get("model", str) or line.reader.options.get("source_model", "")
    domain = line.get("prompt_source", str) or ""
    ext = line.get("id", (str, int))
    metadata = line.unknown_keys(known | KEPT_KEYS, fmt)
    metadata.update({k: v for k, v in line.obj.items() if k in KEPT_KEYS})  # in their order
    metadata[SOURCE] = {"format": fmt, "keys": list(line.obj)}
    if response is None:
        return None
    ext = str(ext) if ext is not None else stable_id(question, response, model)
    return DocRecord(line.line, ext, response, question, domain, model, metadata)


def parse_input(line: Line) -> DocRecord | None:
    record = _document(line, INPUT, INPUT_KEYS)
    return None if line.failed else record


def parse(line: Line) -> DocRecord | None:
    record = _document(line, NAME, INPUT_KEYS | OUTPUT_KEYS)
    system = line.reader.options.get("system") or NAME
    verifier = line.reader.options.get("verifier") or f"{system}-verifier"
    abstained = line.get("abstained", bool) or False
    per_sentence = line.get("claim_list", list)
    key = "all_claims" if "all_claims" in line.obj else "all_claim_lst"
    all_claims = line.get(key, list)
    sentence_of: dict[str, int] = {}  # the first sentence that produced each claim
    flattened: list[str] = []
    for i, sentence_claims in enumerate(per_sentence or []):
        if sentence_claims is None:
            continue
        if not isinstance(sentence_claims, list):
            line.error(f"claim_list[{i}]", "must be a list of claims or null")
            continue
        for j, c in enumerate(sentence_claims):
            if c is None:
                continue
            if not isinstance(c, str):
                line.error(f"claim_list[{i}][{j}]", f"must be a string, not {json_type(c)}")
                continue
            if c.strip() and c.strip() != NO_CLAIM:
                sentence_of.setdefault(c, i)
                flattened.append(c)
    evidence_key = (
        "claim_search_results" if "claim_search_results" in line.obj else "claim_snippets_dict"
    )
    search_results = line.get(evidence_key, dict) or {}
    verifications = line.get("claim_verification_result", list) or []
    if all_claims is None and per_sentence is None and not search_results and not abstained:
        line.error("all_claims", "is missing (expected all_claims, all_claim_lst or claim_list)")
    if all_claims is None:
        all_claims = list(dict.fromkeys(flattened or list(search_results)))
    claims = []
    for i, c in enumerate(all_claims):
        if not isinstance(c, str):
            line.error(f"{key}[{i}]", f"must be a string, not {json_type(c)}")
        elif c.strip() and c.strip() != NO_CLAIM:
            claims.append(ClaimRecord(text=c, sentence_index=sentence_of.get(c)))
    by_text = {c.text: c for c in claims}
    other_results = {}
    for claim_text, results in search_results.items():
        evidence = evidence_field(line, f"{evidence_key}[{claim_text[:40]!r}]", results)
        if evidence is None:
            continue
        if claim_text in by_text:
            by_text[claim_text].evidence = evidence
        else:
            other_results[claim_text] = results
    kept_verifications = []
    for i, v in enumerate(verifications):
        if (
            not isinstance(v, dict)
            or not isinstance(v.get("claim"), str)
            or not isinstance(v.get("verification_result"), str)
        ):
            line.error(
                f"claim_verification_result[{i}]",
                "must be an object with 'claim' and 'verification_result' strings",
            )
            continue
        target = by_text.get(v["claim"])
        if target is None:
            line.error(f"claim_verification_result[{i}].claim", "is not one of the record's claims")
            continue
        target.verdicts[verifier] = label(v["verification_result"])
        if isinstance(v.get("response"), str):  # the verifier's raw answer (our pipeline's files)
            target.raw_outputs[verifier] = v["response"]
        kept_verifications.append(v)
    if line.failed or record is None:
        return None
    source = record.metadata[SOURCE]
    if per_sentence is not None:
        source["claim_list"] = per_sentence
    if [c.text for c in claims] != all_claims:
        source["all_claims"] = all_claims
    if other_results:
        source["other_search_results"] = other_results
    if kept_verifications:
        source["verifications"] = kept_verifications
    record.lists = {system: ListRecord(claims=claims, abstained=abstained)}
    return record


def write_input(record: DocRecord) -> dict[str, Any]:
    out = {
        "id": record.external_id,
        "question": record.question,
        "response": record.response,
        "model": record.source_model,
        "prompt_source": record.domain,
    }
    return _as_published(record, INPUT, out)


def _as_published(
    record: DocRecord, fmt: str, out: dict[str, Any], always: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Keep the keys the source record had (all when it came from elsewhere), add its kept
    metadata keys back."""
    keys = record.source().get("keys") if record.source().get("format") == fmt else None
    if keys is not None:
        out = {k: v for k, v in out.items() if k in keys or k in always}
    return {**out, **record.extras(fmt)}


def write(record: DocRecord, *, system: str, verifier: str | None) -> dict[str, Any]:
    """One VeriScore record from the named claim list and verifier of a document."""
    source = record.source() if record.source().get("format") == NAME else {}
    lst = record.lists[system]
    claims = lst.claims
    texts = [c.text for c in claims]
    n_sentences = (
        max((c.sentence_index for c in claims if c.sentence_index is not None), default=-1) + 1
    )
    per_sentence: list[list[str]] = [[] for _ in range(n_sentences)]
    for c in claims:
        if c.sentence_index is not None:
            per_sentence[c.sentence_index].append(c.text)
    keys = source.get("keys", [])
    claims_key = "all_claim_lst" if "all_claim_lst" in keys else "all_claims"
    evidence_key = (
        "claim_snippets_dict" if "claim_snippets_dict" in keys else "claim_search_results"
    )
    out: dict[str, Any] = {
        "id": record.external_id,
        "question": record.question,
        "response": record.response,
        "model": record.source_model,
        "prompt_source": record.domain,
        "abstained": lst.abstained,
        "claim_list": source.get(
            "claim_list", [s or [NO_CLAIM] for s in per_sentence] if n_sentences else [texts]
        ),
        claims_key: source.get("all_claims", texts),
    }
    always = []
    search = {
        c.text: [{"title": e.title, "snippet": e.snippet, "link": e.link} for e in c.evidence]
        for c in claims
    }
    if any(search.values()) or evidence_key in keys:
        out[evidence_key] = {**search, **source.get("other_search_results", {})}
        always.append(evidence_key)
    verdicts = {c.text: c.verdicts[verifier] for c in claims if verifier and verifier in c.verdicts}
    if verdicts or "claim_verification_result" in keys:
        out["claim_verification_result"] = _verifications(
            claims, verdicts, source.get("verifications", [])
        )
        always.append("claim_verification_result")
    return _as_published(record, NAME, out, tuple(always))


def _verifications(
    claims: list[ClaimRecord], verdicts: dict[str, str], published: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The published entries (their search_results text and spelling of the label) for
    the claims they name, in their order; entries written from our data for the rest."""
    out, done = [], set()
    for v in published:
        claim = v["claim"]
        if claim in verdicts:
            same = label(v["verification_result"]) == verdicts[claim]
            out.append(
                {**v, "verification_result": v["verification_result"] if same else verdicts[claim]}
            )
            done.add(claim)
    for c in claims:
        if c.text in verdicts and c.text not in done:
            done.add(c.text)
            out.append(
                {
                    "claim": c.text,
                    "search_results": "\n\n".join(
                        f"Title: {e.title}\nContent: {e.snippet}" for e in c.evidence
                    ),
                    "verification_result": verdicts[c.text],
                }
            )
    return out
