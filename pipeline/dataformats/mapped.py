"""Any other JSONL or JSON layout, read through a mapping file (YAML or JSON) of JMESPath
expressions: where, in each record, the response, question, domain, source model,
claims (with their sentence, label and evidence: title, snippet, link, stance) and
segments (text, label) are, and how the dataset's label values map onto ours.

    id: index                    # optional (default: a hash of question, response, model)
    response: response           # required
    question: prompt
    domain: domain
    source_model: "'chatgpt'"    # a JMESPath literal
    claims:
      system: my-extractor       # the claim list's system
      labels: my-labels          # the verdict set of the claim labels (kind reference)
      sentences: sentences       # optional: claims are found in each sentence
      sentence: text             #   the sentence's text (within a sentence)
      items: claims              # the claims (within a sentence, or the record)
      text: text                 # within a claim
      label: label
      evidence: {items: evidence, title: title, snippet: snippet, link: url, stance: stance}
    segments: {items: segmented_response, text: "@", label_list: labels, labels: felm-labels}
    values: {completely-support: supports, refute: contradicts, unknown: inconclusive}

Label values are mapped through `values` (spelled as `label()` writes them: booleans as
true/false, lower case); a value `values` does not name is an error. Evidence stances
have no column: they are kept in the document's metadata (`evidence_stances`, per claim
list: one list per claim) and a warning says so.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import jmespath
import yaml
from jmespath.exceptions import JMESPathError

from .common import (
    REFERENCE,
    ClaimRecord,
    DocRecord,
    EvidenceRecord,
    ImportFailed,
    Line,
    LineError,
    ListRecord,
    SegmentRecord,
    label,
)
from .veriscore import stable_id

NAME = "mapping"
FIELDS = ("id", "response", "question", "domain", "source_model")


@functools.lru_cache(maxsize=8)
def compile_mapping(text: str, file: str = "mapping") -> dict[str, Any]:
    """The mapping with every expression compiled; ImportFailed naming a bad one."""
    try:
        spec = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ImportFailed([LineError(file, 0, "", f"not valid YAML or JSON ({e})")]) from None
    except RecursionError:
        raise ImportFailed([LineError(file, 0, "", "not usable: nested too deeply")]) from None
    if not isinstance(spec, dict) or "response" not in spec:
        raise ImportFailed([LineError(file, 0, "response", "the mapping must say where it is")])
    errors: list[LineError] = []
    for key, shape in (("claims", dict), ("segments", dict), ("values", dict)):
        if key in spec and not isinstance(spec[key], shape):
            errors.append(LineError(file, 0, key, "must be a mapping of keys to values"))
    claims = spec.get("claims")
    if isinstance(claims, dict) and not isinstance(claims.get("evidence", {}), dict):
        errors.append(LineError(file, 0, "claims.evidence", "must be a mapping of keys to values"))
    unknown = set(spec) - {*FIELDS, "claims", "segments", "values"}
    for key in sorted(unknown, key=str):
        errors.append(
            LineError(
                file,
                0,
                str(key),
                f"is not a mapping key ({', '.join(FIELDS)}, claims, segments, values)",
            )
        )
    if errors:
        raise ImportFailed(errors)

    def compiled(node: Any, where: str) -> Any:
        if isinstance(node, dict):
            return {
                k: v if k in ("system", "labels", "values") else compiled(v, f"{where}.{k}")
                for k, v in node.items()
            }
        if not isinstance(node, str):
            errors.append(LineError(file, 0, where, "must be a JMESPath expression (a string)"))
            return None
        try:
            return (node, jmespath.compile(node))
        except JMESPathError as e:
            errors.append(LineError(file, 0, where, f"is not a JMESPath expression ({e})"))
        except RecursionError:
            errors.append(LineError(file, 0, where, "is not usable: nested too deeply"))
        return None

    out = {k: compiled(v, k) for k, v in spec.items() if k != "values"}
    out["values"] = {label(k): v for k, v in (spec.get("values") or {}).items()}
    if errors:
        raise ImportFailed(errors)
    return out


def _find(line: Line, expr: tuple[str, Any] | None, data: Any, where: str) -> Any:
    if expr is None:
        return None
    try:
        value = expr[1].search(data)
    except JMESPathError as e:  # e.g. abs() of a string
        line.error(where, f"the expression {expr[0]!r} failed: {e}")
        return None
    except RecursionError:
        line.error(where, f"the expression {expr[0]!r} failed: the value is nested too deeply")
        return None
    if value is None:
        line.reader.warn_once(
            f"nothing:{where}",
            LineError(
                line.file,
                line.line,
                where,
                f"the expression {expr[0]!r} found nothing (first seen here)",
            ),
        )
    return value


def _text(line: Line, expr: Any, data: Any, where: str, *, required: bool = False) -> str:
    value = _find(line, expr, data, where)
    if value is None:
        if required:
            line.error(where, f"the expression {expr[0] if expr else '?'!r} found nothing")
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        line.error(where, f"the expression {expr[0]!r} found {json.dumps(value)[:60]}, not text")
        return ""
    return value


def _label(line: Line, spec: dict[str, Any], value: Any, where: str) -> str | None:
    if value is None:
        return None
    key = label(value) if isinstance(value, (str, bool)) else str(value)
    values = spec["values"]
    if not values:
        return key
    if key not in values:
        line.error(where, f"label {value!r} is not in the mapping's values ({', '.join(values)})")
        return None
    return str(values[key])


def _list(line: Line, expr: Any, data: Any, where: str) -> list[Any]:
    value = _find(line, expr, data, where)
    if value is None:
        return []
    if not isinstance(value, list):
        line.error(where, f"the expression {expr[0]!r} must find a list")
        return []
    return value


def parse(line: Line) -> DocRecord | None:
    spec = compile_mapping(line.reader.options["mapping"])
    obj = line.obj
    values = {f: _text(line, spec.get(f), obj, f, required=f == "response") for f in FIELDS}
    model = values["source_model"] or line.reader.options.get("source_model", "")
    lists, metadata, kinds = {}, {}, {}
    c = spec.get("claims")
    if c:
        system = str(c.get("system") or "mapped")
        labels = str(c.get("labels") or f"{system}-labels")
        claims: list[ClaimRecord] = []
        stances: list[Any] = []
        sentences = (
            _list(line, c.get("sentences"), obj, "claims.sentences")
            if c.get("sentences")
            else [obj]
        )
        for s_i, sentence in enumerate(sentences):
            sentence_text = _text(line, c.get("sentence"), sentence, "claims.sentence")
            for item in _list(line, c.get("items"), sentence, "claims.items"):
                where = f"claims[{len(claims)}]"
                text = _text(line, c.get("text"), item, f"{where}.text", required=True)
                verdict = _label(
                    line, spec, _find(line, c.get("label"), item, "claims.label"), f"{where}.label"
                )
                evidence, claim_stances = [], []
                e = c.get("evidence") or {}
                for r in _list(line, e.get("items"), item, "claims.evidence.items"):
                    evidence.append(
                        EvidenceRecord(
                            _text(line, e.get("title"), r, "claims.evidence.title"),
                            _text(line, e.get("snippet"), r, "claims.evidence.snippet"),
                            _text(line, e.get("link"), r, "claims.evidence.link"),
                        )
                    )
                    if e.get("stance"):
                        claim_stances.append(
                            _label(
                                line,
                                spec,
                                _find(line, e.get("stance"), r, "claims.evidence.stance"),
                                f"{where}.evidence.stance",
                            )
                        )
                stances.append(claim_stances)
                claims.append(
                    ClaimRecord(
                        text,
                        s_i if c.get("sentences") else None,
                        sentence_text,
                        {labels: verdict} if verdict else {},
                        evidence,
                    )
                )
        lists[system] = ListRecord(claims)
        if any(stances):
            metadata["evidence_stances"] = {system: stances}
            line.reader.warn_once(
                "stances",
                LineError(
                    line.file,
                    line.line,
                    "claims.evidence.stance",
                    "evidence stances have no column: kept in the document's metadata "
                    "(evidence_stances)",
                ),
            )
        if any(cl.verdicts for cl in claims):
            kinds[labels] = REFERENCE
    segments = []
    s = spec.get("segments")
    if s:
        name = str(s.get("labels") or "mapped-segment-labels")
        items = _list(line, s.get("items"), obj, "segments.items")
        parallel = (
            _list(line, s.get("label_list"), obj, "segments.label_list")
            if s.get("label_list")
            else []
        )
        for i, item in enumerate(items):
            text = _text(line, s.get("text"), item, f"segments[{i}].text")
            value = (
                (parallel[i] if i < len(parallel) else None)
                if s.get("label_list")
                else (_find(line, s.get("label"), item, "segments.label"))
            )
            verdict = _label(line, spec, value, f"segments[{i}].label")
            segments.append(SegmentRecord(text, {name: verdict} if verdict else {}))
        if any(seg.verdicts for seg in segments):
            kinds[name] = REFERENCE
    if line.failed:
        return None
    ext = values["id"] or stable_id(values["question"], values["response"], model)
    return DocRecord(
        line.line,
        ext,
        values["response"],
        values["question"],
        values["domain"],
        model,
        metadata,
        lists,
        segments,
        kinds,
    )
