"""Files out: VeriScore, FELM and FActScore JSONL, and the long and wide answer tables.

Each writer emits what `ingest` reads back, so a file imported and exported again holds
the same data (tests/annotation/test_formats.py). Human labels come from
`gold.gold_values` (adjudicated, unanimous, majority or tie rule) with their provenance;
imported reference labels (a `System` of kind reference) can be written instead.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from . import exports, gold, kinds, reports
from .ingest import FACTSCORE_HUMAN, FACTSCORE_MODEL
from .models import Answer, Assignment, Claim, ClaimList, Document, Item, Project, Segment, System, Verdict

# Gold label of a claim -> FActScore's S (supported) / NS (not supported) / IR
# (irrelevant): verification labels, and the atomic-fact labels.
FACTSCORE_LABEL = {
    "supported": "S",
    "contradicted": "NS",
    "inconclusive-not-enough": "NS",
    "inconclusive-conflicting": "NS",
    "not-supported": "NS",
    "irrelevant": "IR",
}
GOLD = "gold"


def _jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _system(project: Project, name: str | None, *, kind: str, default: str | None = None) -> System:
    systems = project.systems.filter(kind=kind)
    if name:
        found = systems.filter(name=name).first()
        if found is None:
            raise ValueError(f"no {kind} system named {name!r} in this project")
        return found
    if default and systems.filter(name=default).exists():
        return systems.get(name=default)
    # the systems that made claim lists, when any did (extractors); else all of them
    listed = systems.filter(claim_lists__isnull=False).distinct()
    candidates = list(listed if listed.exists() else systems)
    if len(candidates) != 1:
        names = ", ".join(s.name for s in candidates) or "none"
        raise ValueError(f"choose the {kind} system (one of: {names})")
    return candidates[0]


def _claim_gold(project: Project) -> dict[int, gold.Gold]:
    """claim id -> the human gold label of the claim (verification or atomic-fact items)."""
    return kinds.gold_by_target(project, Claim)


# --- VeriScore ----------------------------------------------------------------------


def veriscore_records(project: Project, *, system: str | None = None,
                      verifier: str | None = None) -> list[dict[str, Any]]:
    """One record per document with the extractor's claims, in VeriScore's output keys:
    question, response, model, prompt_source, claim_list (per sentence), all_claims,
    claim_search_results ({claim: [{title, snippet, link}]}) and
    claim_verification_result ([{claim, search_results, verification_result}])."""
    extractor = _system(project, system, kind=System.EXTRACTOR)
    verifier_system = None
    verdicts: dict[int, str] = {}
    claim_ids = Claim.objects.filter(claim_list__system=extractor)
    if verifier:
        verifier_system = _system(project, verifier, kind=System.VERIFIER)
    else:
        used = System.objects.filter(verdicts__claim__in=claim_ids, kind=System.VERIFIER).distinct()
        if used.count() == 1:
            verifier_system = used.get()
    if verifier_system is not None:
        verdicts = dict(Verdict.objects.filter(system=verifier_system, claim__in=claim_ids)
                        .values_list("claim_id", "label"))
    records = []
    lists = (ClaimList.objects.filter(system=extractor, document__project=project)
             .select_related("document").prefetch_related("claims__evidence")
             .order_by("document_id"))
    for cl in lists:
        doc = cl.document
        claims = list(cl.claims.all())
        n_sentences = max([c.sentence_index for c in claims if c.sentence_index is not None],
                          default=-1) + 1
        per_sentence: list[list[str]] = [[] for _ in range(n_sentences)]
        for c in claims:
            if c.sentence_index is not None:
                per_sentence[c.sentence_index].append(c.text)
        record: dict[str, Any] = {
            "id": doc.external_id,
            "question": doc.question,
            "response": doc.response,
            "model": doc.source_model,
            "prompt_source": doc.domain,
            "claim_list": per_sentence if n_sentences else [[c.text for c in claims]],
            "all_claims": [c.text for c in claims],
            "abstained": cl.abstained,
        }
        search = {c.text: [{"title": e.title, "snippet": e.snippet, "link": e.link}
                           for e in c.evidence.all()] for c in claims}
        if any(search.values()):
            record["claim_search_results"] = search
        if verdicts:
            record["claim_verification_result"] = [
                {"claim": c.text,
                 "search_results": "\n\n".join(f"Title: {e['title']}\nContent: {e['snippet']}"
                                               for e in search[c.text]),
                 "verification_result": verdicts[c.pk]}
                for c in claims if c.pk in verdicts
            ]
        for key in ("prompt_tok_cnt", "response_tok_cnt"):
            if key in doc.metadata:
                record[key] = doc.metadata[key]
        records.append(record)
    return records


# --- FELM ---------------------------------------------------------------------------


def felm_records(project: Project, *, source: str = GOLD) -> list[dict[str, Any]]:
    """One record per document with segments, in FELM's keys (index, source, prompt,
    response, segmented_response, labels, comment, type, ref). With source="gold" the
    labels are the gold `correct` values of the segment items, with their provenance in
    `label_provenance`; otherwise the labels of the named reference system."""
    docs = (Document.objects.filter(project=project, segments__isnull=False).distinct()
            .prefetch_related("segments").order_by("id"))
    reference = None if source == GOLD else _system(project, source, kind=System.REFERENCE)
    golds: dict[tuple[int, str, str], gold.Gold] = {}
    reasons: dict[tuple[int, str], list[str]] = defaultdict(list)
    links: dict[tuple[int, str], list[str]] = defaultdict(list)
    items = {}
    if reference is None:
        judging = [spec.name for spec in kinds.judging(Segment)]
        items = dict(Item.objects.filter(project=project, kind__in=judging).values_list("document_id", "id"))
        golds = {(g.item, g.unit, g.field): g for g in gold.gold_values(project)
                 if g.kind in judging}
        for a in Answer.objects.filter(assignment__item__project=project,
                                       assignment__item__kind__in=judging,
                                       assignment__status=Assignment.SUBMITTED,
                                       field__in=["reason", "links"]).order_by("assignment__annotator_id"):
            target = reasons if a.field == "reason" else links
            target[(a.assignment.item_id, a.unit)] += [a.value] if a.field == "reason" else a.value.split()
    records = []
    for doc in docs:
        segments: list[Segment] = list(doc.segments.all())
        record: dict[str, Any] = {
            "index": doc.external_id.removeprefix("felm:"),
            "source": doc.metadata.get("source", ""),
            "prompt": doc.question,
            "response": doc.response,
            "segmented_response": [s.text for s in segments],
            "domain": doc.domain,
        }
        if reference is not None:
            labels = dict(Verdict.objects.filter(system=reference, segment__in=segments)
                          .values_list("segment_id", "label"))
            record["labels"] = [_bool(labels.get(s.pk)) for s in segments]
            for key in ("comment", "type", "ref"):
                if key in doc.metadata:
                    record[key] = doc.metadata[key]
        else:
            item = items.get(doc.pk)
            if item is None:
                continue
            correct = [golds.get((item, f"segment:{s.position}", "correct")) for s in segments]
            error = [golds.get((item, f"segment:{s.position}", "error_type")) for s in segments]
            record["labels"] = [_bool(g.value) if g else None for g in correct]
            record["label_provenance"] = [g.provenance if g else None for g in correct]
            record["type"] = [g.value if g and c and c.value == "false" else None
                              for g, c in zip(error, correct, strict=True)]
            record["comment"] = [" | ".join(reasons[(item, f"segment:{s.position}")]) for s in segments]
            record["ref"] = list(dict.fromkeys(
                link for s in segments for link in links[(item, f"segment:{s.position}")]))
        records.append(record)
    return records


def _bool(value: str | None) -> bool | None:
    return {"true": True, "false": False}.get(value or "")


# --- FActScore ----------------------------------------------------------------------


def factscore_records(project: Project, *, system: str | None = None,
                      human_system: str | None = None, source: str = GOLD) -> list[dict[str, Any]]:
    """FActScore's labelled format: input, output, topic, annotations[] per sentence with
    model-atomic-facts (and human-atomic-facts) as [{text, label}], label S/NS/IR.
    source="gold" maps the gold verification label of each claim (supported -> S,
    otherwise NS); a reference system name copies its labels."""
    model = _system(project, system, kind=System.EXTRACTOR, default=FACTSCORE_MODEL)
    human = None
    if human_system or project.systems.filter(name=FACTSCORE_HUMAN).exists():
        human = _system(project, human_system or FACTSCORE_HUMAN, kind=System.EXTRACTOR)
    if source == GOLD:
        label_of = {cid: FACTSCORE_LABEL.get(g.value or "") for cid, g in _claim_gold(project).items()}
    else:
        ref = _system(project, source, kind=System.REFERENCE)
        label_of = dict(Verdict.objects.filter(system=ref, claim__isnull=False).values_list("claim_id", "label"))
    records = []
    for cl in (ClaimList.objects.filter(system=model, document__project=project)
               .select_related("document").order_by("document_id")):
        doc = cl.document
        lists = {"model-atomic-facts": cl}
        if human is not None:
            other = ClaimList.objects.filter(system=human, document=doc).first()
            if other is not None:
                lists["human-atomic-facts"] = other
        sentences: dict[int, dict[str, Any]] = {}
        for key, lst in lists.items():
            for c in lst.claims.all():
                index = c.sentence_index if c.sentence_index is not None else 0
                sentence = sentences.setdefault(index, {"text": c.sentence})
                fact: dict[str, Any] = {"text": c.text}
                if label_of.get(c.pk):
                    fact["label"] = label_of[c.pk]
                sentence.setdefault(key, []).append(fact)
        record: dict[str, Any] = {
            "input": f"Question: {doc.question}",
            "output": doc.response,
            "topic": doc.metadata.get("topic", doc.external_id),
            "annotations": None if cl.abstained else [sentences[i] for i in sorted(sentences)],
        }
        if "cat" in doc.metadata:
            record["cat"] = doc.metadata["cat"]
        records.append(record)
    return records


# --- the export registry used by the API ---------------------------------------------


def _param(params: Mapping[str, str], name: str) -> str | None:
    return (params.get(name) or "").strip() or None


def export(project: Project, name: str, *, params: Mapping[str, str]) -> tuple[str, str]:
    """(content, content type) of the named export; ValueError for a bad parameter."""
    kind = _param(params, "kind")
    if name == "answers.csv":
        rows = exports.long_rows(project)
        if kind:
            rows = [r for r in rows if r["kind"] == kind]
        return exports.to_csv(rows, exports.LONG_FIELDS), "text/csv; charset=utf-8"
    if name == "wide.csv":
        return reports.wide_csv(project), "text/csv; charset=utf-8"
    jsonl = "application/jsonl; charset=utf-8"
    if name == "veriscore.jsonl":
        return _jsonl(veriscore_records(project, system=_param(params, "system"),
                                        verifier=_param(params, "verifier"))), jsonl
    if name == "felm.jsonl":
        return _jsonl(felm_records(project, source=_param(params, "source") or GOLD)), jsonl
    if name == "factscore.jsonl":
        return _jsonl(factscore_records(project, system=_param(params, "system"),
                                        source=_param(params, "source") or GOLD)), jsonl
    raise ValueError(f"unknown export {name!r}")


EXPORTS = ["answers.csv", "wide.csv", "veriscore.jsonl", "felm.jsonl", "factscore.jsonl"]
