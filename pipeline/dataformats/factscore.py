"""FActScore's labelled JSONL (Min et al., 2023): one biography per line,
{input, output, topic, cat?, annotations: null (the model abstained) |
 [{text, is-relevant, model-atomic-facts: [{text, label?}] | null,
   human-atomic-facts: [{text, label: S|NS|IR}] | null}]}.

Model and human atomic facts become two claim lists; the human S/NS/IR labels a
reference verdict set. The file does not name its model: it comes from the option,
a `source_model` key (our exports of several models), or the file name.
"""

from __future__ import annotations

from typing import Any

from .common import (
    REFERENCE,
    SOURCE,
    ClaimRecord,
    DocRecord,
    Line,
    LineError,
    ListRecord,
    json_type,
)

NAME = "factscore"
MODEL = "factscore-model-facts"
HUMAN = "factscore-human-facts"
LABELS = "factscore-human-labels"
FACT_KEYS = {"model-atomic-facts": MODEL, "human-atomic-facts": HUMAN}
KEYS = {"input", "output", "topic", "cat", "annotations", "source_model"}


def parse(line: Line) -> DocRecord | None:
    prompt = line.get("input", str, required=True)
    output = line.get("output", str)
    if output is None:
        line.error("output", "is missing")
    topic = line.get("topic", str, required=True)
    annotations = line.get("annotations", list)
    if output == "" and annotations is not None:
        line.warn("output", "is empty but the record has annotations")
    source_model = (
        line.reader.options.get("source_model")
        or line.get("source_model", str)
        or line.file.rsplit("/", 1)[-1].removesuffix(".jsonl")
    )
    lists: dict[str, list[ClaimRecord]] = {MODEL: [], HUMAN: []}
    skeleton = []
    for i, ann in enumerate(annotations or []):
        if not isinstance(ann, dict):
            line.error(f"annotations[{i}]", f"must be an object, not {json_type(ann)}")
            continue
        sentence = ann.get("text")
        if not isinstance(sentence, str):
            line.error(f"annotations[{i}].text", "must be a string")
            continue
        if not isinstance(ann.get("is-relevant", True), bool):
            line.error(f"annotations[{i}].is-relevant", "must be true or false")
        skeleton.append(
            {k: (v if k not in FACT_KEYS else None if v is None else []) for k, v in ann.items()}
        )
        for key, system in FACT_KEYS.items():
            facts = ann.get(key)
            if facts is None:
                continue
            if not isinstance(facts, list):
                line.error(f"annotations[{i}].{key}", f"must be a list, not {json_type(facts)}")
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
                for extra in set(fact) - {"text", "label"}:
                    line.reader.warn_once(
                        f"fact:{extra}",
                        LineError(
                            line.file,
                            line.line,
                            f"{where}.{extra}",
                            "is not a FActScore fact field: not kept",
                        ),
                    )
                if not fact["text"].strip():
                    line.error(f"{where}.text", "is empty")
                    continue
                verdicts = {LABELS: label} if label else {}
                lists[system].append(ClaimRecord(fact["text"], i, sentence, verdicts))
    if line.failed:
        return None
    assert prompt is not None and output is not None and topic is not None
    abstained = annotations is None
    question = prompt.removeprefix("Question:").strip()
    metadata = line.unknown_keys(KEYS, NAME)
    metadata.update({k: line.obj[k] for k in ("topic", "cat") if k in line.obj})
    source: dict[str, Any] = {"format": NAME, "keys": list(line.obj), "annotations": skeleton}
    if f"Question: {question}" != prompt:
        source["input"] = prompt
    metadata[SOURCE] = source
    return DocRecord(
        line.line,
        f"{source_model}:{topic}",
        output,
        question,
        "Biography",
        source_model,
        metadata,
        {name: ListRecord(claims, abstained) for name, claims in lists.items()},
        verdict_kinds={LABELS: REFERENCE},
    )


def write(record: DocRecord, *, labels: str, with_model: bool = False) -> dict[str, Any]:
    """FActScore's record of a document with the lists MODEL (and HUMAN), fact labels
    taken from the verdict set `labels` (S/NS/IR)."""
    source = record.source() if record.source().get("format") == NAME else {}
    model = record.lists[MODEL]
    facts: dict[tuple[str, int], list[dict[str, str]]] = {}
    sentences: dict[int, str] = {}
    for key, system in FACT_KEYS.items():
        for c in record.lists[system].claims if system in record.lists else []:
            index = c.sentence_index if c.sentence_index is not None else 0
            sentences.setdefault(index, c.sentence)
            fact = {"text": c.text}
            if c.verdicts.get(labels):
                fact["label"] = c.verdicts[labels]
            facts.setdefault((key, index), []).append(fact)
    skeleton = source.get("annotations")
    if skeleton is None:
        skeleton = [
            {
                "text": sentences[i],
                **{k: [] for k in FACT_KEYS if k == "model-atomic-facts" or HUMAN in record.lists},
            }
            for i in sorted(sentences)
        ]
    annotations = []
    for i, s in enumerate(skeleton):
        entry = dict(s)
        for key in FACT_KEYS:
            if entry.get(key) is not None:
                entry[key] = facts.get((key, i), [])
        annotations.append(entry)
    out: dict[str, Any] = {
        "input": source.get("input", f"Question: {record.question}"),
        "output": record.response,
        "topic": record.metadata.get("topic", record.external_id),
        "annotations": None if model.abstained else annotations,
        **record.extras(NAME),
    }
    if with_model:
        out["source_model"] = record.source_model
    return out
