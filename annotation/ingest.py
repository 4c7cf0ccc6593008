"""Outside data -> models: the one place where files and pipeline results meet Django.

Every import is validated whole before anything is written, and written in one
transaction: a file with one bad line imports nothing, and each error names the
file, the line, the field and what is wrong.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from pipeline.types import ERROR, ResponseResult

from .models import Claim, ClaimList, Document, Evidence, Project, Segment, System, Verdict

NO_CLAIM = "No verifiable claim."
FORMATS = ("canonical", "veriscore", "factscore", "felm")
MAX_EVIDENCE = 10
MAX_ERRORS = 50


@dataclass(frozen=True)
class LineError:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}, line {self.line}"
        return f"{where}, field '{self.field}': {self.message}" if self.field else f"{where}: {self.message}"


class ImportFailed(Exception):
    def __init__(self, errors: list[LineError]):
        self.errors = errors
        more = "" if len(errors) < MAX_ERRORS else f" (stopped after {MAX_ERRORS} errors)"
        super().__init__(f"{len(errors)} error(s){more}, nothing was imported:\n" + "\n".join(map(str, errors)))


@dataclass
class EvidenceRecord:
    title: str
    snippet: str
    link: str


@dataclass
class ClaimRecord:
    text: str
    sentence_index: int | None = None
    sentence: str = ""
    # system name -> label, e.g. FActScore's human S/NS/IR labels
    verdicts: dict[str, str] = field(default_factory=dict)
    evidence: list[EvidenceRecord] = field(default_factory=list)


@dataclass
class SegmentRecord:
    text: str
    verdicts: dict[str, str] = field(default_factory=dict)


@dataclass
class ListRecord:
    claims: list[ClaimRecord]
    abstained: bool = False


@dataclass
class DocRecord:
    line: int
    external_id: str
    response: str
    question: str = ""
    domain: str = ""
    source_model: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    lists: dict[str, ListRecord] = field(default_factory=dict)
    segments: list[SegmentRecord] = field(default_factory=list)
    # kind of each verdict system named in this record (default: verifier)
    verdict_kinds: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SystemSpec:
    name: str
    kind: str
    origin: str


@dataclass
class ImportSummary:
    format: str
    documents_created: int = 0
    documents_existing: int = 0
    claim_lists_created: int = 0
    claim_lists_existing: int = 0
    claims_created: int = 0
    evidence_created: int = 0
    segments_created: int = 0
    verdicts_created: int = 0

    def __str__(self) -> str:
        return (
            f"{self.format}: {self.documents_created} new document(s), "
            f"{self.documents_existing} already present; {self.claim_lists_created} new claim "
            f"list(s) ({self.claims_created} claims), {self.claim_lists_existing} already present; "
            f"{self.evidence_created} search result(s), {self.segments_created} segment(s), "
            f"{self.verdicts_created} label(s)"
        )


class _Line:
    """Typed access to one JSON object, turning every problem into a LineError."""

    def __init__(self, obj: dict[str, Any], file: str, line: int, errors: list[LineError]):
        self.obj, self.file, self.line, self.errors = obj, file, line, errors

    def error(self, field_name: str, message: str) -> None:
        self.errors.append(LineError(self.file, self.line, field_name, message))

    def get(self, name: str, types: type | tuple[type, ...], *, required: bool = False) -> Any:
        if name not in self.obj or self.obj[name] is None:
            if required:
                self.error(name, "is missing")
            return None
        value = self.obj[name]
        if not isinstance(value, types) or isinstance(value, bool) and bool not in _tuple(types):
            self.error(name, f"must be {_type_names(types)}, not {_json_type(value)}")
            return None
        if required and isinstance(value, str) and not value.strip():
            self.error(name, "is empty")
            return None
        return value


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def _type_names(types: type | tuple[type, ...]) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true or false",
             int: "an integer", float: "a number"}
    return " or ".join(names.get(t, t.__name__) for t in _tuple(types))


def read_jsonl(text: str, file: str, errors: list[LineError]) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            errors.append(LineError(file, number, "", f"not valid JSON ({e.msg} at column {e.colno})"))
            continue
        if not isinstance(obj, dict):
            errors.append(LineError(file, number, "", f"must be a JSON object, not {_json_type(obj)}"))
            continue
        rows.append((number, obj))
    if not rows and not errors:
        errors.append(LineError(file, 0, "", "the file holds no records"))
    return rows


def detect_format(rows: list[tuple[int, dict[str, Any]]]) -> str:
    keys = set(rows[0][1]) if rows else set()
    if "claim_lists" in keys:
        return "canonical"
    if "annotations" in keys and "output" in keys:
        return "factscore"
    if "segmented_response" in keys:
        return "felm"
    if keys & {"all_claims", "all_claim_lst", "claim_list", "claim_search_results",
               "claim_snippets_dict", "claim_verification_result"}:
        return "veriscore"
    return "canonical"


# --- parsers: JSON object -> DocRecord -----------------------------------------------


def _claims_field(line: _Line, name: str, value: Any) -> list[ClaimRecord] | None:
    if not isinstance(value, list):
        line.error(name, f"must be a list of claims, not {_json_type(value)}")
        return None
    claims = []
    for i, c in enumerate(value):
        where = f"{name}[{i}]"
        if isinstance(c, str):
            text, sentence_index = c, None
        elif isinstance(c, dict) and isinstance(c.get("text"), str):
            text, sentence_index = c["text"], c.get("sentence_index")
            if sentence_index is not None and (
                not isinstance(sentence_index, int) or isinstance(sentence_index, bool)
            ):
                line.error(f"{where}.sentence_index", "must be an integer")
                return None
        else:
            line.error(where, "must be a string or an object with a 'text' string")
            return None
        if not text.strip():
            line.error(where, "is an empty claim")
            return None
        record = ClaimRecord(text=text.strip(), sentence_index=sentence_index)
        if isinstance(c, dict):
            evidence = _evidence_field(line, f"{where}.evidence", c.get("evidence"))
            verdicts = _verdicts_field(line, f"{where}.verdicts", c.get("verdicts"))
            if evidence is None or verdicts is None:
                return None
            record.evidence, record.verdicts = evidence, verdicts
        claims.append(record)
    return claims


def _evidence_field(line: _Line, name: str, value: Any) -> list[EvidenceRecord] | None:
    """Search results as [{title, snippet, link}] (Serper's organic results, VeriScore's files)."""
    if value is None:
        return []
    if not isinstance(value, list):
        line.error(name, f"must be a list of search results, not {_json_type(value)}")
        return None
    results = []
    for i, r in enumerate(value):
        if isinstance(r, str):  # older files keep only the snippet
            results.append(EvidenceRecord("", r, ""))
            continue
        if not isinstance(r, dict):
            line.error(f"{name}[{i}]", f"must be an object with title, snippet and link, not {_json_type(r)}")
            return None
        for key in ("title", "snippet", "link"):
            if not isinstance(r.get(key, ""), str):
                line.error(f"{name}[{i}].{key}", f"must be a string, not {_json_type(r[key])}")
                return None
        link = r.get("link", "").strip()
        if link and not link.startswith(("http://", "https://")):
            line.error(f"{name}[{i}].link", f"must be an http(s) URL, not {link[:60]!r}")
            return None
        results.append(EvidenceRecord(r.get("title", "").strip(), r.get("snippet", "").strip(), link))
    return results


def _verdicts_field(line: _Line, name: str, value: Any) -> dict[str, str] | None:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k.strip() and isinstance(v, (str, bool)) for k, v in value.items()
    ):
        line.error(name, "must be an object mapping system names to labels")
        return None
    return {k.strip(): _label(v) for k, v in value.items()}


def _label(value: str | bool) -> str:
    """One spelling per label: true/false for booleans, lower case without a final stop."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value.strip().rstrip(".").lower()


def _knowledge_field(line: _Line) -> list[dict[str, str]]:
    """`knowledge: [{title, text, url}]`: passages with a non-empty text."""
    passages = []
    for i, p in enumerate(line.get("knowledge", list) or []):
        if not (isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"].strip()
                and all(isinstance(p.get(k, ""), str) for k in ("title", "url"))):
            line.error(f"knowledge[{i}]", "must be an object with a non-empty 'text' string "
                       "and optional 'title' and 'url' strings")
            continue
        passages.append({"title": p.get("title", "").strip(), "text": p["text"].strip(),
                         "url": p.get("url", "").strip()})
    return passages


def parse_canonical(line: _Line, *, system: str, source_model: str) -> DocRecord | None:
    n_errors = len(line.errors)
    ext = line.get("id", (str, int), required=True)
    response = line.get("response", str, required=True)
    question = line.get("question", str) or ""
    domain = line.get("domain", str) or ""
    model = line.get("source_model", str) or source_model
    metadata = line.get("metadata", dict) or {}
    knowledge = _knowledge_field(line)
    if knowledge:  # the passages atomic facts are judged against (kinds/atomic.py)
        metadata = {**metadata, "knowledge": knowledge}
    lists_obj = line.get("claim_lists", dict) or {}
    abstained = set(line.get("abstained", list) or [])
    lists = {}
    for name, value in lists_obj.items():
        if not name.strip():
            line.error("claim_lists", "a system name is empty")
            continue
        claims = _claims_field(line, f"claim_lists.{name}", value)
        if claims is not None:
            lists[name] = ListRecord(claims=claims, abstained=name in abstained)
    segments = []
    for i, seg in enumerate(line.get("segments", list) or []):
        where = f"segments[{i}]"
        if isinstance(seg, str) and seg.strip():
            segments.append(SegmentRecord(seg.strip()))
        elif isinstance(seg, dict) and isinstance(seg.get("text"), str) and seg["text"].strip():
            verdicts = _verdicts_field(line, f"{where}.labels", seg.get("labels"))
            if verdicts is not None:
                segments.append(SegmentRecord(seg["text"].strip(), verdicts))
        else:
            line.error(where, "must be a non-empty string or an object with a 'text' string")
    if len(line.errors) > n_errors:
        return None
    return DocRecord(line.line, str(ext), response, question, domain, model, metadata, lists, segments)


def _stable_id(*parts: str) -> str:
    return "sha1:" + hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:16]


def parse_veriscore(
    line: _Line, *, system: str, source_model: str, verifier: str = ""
) -> DocRecord | None:
    n_errors = len(line.errors)
    response = line.get("response", str, required=True)
    question = line.get("question", str) or ""
    model = line.get("model", str) or source_model
    domain = line.get("prompt_source", str) or ""
    abstained = line.get("abstained", bool) or False
    per_sentence = line.get("claim_list", list)
    key = "all_claims" if "all_claims" in line.obj else "all_claim_lst"
    all_claims = line.get(key, list)
    # Which sentence each claim came from (first sentence that produced it).
    sentence_of: dict[str, int] = {}
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
                line.error(f"claim_list[{i}][{j}]", f"must be a string, not {_json_type(c)}")
                continue
            c = c.strip()
            if c and c != NO_CLAIM:
                sentence_of.setdefault(c, i)
                flattened.append(c)
    evidence_key = "claim_search_results" if "claim_search_results" in line.obj else "claim_snippets_dict"
    search_results = line.get(evidence_key, dict) or {}
    verifications = line.get("claim_verification_result", list) or []
    if all_claims is None and per_sentence is None and not search_results and not abstained:
        line.error("all_claims", "is missing (expected all_claims, all_claim_lst or claim_list)")
    if all_claims is None:
        all_claims = list(dict.fromkeys(flattened or list(search_results)))
    claims = []
    for i, c in enumerate(all_claims):
        if not isinstance(c, str):
            line.error(f"{key}[{i}]", f"must be a string, not {_json_type(c)}")
            continue
        c = c.strip()
        if c and c != NO_CLAIM:
            claims.append(ClaimRecord(text=c, sentence_index=sentence_of.get(c)))
    by_text = {c.text: c for c in claims}
    for claim_text, results in search_results.items():
        evidence = _evidence_field(line, f"{evidence_key}[{claim_text[:40]!r}]", results)
        if evidence is not None and claim_text.strip() in by_text:
            by_text[claim_text.strip()].evidence = evidence
    for i, v in enumerate(verifications):
        if not isinstance(v, dict) or not isinstance(v.get("claim"), str) or not isinstance(
            v.get("verification_result"), str
        ):
            line.error(f"claim_verification_result[{i}]",
                       "must be an object with 'claim' and 'verification_result' strings")
            continue
        target = by_text.get(v["claim"].strip())
        if target is None:
            line.error(f"claim_verification_result[{i}].claim", "is not one of the record's claims")
            continue
        target.verdicts[verifier or f"{system}-verifier"] = _label(v["verification_result"])
    if len(line.errors) > n_errors:
        return None
    ext = line.obj.get("id")
    ext = str(ext) if isinstance(ext, (str, int)) else _stable_id(question, response or "", model)
    metadata = {k: line.obj[k] for k in ("prompt_source", "prompt_tok_cnt", "response_tok_cnt") if k in line.obj}
    return DocRecord(
        line.line, ext, response, question, domain, model, metadata,
        {system: ListRecord(claims=claims, abstained=abstained)},
    )


FACTSCORE_MODEL = "factscore-model-facts"
FACTSCORE_HUMAN = "factscore-human-facts"
FACTSCORE_LABELS = "factscore-human-labels"


def parse_factscore(line: _Line, *, system: str, source_model: str) -> DocRecord | None:
    n_errors = len(line.errors)
    prompt = line.get("input", str, required=True)
    output = line.get("output", str, required=True)
    topic = line.get("topic", str, required=True)
    annotations = line.get("annotations", list)
    model_claims: list[ClaimRecord] = []
    human_claims: list[ClaimRecord] = []
    for i, ann in enumerate(annotations or []):
        if not isinstance(ann, dict):
            line.error(f"annotations[{i}]", f"must be an object, not {_json_type(ann)}")
            continue
        sentence = ann.get("text")
        if not isinstance(sentence, str):
            line.error(f"annotations[{i}].text", "must be a string")
            continue
        for key, target in (("model-atomic-facts", model_claims), ("human-atomic-facts", human_claims)):
            facts = ann.get(key)
            if facts is None:
                continue
            if not isinstance(facts, list):
                line.error(f"annotations[{i}].{key}", f"must be a list, not {_json_type(facts)}")
                continue
            for j, fact in enumerate(facts):
                where = f"annotations[{i}].{key}[{j}]"
                if not isinstance(fact, dict) or not isinstance(fact.get("text"), str):
                    line.error(where, "must be an object with a 'text' string")
                    continue
                label = fact.get("label")
                if label is not None and label not in ("S", "NS", "IR"):
                    line.error(f"{where}.label", f"must be S, NS or IR, not {label!r}")
                    continue
                verdicts = {FACTSCORE_LABELS: label} if label else {}
                target.append(ClaimRecord(fact["text"].strip(), i, sentence, verdicts))
    if len(line.errors) > n_errors:
        return None
    abstained = annotations is None
    question = prompt.removeprefix("Question:").strip()
    cat = line.obj.get("cat")
    return DocRecord(
        line.line, f"{source_model}:{topic}" if source_model else topic, output, question,
        "Biography", source_model, {"topic": topic, "cat": cat} if cat else {"topic": topic},
        {
            FACTSCORE_MODEL: ListRecord(model_claims, abstained),
            FACTSCORE_HUMAN: ListRecord(human_claims, abstained),
        },
        verdict_kinds={FACTSCORE_LABELS: System.REFERENCE},
    )


FELM_LABELS = "felm-labels"


def parse_felm(line: _Line, *, system: str, source_model: str) -> DocRecord | None:
    """FELM (Chen et al., 2023): `labels[i]` true means segment i is correct."""
    n_errors = len(line.errors)
    prompt = line.get("prompt", str) or ""
    response = line.get("response", str, required=True)
    segments = line.get("segmented_response", list, required=True)
    labels = line.get("labels", list)
    # FELM's "domain" (wk, math, ...); some files only have "type", a string or a list
    kind = line.obj.get("type")
    domain = line.get("domain", str) or (kind if isinstance(kind, str) else "")
    for name in ("comment", "ref"):
        line.get(name, list)
    if segments is not None:
        if not segments:
            line.error("segmented_response", "is empty")
        for i, seg in enumerate(segments):
            if not isinstance(seg, str) or not seg.strip():
                line.error(f"segmented_response[{i}]", "must be a non-empty string")
    if labels is not None and segments is not None:
        if len(labels) != len(segments):
            line.error("labels", f"has {len(labels)} labels for {len(segments)} segments")
        for i, label in enumerate(labels):
            if not isinstance(label, bool):
                line.error(f"labels[{i}]", f"must be true or false, not {_json_type(label)}")
    if len(line.errors) > n_errors:
        return None
    assert segments is not None and response is not None
    records = [
        SegmentRecord(seg.strip(), {FELM_LABELS: _label(labels[i])} if labels is not None else {})
        for i, seg in enumerate(segments)
    ]
    ext = line.obj.get("index", line.obj.get("id"))
    ext = f"felm:{ext}" if isinstance(ext, (str, int)) else _stable_id(prompt, response)
    metadata = {k: line.obj[k] for k in ("comment", "ref", "type", "source") if k in line.obj}
    return DocRecord(line.line, ext, response, prompt, domain, source_model or "chatgpt",
                     metadata, {}, records, {FELM_LABELS: System.REFERENCE})


PARSERS = {"canonical": parse_canonical, "veriscore": parse_veriscore, "factscore": parse_factscore,
           "felm": parse_felm}


def system_specs(fmt: str, records: Iterable[DocRecord]) -> dict[str, SystemSpec]:
    specs: dict[str, SystemSpec] = {}
    origin = f"import:{fmt}"
    for r in records:
        names = [v for lst in r.lists.values() for c in lst.claims for v in c.verdicts]
        names += [v for seg in r.segments for v in seg.verdicts]
        for vname in names:
            specs.setdefault(vname, SystemSpec(vname, r.verdict_kinds.get(vname, System.VERIFIER), origin))
        for name in r.lists:
            specs.setdefault(name, SystemSpec(name, System.EXTRACTOR, origin))
    return specs


def parse_file(
    text: str, *, file: str, fmt: str = "auto", system: str = "", source_model: str = "",
    verifier: str = "",
) -> tuple[str, list[DocRecord]]:
    """Parse and validate a whole file; raise ImportFailed listing every problem."""
    errors: list[LineError] = []
    rows = read_jsonl(text, file, errors)
    if fmt == "auto":
        fmt = detect_format(rows)
    if fmt not in PARSERS:
        raise ImportFailed([LineError(file, 0, "", f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")])
    if fmt == "veriscore" and not system:
        system = "veriscore"
    if fmt == "factscore" and not source_model:
        source_model = file.rsplit("/", 1)[-1].removesuffix(".jsonl")
    records: list[DocRecord] = []
    seen: dict[str, int] = {}
    for number, obj in rows:
        if len(errors) >= MAX_ERRORS:
            break
        options: dict[str, str] = {"system": system, "source_model": source_model}
        if fmt == "veriscore":
            options["verifier"] = verifier
        record = PARSERS[fmt](_Line(obj, file, number, errors), **options)
        if record is None:
            continue
        if record.external_id in seen:
            errors.append(LineError(file, number, "id", f"duplicate id {record.external_id!r} (first on line {seen[record.external_id]})"))
            continue
        seen[record.external_id] = number
        records.append(record)
    if errors:
        raise ImportFailed(errors[:MAX_ERRORS])
    return fmt, records


def import_file(
    *, project: Project, text: str, file: str, fmt: str = "auto", system: str = "",
    source_model: str = "", verifier: str = "",
) -> ImportSummary:
    fmt, records = parse_file(
        text, file=file, fmt=fmt, system=system, source_model=source_model, verifier=verifier
    )
    return save_records(project=project, records=records, fmt=fmt)


def save_records(*, project: Project, records: list[DocRecord], fmt: str) -> ImportSummary:
    """Write parsed records in one transaction. What exists is kept: documents are matched
    on their id, claim lists on their system, claims on their text; a later file (evidence,
    verification) adds what is missing to them."""
    summary = ImportSummary(format=fmt)
    with transaction.atomic():
        systems = {}
        for spec in system_specs(fmt, records).values():
            systems[spec.name], _ = System.objects.get_or_create(
                project=project, name=spec.name, defaults={"kind": spec.kind, "origin": spec.origin}
            )
        existing = {
            d.external_id: d
            for d in Document.objects.filter(
                project=project, external_id__in=[r.external_id for r in records]
            )
        }
        for r in records:
            doc = existing.get(r.external_id)
            if doc is None:
                doc = Document.objects.create(
                    project=project, external_id=r.external_id, response=r.response,
                    question=r.question, domain=r.domain, source_model=r.source_model,
                    metadata=r.metadata,
                )
                summary.documents_created += 1
            else:
                summary.documents_existing += 1
            present = {cl.system.name: cl for cl in doc.claim_lists.select_related("system")}
            for name, lst in r.lists.items():
                cl = present.get(name)
                if cl is None:
                    cl = ClaimList.objects.create(document=doc, system=systems[name], abstained=lst.abstained)
                    claims = Claim.objects.bulk_create(
                        Claim(claim_list=cl, position=i, text=c.text, sentence_index=c.sentence_index,
                              sentence=c.sentence)
                        for i, c in enumerate(lst.claims)
                    )
                    summary.claim_lists_created += 1
                    summary.claims_created += len(claims)
                    pairs = list(zip(claims, lst.claims, strict=True))
                else:
                    summary.claim_lists_existing += 1
                    by_text = {c.text: c for c in cl.claims.all()}
                    pairs = [(by_text[c.text], c) for c in lst.claims if c.text in by_text]
                _add_evidence_and_verdicts(pairs, systems, summary)
            _add_segments(doc, r.segments, systems, summary)
    return summary


def _add_evidence_and_verdicts(
    pairs: list[tuple[Claim, ClaimRecord]], systems: dict[str, System], summary: ImportSummary
) -> None:
    claim_ids = [claim.pk for claim, _ in pairs]
    has_evidence = set(Evidence.objects.filter(claim_id__in=claim_ids).values_list("claim_id", flat=True))
    has_verdict = set(Verdict.objects.filter(claim_id__in=claim_ids).values_list("claim_id", "system_id"))
    evidence, verdicts = [], []
    for claim, record in pairs:
        if record.evidence and claim.pk not in has_evidence:
            evidence += [
                Evidence(claim=claim, rank=rank, title=e.title, snippet=e.snippet, link=e.link)
                for rank, e in enumerate(record.evidence[:MAX_EVIDENCE], start=1)
            ]
        for name, label in record.verdicts.items():
            if (claim.pk, systems[name].pk) not in has_verdict:
                verdicts.append(Verdict(claim=claim, system=systems[name], label=label))
    Evidence.objects.bulk_create(evidence)
    Verdict.objects.bulk_create(verdicts)
    summary.evidence_created += len(evidence)
    summary.verdicts_created += len(verdicts)


def _add_segments(
    doc: Document, records: list[SegmentRecord], systems: dict[str, System], summary: ImportSummary
) -> None:
    if not records or doc.segments.exists():
        return
    segments = Segment.objects.bulk_create(
        Segment(document=doc, position=i, text=r.text) for i, r in enumerate(records)
    )
    verdicts = [
        Verdict(segment=seg, system=systems[name], label=label)
        for seg, r in zip(segments, records, strict=True)
        for name, label in r.verdicts.items()
    ]
    Verdict.objects.bulk_create(verdicts)
    summary.segments_created += len(segments)
    summary.verdicts_created += len(verdicts)


# --- pipeline results -> models ------------------------------------------------------


def ingest_results(
    *,
    project: Project,
    results: list[ResponseResult],
    extractor_name: str,
    verifier_name: str,
    config: dict[str, Any] | None = None,
) -> ImportSummary:
    """Write pipeline results as System, ClaimList, Claim, Evidence and Verdict rows.

    Documents are matched (or created) on `result.id` = external id. Idempotent: a claim
    list the extractor already has is kept and only missing evidence and verdicts are
    added, so a chunk processed twice writes nothing twice. Verdicts that are "error"
    (the search failed, so nothing was verified) are not stored; "unparsed" ones are."""
    summary = ImportSummary(format="pipeline")
    if not results:
        return summary
    first = results[0]
    extract_version, _, verify_version = first.prompt_version.partition("+")
    with transaction.atomic():
        extractor, _ = System.objects.get_or_create(
            project=project, name=extractor_name,
            defaults={"kind": System.EXTRACTOR, "origin": "pipeline", "model": first.extraction_model,
                      "prompt_version": extract_version, "config": config or {}},
        )
        verifier, _ = System.objects.get_or_create(
            project=project, name=verifier_name,
            defaults={"kind": System.VERIFIER, "origin": "pipeline",
                      "model": first.verification_model,
                      "prompt_version": verify_version or first.prompt_version,
                      "config": {**(config or {}), "label_mode": first.label_mode}},
        )
        docs = {d.external_id: d for d in Document.objects.filter(
            project=project, external_id__in=[r.id for r in results])}
        for r in results:
            doc = docs.get(r.id)
            if doc is None:
                doc = Document.objects.create(
                    project=project, external_id=r.id, response=r.response,
                    question=r.question or "", domain=r.domain, source_model=r.model,
                    metadata=r.metadata,
                )
                summary.documents_created += 1
            else:
                summary.documents_existing += 1
            cl, created = ClaimList.objects.get_or_create(
                document=doc, system=extractor, defaults={"abstained": r.abstained}
            )
            if created:
                rows = Claim.objects.bulk_create(
                    Claim(claim_list=cl, position=i, text=c.claim.text,
                          sentence_index=c.claim.sentence_index if c.claim.sentence_index >= 0 else None,
                          sentence=c.claim.sentence)
                    for i, c in enumerate(r.claims)
                )
                summary.claim_lists_created += 1
                summary.claims_created += len(rows)
                pairs = list(zip(rows, r.claims, strict=True))
            else:
                summary.claim_lists_existing += 1
                by_text = {c.text: c for c in cl.claims.all()}
                pairs = [(by_text[c.claim.text], c) for c in r.claims if c.claim.text in by_text]
            ids = [claim.pk for claim, _ in pairs]
            has_evidence = set(Evidence.objects.filter(claim_id__in=ids).values_list("claim_id", flat=True))
            has_verdict = set(Verdict.objects.filter(claim_id__in=ids, system=verifier)
                              .values_list("claim_id", flat=True))
            evidence, verdicts = [], []
            for claim, item in pairs:
                if claim.pk not in has_evidence:
                    evidence += [
                        Evidence(claim=claim, rank=rank, title=e.title, snippet=e.snippet,
                                 link=e.link[:2000])
                        for rank, e in enumerate(item.evidence[:MAX_EVIDENCE], start=1)
                    ]
                v = item.verdict
                if v is not None and v.label != ERROR and claim.pk not in has_verdict:
                    verdicts.append(Verdict(claim=claim, system=verifier, label=_label(v.label),
                                            raw_output=v.raw_output))
            Evidence.objects.bulk_create(evidence)
            Verdict.objects.bulk_create(verdicts)
            summary.evidence_created += len(evidence)
            summary.verdicts_created += len(verdicts)
    return summary
