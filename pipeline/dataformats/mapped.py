"""Any other JSONL or JSON layout, read through a mapping file (YAML or JSON) of JMESPath
expressions: where, in each record, the response, question, domain, source model,
claims (with their sentence, label and evidence: title, snippet, link, stance) and
segments (text, label) are, and how the dataset's label values map onto ours.

    id: index                    # optional (default: a hash of question, response, model)
    response: response           # required
    question: prompt
    domain: domain
    source_model: "'chatgpt'"    # a JMESPath literal
    skip: "status == 'draft'"    # optional: records where it is true are left out (counted)
    nul: refuse                  # or `replace`: a NUL becomes U+FFFD, a warning per value
    claims:
      system: my-extractor       # the claim list's system
      labels: my-labels          # the verdict set of the claim labels (kind reference)
      abstained: abstained       # optional: where true, the list is abstained (no claims)
      sentences: sentences       # optional: claims are found in each sentence
      sentence: text             #   the sentence's text (within a sentence)
      items: claims              # required: the claims (within a sentence, or the record)
      text: text                 # required: within a claim ("@": the claim is the text)
      label: label
      evidence: {items: evidence, title: title, snippet: snippet, link: url, stance: stance}
    segments: {items: segmented_response, text: "@", label_list: labels, labels: felm-labels}
    values: {completely-support: supports, refute: contradicts, unknown: inconclusive}

Every key is checked, at every level: an unknown one is an error naming its path.
`zip(a, b, ...)` pairs parallel lists (lists of one length) item by item: with
`items: zip(claims, claim_labels)`, `text: "[0]"` and `label: "[1]"` read claim i with
label i. A record whose `claims.items` finds nothing (null) has no claim list; an empty
list is a claim list without claims (the extractor found none); `claims.abstained`
says the model abstained. As in the canonical format, an empty response is an error
unless the record's claim list is abstained.

Label values are mapped through `values` (spelled as `label()` writes them: booleans as
true/false, lower case); a value `values` does not name is an error. Evidence stances
have no column: they are kept in the document's metadata (`evidence_stances`, per claim
list: one list per claim) and a warning says so. Each error names the mapping key and
where in the source record the value is (e.g. `at answer.sentences[1].claims[0].verdict`).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any

import jmespath
import yaml
from jmespath import functions
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
    bad_value,
    json_type,
    label,
)
from .veriscore import stable_id

NAME = "mapping"
FIELDS = ("id", "response", "question", "domain", "source_model")
# The keys of each level of a mapping (a path -> its keys); a key that is a level of its
# own is a mapping of keys, NAMES are plain strings, `values` maps labels, the rest are
# JMESPath expressions.
KEYS = {
    "": (*FIELDS, "skip", "nul", "claims", "segments", "values"),
    "claims": (
        "system",
        "labels",
        "abstained",
        "sentences",
        "sentence",
        "items",
        "text",
        "label",
        "evidence",
    ),
    "claims.evidence": ("items", "title", "snippet", "link", "stance"),
    "segments": ("items", "text", "label", "label_list", "labels"),
}
NAMES = ("claims.system", "claims.labels", "segments.labels", "nul")
REQUIRED = ("response", "claims.items", "claims.text", "segments.items", "segments.text")
NUL = ("refuse", "replace")


class _Functions(functions.Functions):  # type: ignore[misc]
    @functions.signature({"types": ["array"]}, {"types": ["array"], "variadic": True})  # type: ignore[untyped-decorator]
    def _func_zip(self, *lists: Any) -> list[list[Any]]:
        """zip(a, b, ...): [[a[0], b[0], ...], ...], for lists of one length."""
        for i, value in enumerate(lists):
            if not isinstance(value, list):
                raise JMESPathError(f"zip() takes lists; argument {i + 1} is {json_type(value)}")
        lengths = sorted({len(v) for v in lists})
        if len(lengths) > 1:
            raise JMESPathError(
                "zip() takes lists of one length; these have "
                + ", ".join(str(len(v)) for v in lists)
                + " items"
            )
        return [list(t) for t in zip(*lists, strict=True)]

    @functions.signature({"types": []})  # type: ignore[untyped-decorator]
    def _func_to_string(self, arg: Any) -> str:
        """to_string() as JMESPath's, but an expression reference is an error: JMESPath
        writes its Python repr, an address that differs on every run."""
        if isinstance(arg, str):
            return arg
        try:
            return json.dumps(arg, separators=(",", ":"))
        except TypeError:
            raise JMESPathError("to_string() of an expression reference (&...)") from None


OPTIONS = jmespath.Options(custom_functions=_Functions())


@dataclass(frozen=True)
class Mapping:
    exprs: dict[str, tuple[str, Any]]  # key path -> (source text, compiled expression)
    names: dict[str, str]  # NAMES given
    values: dict[str, str]
    references: frozenset[str] = frozenset()  # keys whose expression holds an `&expr`

    def has(self, key: str) -> bool:
        return key in self.exprs

    def source(self, key: str) -> str:
        return self.exprs[key][0]


@functools.lru_cache(maxsize=8)
def compile_mapping(text: str, file: str = "mapping") -> Mapping:
    """The mapping with every expression compiled; ImportFailed naming every bad key."""
    try:
        spec = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ImportFailed([LineError(file, 0, "", f"not valid YAML or JSON ({e})")]) from None
    except RecursionError:
        raise ImportFailed([LineError(file, 0, "", "not usable: nested too deeply")]) from None
    if not isinstance(spec, dict) or "response" not in spec:
        raise ImportFailed([LineError(file, 0, "response", "the mapping must say where it is")])
    errors: list[LineError] = []
    exprs: dict[str, tuple[str, Any]] = {}
    names: dict[str, str] = {}
    values: dict[str, str] = {}

    def walk(node: dict[Any, Any], level: str) -> None:
        for key, value in node.items():
            where = f"{level}.{key}" if level else str(key)
            if key not in KEYS[level]:
                errors.append(
                    LineError(file, 0, where, f"is not a mapping key ({', '.join(KEYS[level])})")
                )
            elif where in KEYS or where == "values":
                if not isinstance(value, dict):
                    errors.append(LineError(file, 0, where, "must be a mapping of keys to values"))
                elif where == "values":
                    values.update(_values(value, errors, file))
                else:
                    walk(value, where)
            elif where in NAMES:
                if not isinstance(value, str) or not value.strip():
                    errors.append(LineError(file, 0, where, "must be a name (a string)"))
                else:
                    names[where] = value.strip()
            else:
                compiled = _compile(value, where, errors, file)
                if compiled is not None:
                    exprs[where] = compiled

    walk(spec, "")
    for key in REQUIRED:
        level = key.rpartition(".")[0]
        if (not level or isinstance(spec.get(level), dict)) and key not in exprs:
            if not any(e.field == key for e in errors):
                errors.append(LineError(file, 0, key, "is required: say where it is"))
    if names.get("nul", NUL[0]) not in NUL:
        errors.append(LineError(file, 0, "nul", f"must be one of {', '.join(NUL)}"))
    problem = bad_value({"names": names, "values": values})
    if problem:
        errors.append(LineError(file, 0, problem[0], problem[1]))
    if errors:
        raise ImportFailed(errors)
    references = frozenset(k for k, (_, e) in exprs.items() if _has_reference(e.parsed))
    return Mapping(exprs, names, values, references)


def _has_reference(tree: dict[str, Any]) -> bool:
    """Whether a parsed expression holds an expression reference (`&expr`): the one
    thing JMESPath can give that is not a JSON value (`&id`, `[&id]`, `not_null(&id)`)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if node.get("type") == "expref":
            return True
        stack += [c for c in node.get("children", []) if isinstance(c, dict)]
    return False


def _compile(node: Any, where: str, errors: list[LineError], file: str) -> tuple[str, Any] | None:
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


def _values(node: dict[Any, Any], errors: list[LineError], file: str) -> dict[str, str]:
    out = {}
    for k, v in node.items():
        if not isinstance(k, (str, bool, int, float)) or not isinstance(v, (str, bool)):
            errors.append(
                LineError(file, 0, f"values.{k}", "must map a label value to a label (a string)")
            )
            continue
        key = label(k) if isinstance(k, (str, bool)) else str(k)
        out[key] = label(v) if isinstance(v, bool) else v
    return out


def _reference_in(value: Any) -> str | None:
    """Where in the value an expression reference is ("" for the value itself), or
    None: any object of no JSON type counts as one."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, dict):
            stack += reversed([(f"{where}.{k}", item) for k, item in v.items()])
        elif isinstance(v, list):
            stack += reversed([(f"{where}[{i}]", item) for i, item in enumerate(v)])
        elif not isinstance(v, (str, int, float, bool)) and v is not None:
            return where.lstrip(".")
    return None


def _shown(value: Any) -> str:
    """The value's start as JSON for an error message; never raises (an expression
    reference shows as `&...`, a value json cannot write as its type)."""
    try:
        return json.dumps(value, default=lambda _: "&...")[:60]
    except (ValueError, RecursionError):
        return json_type(value)


def _at(base: str, expr: str) -> str:
    """The source path of an expression's value within the value at `base`."""
    if expr == "@" or not base:
        return base or expr
    return f"{base}.{expr}"


class _Record:
    """One source record read through the mapping: every problem a line error naming the
    mapping key and where in the record the value is."""

    def __init__(self, line: Line, m: Mapping) -> None:
        self.line, self.m = line, m

    def find(self, key: str, data: Any, base: str = "") -> tuple[bool, Any, str]:
        """(ok, value, source path); not ok when the expression failed (an error)."""
        source, expr = self.m.exprs[key]
        at = _at(base, source)
        try:
            value = expr.search(data, options=OPTIONS)
        except JMESPathError as e:  # e.g. abs() of a string, zip() of unequal lists
            self.line.error(key, f"at {at}: the expression {source!r} failed ({e})")
            return False, None, at
        except RecursionError:
            self.line.error(key, f"at {at}: the value is nested too deeply")
            return False, None, at
        except (TypeError, ValueError, ArithmeticError) as e:  # JMESPath's own functions
            # raise these on values they do not expect: ceil(`NaN`), to_number(&id)
            self.line.error(key, f"at {at}: the expression {source!r} failed ({e})")
            return False, None, at
        if key in self.m.references:
            inside = _reference_in(value)
            if inside is not None:
                where = f" (at {inside} in what it found)" if inside else ""
                self.line.error(
                    key,
                    f"at {at}: the expression {source!r} found an expression reference "
                    f"(&...){where}, not a value: write one only as an argument of sort_by, "
                    "min_by, max_by or map",
                )
                return False, None, at
        if value is None:
            self.line.reader.warn_once(
                f"nothing:{key}",
                LineError(
                    self.line.file,
                    self.line.line,
                    key,
                    f"the expression {source!r} found nothing (first seen here)",
                ),
            )
        return True, value, at

    def text(self, key: str, data: Any, base: str = "", *, required: bool = False) -> str | None:
        """The text at `key` ("" when absent); None after an error."""
        if not self.m.has(key):
            return ""
        ok, value, at = self.find(key, data, base)
        if not ok:
            return None
        if value is None:
            if required:
                inside = f" at {base}" if base else ""
                self.line.error(key, f"the expression {self.m.source(key)!r} found nothing{inside}")
                return None
            return ""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                self.line.error(key, f"at {at}: found {value!r}, which no database stores")
                return None
            return str(value)
        if not isinstance(value, str):
            self.line.error(key, f"at {at}: found {_shown(value)}, not text")
            return None
        return self.clean(key, at, value)

    def clean(self, key: str, at: str, value: str) -> str | None:
        """The text as stored: a NUL is an error (or U+FFFD with a warning), a lone
        surrogate is an error."""
        if "\x00" in value:
            if self.m.names.get("nul") != "replace":
                self.line.error(
                    key,
                    f"at {at}: contains a NUL character (\\u0000); `nul: replace` in the "
                    "mapping stores U+FFFD instead",
                )
                return None
            value = value.replace("\x00", "\ufffd")
            self.line.warn(key, f"at {at}: a NUL character (\\u0000) is stored as U+FFFD")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            self.line.error(
                key, f"at {at}: contains a lone surrogate (\\u{ord(value[e.start]):04x})"
            )
            return None
        return value

    def label(self, key: str, value: Any, at: str) -> str | None:
        if value is None:
            return None
        if isinstance(value, (str, bool)):
            found = self.clean(key, at, label(value))
        elif isinstance(value, (int, float)) and math.isfinite(value):
            found = str(value)
        else:
            self.line.error(key, f"at {at}: found {_shown(value)}, not a label")
            return None
        values = self.m.values
        if found is None or not values:
            return found
        if found not in values:
            self.line.error(
                key,
                f"at {at}: label {value!r} is not in the mapping's values ({', '.join(values)})",
            )
            return None
        return values[found]

    def found_label(self, key: str, data: Any, base: str) -> str | None:
        if not self.m.has(key):
            return None
        ok, value, at = self.find(key, data, base)
        return self.label(key, value, at) if ok else None

    def items(self, key: str, data: Any, base: str = "") -> tuple[list[Any] | None, str]:
        """The list at `key` (None when it found nothing or failed) and its source path."""
        ok, value, at = self.find(key, data, base)
        if not ok or value is None:
            return None, at
        if not isinstance(value, list):
            self.line.error(
                key,
                f"at {at}: the expression {self.m.source(key)!r} must find a list, "
                f"not {json_type(value)}",
            )
            return None, at
        return value, at

    def truthy(self, key: str, data: Any) -> bool:
        """JMESPath's truth: false, null, "", [] and {} are false."""
        if not self.m.has(key):
            return False
        ok, value, _ = self.find(key, data)
        return ok and not (value is None or value is False or value in ("", [], {}))


def parse(line: Line) -> DocRecord | None:
    m = compile_mapping(line.reader.options["mapping"])
    r = _Record(line, m)
    obj = line.obj
    if r.truthy("skip", obj):
        line.reader.warn_counted(
            "skip",
            LineError(
                line.file,
                line.line,
                "skip",
                f"left out, where {m.source('skip')!r} is true (the first here)",
            ),
            "{n} record(s)",
        )
        return None
    values = {f: r.text(f, obj, required=f == "response") for f in FIELDS}
    model = values["source_model"] or line.reader.options.get("source_model", "")
    lists: dict[str, ListRecord] = {}
    metadata: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    if m.has("claims.items"):
        claims_list = _claims(r, obj, metadata, kinds)
        if claims_list is not None:
            lists[m.names.get("claims.system", "mapped")] = claims_list
    segments = _segments(r, obj, kinds) if m.has("segments.items") else []
    response = values["response"]
    if response is not None and not response.strip() and not line.failed:
        if not (lists and all(lst.abstained for lst in lists.values())):
            line.error(
                "response",
                f"at {m.source('response')}: is empty (an empty response is kept only when "
                "the record's claim list is abstained: see claims.abstained)",
            )
    if line.failed:
        return None
    assert response is not None
    question, domain = values["question"] or "", values["domain"] or ""
    ext = values["id"] or stable_id(question, response, model or "")
    return DocRecord(
        line.line, ext, response, question, domain, model or "", metadata, lists, segments, kinds
    )


def _claims(
    r: _Record, obj: Any, metadata: dict[str, Any], kinds: dict[str, str]
) -> ListRecord | None:
    """The record's claim list; None when it has none (claims.items found nothing)."""
    m, line = r.m, r.line
    system = m.names.get("claims.system", "mapped")
    labels = m.names.get("claims.labels", f"{system}-labels")
    abstained = r.truthy("claims.abstained", obj)
    if m.has("claims.sentences"):
        found, at = r.items("claims.sentences", obj)
        sentences = [(s, f"{at}[{i}]") for i, s in enumerate(found or [])]
        if found is None:
            return ListRecord([], True) if abstained else None
    else:
        sentences = [(obj, "")]
    claims: list[ClaimRecord] = []
    stances: list[list[str | None]] = []
    listed = False
    for s_i, (sentence, s_at) in enumerate(sentences):
        sentence_text = r.text("claims.sentence", sentence, s_at)
        items, items_at = r.items("claims.items", sentence, s_at)
        listed = listed or items is not None
        for j, item in enumerate(items or []):
            at = f"{items_at}[{j}]"
            text = r.text("claims.text", item, at, required=True)
            if text is not None and not text.strip():
                line.error("claims.text", f"at {_at(at, m.source('claims.text'))}: is empty")
            verdict = r.found_label("claims.label", item, at)
            evidence, claim_stances = _evidence(r, item, at)
            stances.append(claim_stances)
            claims.append(
                ClaimRecord(
                    text or "",
                    s_i if m.has("claims.sentences") else None,
                    sentence_text or "",
                    {labels: verdict} if verdict else {},
                    evidence,
                )
            )
    if abstained and claims:
        line.error(
            "claims.abstained",
            f"at {m.source('claims.abstained')}: the model abstained, yet "
            f"{len(claims)} claim(s) were found",
        )
    if not listed and not abstained:
        return None
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
    if any(c.verdicts for c in claims):
        kinds[labels] = REFERENCE
    return ListRecord(claims, abstained)


def _evidence(r: _Record, item: Any, at: str) -> tuple[list[EvidenceRecord], list[str | None]]:
    if not r.m.has("claims.evidence.items"):
        return [], []
    results, results_at = r.items("claims.evidence.items", item, at)
    evidence, stances = [], []
    for k, result in enumerate(results or []):
        e_at = f"{results_at}[{k}]"
        evidence.append(
            EvidenceRecord(
                r.text("claims.evidence.title", result, e_at) or "",
                r.text("claims.evidence.snippet", result, e_at) or "",
                r.text("claims.evidence.link", result, e_at) or "",
            )
        )
        if r.m.has("claims.evidence.stance"):
            stances.append(r.found_label("claims.evidence.stance", result, e_at))
    return evidence, stances


def _segments(r: _Record, obj: Any, kinds: dict[str, str]) -> list[SegmentRecord]:
    m, line = r.m, r.line
    name = m.names.get("segments.labels", "mapped-segment-labels")
    items, items_at = r.items("segments.items", obj)
    items = items or []
    parallel: list[Any] = []
    parallel_at = ""
    if m.has("segments.label_list"):
        found, parallel_at = r.items("segments.label_list", obj)
        parallel = found or []
        if found is not None and len(found) != len(items):
            line.error(
                "segments.label_list",
                f"at {parallel_at}: {len(found)} labels for {len(items)} segments "
                f"(at {items_at}); give one label per segment",
            )
    segments = []
    for i, item in enumerate(items):
        at = f"{items_at}[{i}]"
        text = r.text("segments.text", item, at, required=True)
        if m.has("segments.label_list"):
            value = parallel[i] if i < len(parallel) else None
            verdict = r.label("segments.label_list", value, f"{parallel_at}[{i}]")
        else:
            verdict = r.found_label("segments.label", item, at)
        if text is not None and not text.strip():
            line.warn("segments.text", f"at {at}: is an empty segment: kept, never shown as a unit")
        segments.append(SegmentRecord(text or "", {name: verdict} if verdict else {}))
    if any(seg.verdicts for seg in segments):
        kinds[name] = REFERENCE
    return segments
