"""The formats registry (`FORMATS`: every format the platform reads or writes, the one
list the upload page, the API, `import_data`, `export_data` and the manual's table read),
and the files out: VeriScore, FELM, FActScore and SAFE, canonical JSONL, and the long and
wide answer tables.

A format is read by its module of `pipeline.dataformats` (plain Python: the reader is
`pipeline.dataformats.PARSERS[name]`, or for a release the platform's `release.load`);
its writer, which needs the database, is here.

Each writer emits what `ingest` reads back, so a file imported and exported again holds
the same data (tests/annotation/test_formats.py). Human labels come from
`gold.gold_values` (adjudicated, unanimous, majority or tie rule) with their provenance;
imported reference labels (a `System` of kind reference) can be written instead.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db.models import QuerySet

from pipeline import dataformats
from pipeline.dataformats import canonical, factscore, felm, mapped, release, safe, veriscore
from pipeline.dataformats.common import (
    ClaimRecord,
    DocRecord,
    EvidenceRecord,
    ListRecord,
    SegmentRecord,
)
from pipeline.dataformats.factscore import HUMAN as FACTSCORE_HUMAN
from pipeline.dataformats.factscore import MODEL as FACTSCORE_MODEL

from . import exports, gold, kinds
from .models import (
    Answer,
    Assignment,
    Claim,
    ClaimList,
    Document,
    Item,
    Project,
    Segment,
    System,
    Verdict,
)

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
            names = ", ".join(systems.order_by("name").values_list("name", flat=True)) or "none"
            raise ValueError(
                f"no {kind} system named {name!r} in this project (there are: {names})"
            )
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
    return gold.gold_by_target(project, Claim)


# --- database -> format records -----------------------------------------------------


def _records(
    docs: QuerySet[Document],
    lists: dict[str, System],
    labels: dict[str, dict[int, str]],
    *,
    segment_labels: dict[str, dict[int, str]] | None = None,
) -> Iterator[DocRecord]:
    """Each document as the record a reader would give: its claim lists of the given
    systems (key -> system), claims with evidence and the labels of `labels` (name ->
    claim id -> label), and with `segment_labels` (name -> segment id -> label) its
    segments."""
    segments = segment_labels is not None
    claim_lists: dict[tuple[int, str], ClaimList] = {}
    by_system = {s.pk: key for key, s in lists.items()}
    for cl in ClaimList.objects.filter(
        document__in=docs, system__in=lists.values()
    ).prefetch_related("claims__evidence"):
        claim_lists[(cl.document_id, by_system[cl.system_id])] = cl
    for doc in docs.prefetch_related("segments") if segments else docs:
        record = DocRecord(
            0,
            doc.external_id,
            doc.response,
            doc.question,
            doc.domain,
            doc.source_model,
            doc.metadata,
        )
        for key in lists:
            found = claim_lists.get((doc.pk, key))
            if found is None:
                continue
            cl = found
            record.lists[key] = ListRecord(
                [
                    ClaimRecord(
                        c.text,
                        c.sentence_index,
                        c.sentence,
                        {name: by_id[c.pk] for name, by_id in labels.items() if c.pk in by_id},
                        [EvidenceRecord(e.title, e.snippet, e.link) for e in c.evidence.all()],
                    )
                    for c in cl.claims.all()
                ],
                cl.abstained,
            )
        if segments:
            record.segments = [
                SegmentRecord(
                    s.text,
                    {
                        name: by_id[s.pk]
                        for name, by_id in (segment_labels or {}).items()
                        if s.pk in by_id
                    },
                )
                for s in doc.segments.all()
            ]
        yield record


def _documents(project: Project, source_model: str | None) -> QuerySet[Document]:
    docs = Document.objects.filter(project=project).order_by("id")
    return docs.filter(source_model=source_model) if source_model else docs


# --- VeriScore ----------------------------------------------------------------------


def veriscore_records(
    project: Project,
    *,
    system: str | None = None,
    verifier: str | None = None,
    source_model: str | None = None,
) -> list[dict[str, Any]]:
    """One record per document with the extractor's claims, in VeriScore's output keys:
    question, response, model, prompt_source, claim_list (per sentence), all_claims,
    claim_search_results ({claim: [{title, snippet, link}]}) and
    claim_verification_result ([{claim, search_results, verification_result}]); the keys
    a published record had, as it had them."""
    extractor = _system(project, system, kind=System.EXTRACTOR)
    verifier_system = None
    claim_ids = Claim.objects.filter(claim_list__system=extractor)
    if verifier:
        verifier_system = _system(project, verifier, kind=System.VERIFIER)
    else:
        used = System.objects.filter(verdicts__claim__in=claim_ids, kind=System.VERIFIER).distinct()
        if used.count() == 1:
            verifier_system = used.get()
    labels = {}
    if verifier_system is not None:
        labels[verifier_system.name] = dict(
            Verdict.objects.filter(system=verifier_system, claim__in=claim_ids).values_list(
                "claim_id", "label"
            )
        )
    docs = _documents(project, source_model).filter(claim_lists__system=extractor)
    verifier = verifier_system.name if verifier_system else None
    return [
        veriscore.write(r, system=extractor.name, verifier=verifier)
        for r in _records(docs, {extractor.name: extractor}, labels)
    ]


# --- FELM ---------------------------------------------------------------------------


def felm_records(
    project: Project, *, source: str = GOLD, source_model: str | None = None
) -> list[dict[str, Any]]:
    """One record per document with segments, in FELM's keys (index, source, prompt,
    response, segmented_response, labels, comment, type, ref). With source="gold" the
    labels are the gold `correct` values of the segment items, with their provenance in
    `label_provenance`; otherwise the labels of the named reference system, and the
    record as published."""
    docs = _documents(project, source_model).filter(segments__isnull=False).distinct()
    reference = None if source == GOLD else _system(project, source, kind=System.REFERENCE)
    if reference is not None:
        labels = {
            reference.name: dict(
                Verdict.objects.filter(system=reference, segment__document__in=docs).values_list(
                    "segment_id", "label"
                )
            )
        }
        return [
            felm.write(r, labels=reference.name)
            for r in _records(docs, {}, {}, segment_labels=labels)
        ]
    golds: dict[tuple[int, str, str], gold.Gold] = {}
    reasons: dict[tuple[int, str], list[str]] = defaultdict(list)
    links: dict[tuple[int, str], list[str]] = defaultdict(list)
    judging = [spec.name for spec in kinds.judging(Segment)]
    items = dict(
        Item.objects.filter(project=project, kind__in=judging).values_list("document_id", "id")
    )
    golds = {(g.item, g.unit, g.field): g for g in gold.gold_values(project) if g.kind in judging}
    for a in Answer.objects.filter(
        assignment__item__project=project,
        assignment__item__deletion=None,
        assignment__item__kind__in=judging,
        assignment__status=Assignment.SUBMITTED,
        field__in=["reason", "links"],
    ).order_by("assignment__annotator_id"):
        target = reasons if a.field == "reason" else links
        target[(a.assignment.item_id, a.unit)] += (
            [a.value] if a.field == "reason" else a.value.split()
        )
    records = []
    for doc in docs.prefetch_related("segments"):
        item = items.get(doc.pk)
        if item is None:
            continue
        segments: list[Segment] = list(doc.segments.all())
        record = {
            "index": doc.external_id.rsplit(":", 1)[-1],
            "source": doc.metadata.get("source", ""),
            "prompt": doc.question,
            "response": doc.response,
            "segmented_response": [s.text for s in segments],
            "domain": doc.domain,
        }
        correct = [golds.get((item, f"segment:{s.position}", "correct")) for s in segments]
        error = [golds.get((item, f"segment:{s.position}", "error_type")) for s in segments]
        record["labels"] = [_bool(g.value) if g else None for g in correct]
        record["label_provenance"] = [g.provenance if g else None for g in correct]
        record["type"] = [
            g.value if g and c and c.value == "false" else None
            for g, c in zip(error, correct, strict=True)
        ]
        record["comment"] = [" | ".join(reasons[(item, f"segment:{s.position}")]) for s in segments]
        record["ref"] = list(
            dict.fromkeys(link for s in segments for link in links[(item, f"segment:{s.position}")])
        )
        records.append(record)
    return records


def _bool(value: str | None) -> bool | None:
    return {"true": True, "false": False}.get(value or "")


# --- FActScore ----------------------------------------------------------------------


def factscore_records(
    project: Project,
    *,
    system: str | None = None,
    human_system: str | None = None,
    source: str = GOLD,
    source_model: str | None = None,
) -> list[dict[str, Any]]:
    """FActScore's labelled format: input, output, topic, annotations[] per sentence with
    model-atomic-facts (and human-atomic-facts) as [{text, label}], label S/NS/IR.
    source="gold" maps the gold verification label of each claim (supported -> S,
    otherwise NS); a reference system name copies its labels. Records of several source
    models carry a `source_model` key; `source_model` selects one model's records."""
    model = _system(project, system, kind=System.EXTRACTOR, default=FACTSCORE_MODEL)
    lists = {FACTSCORE_MODEL: model}
    if human_system or project.systems.filter(name=FACTSCORE_HUMAN).exists():
        lists[FACTSCORE_HUMAN] = _system(
            project, human_system or FACTSCORE_HUMAN, kind=System.EXTRACTOR
        )
    if source == GOLD:
        labels = {
            GOLD: {
                cid: FACTSCORE_LABEL[g.value]
                for cid, g in _claim_gold(project).items()
                if g.value in FACTSCORE_LABEL
            }
        }
    else:
        ref = _system(project, source, kind=System.REFERENCE)
        labels = {
            ref.name: dict(
                Verdict.objects.filter(system=ref, claim__isnull=False).values_list(
                    "claim_id", "label"
                )
            )
        }
    docs = _documents(project, source_model).filter(claim_lists__system=model)
    several = not source_model and docs.values("source_model").distinct().count() > 1
    return [
        factscore.write(r, labels=next(iter(labels)), with_model=several)
        for r in _records(docs, lists, labels)
    ]


# --- canonical ----------------------------------------------------------------------


def canonical_records(project: Project, *, source_model: str | None = None) -> list[dict[str, Any]]:
    """Every document with all its claim lists (claims, evidence, every system's verdicts),
    its segments and their labels, in the platform's own JSONL."""
    docs = _documents(project, source_model)
    lists = {s.name: s for s in project.systems.filter(claim_lists__isnull=False).distinct()}
    claim_labels: dict[str, dict[int, str]] = defaultdict(dict)
    segment_labels: dict[str, dict[int, str]] = defaultdict(dict)
    for name, claim, segment, label in Verdict.objects.filter(system__project=project).values_list(
        "system__name", "claim_id", "segment_id", "label"
    ):
        if claim is not None:
            claim_labels[name][claim] = label
        else:
            segment_labels[name][segment] = label
    references = set(project.systems.filter(kind=System.REFERENCE).values_list("name", flat=True))
    out = []
    for r in _records(docs, lists, claim_labels, segment_labels=segment_labels):
        used = {n for lst in r.lists.values() for c in lst.claims for n in c.verdicts}
        used |= {n for s in r.segments for n in s.verdicts}
        r.verdict_kinds = {n: System.REFERENCE for n in sorted(used & references)}
        out.append(canonical.write(r))
    return out


# --- SAFE ---------------------------------------------------------------------------


def safe_file(
    project: Project,
    *,
    system: str | None = None,
    verifier: str | None = None,
    source_model: str | None = None,
) -> dict[str, Any]:
    """SAFE's results file: the claim lists of `system` (default: safe) with the labels
    of `verifier` (default: <system>-rater) and their searches, per prompt and side."""
    extractor = _system(project, system, kind=System.EXTRACTOR, default=safe.NAME)
    rater = verifier or f"{extractor.name}-rater"
    labels = {
        rater: dict(
            Verdict.objects.filter(
                system__project=project, system__name=rater, claim__claim_list__system=extractor
            ).values_list("claim_id", "label")
        )
    }
    docs = _documents(project, source_model).filter(claim_lists__system=extractor)
    records = list(_records(docs, {extractor.name: extractor}, labels))
    return safe.write_file(records, system=extractor.name, verifier=rater)


# --- the registry ---------------------------------------------------------------------

Writer = Callable[[Project, Mapping[str, str]], tuple[str, str]]
JSONL = "application/jsonl; charset=utf-8"
CSV = "text/csv; charset=utf-8"

# The writers' parameters (query parameters of the API's export, options of export_data)
PARAMS = {
    "source": "the labels: 'gold' (the annotators'; the default once there is a gold "
    "label, refused naming the sources before) or a reference system, e.g. felm-labels",
    "system": "the extractor whose claims to write (default: the only one)",
    "verifier": "the system whose labels to write",
    "source_model": "only this model's documents",
    "kind": "only this kind's answers",
}


@dataclass(frozen=True)
class Format:
    """One format: what it is (`description`), its files' extensions (the first names an
    export: `veriscore.jsonl`), whether the platform reads it (its reader is
    `pipeline.dataformats.PARSERS[name]`, or an archive of `ARCHIVE_FORMATS` read whole),
    and its `writer` with the parameters it takes (None: read only)."""

    name: str
    description: str
    extensions: tuple[str, ...] = ("jsonl",)
    writer: Writer | None = None
    params: tuple[str, ...] = ()

    @property
    def reads(self) -> bool:
        return self.name in dataformats.FORMATS

    @property
    def archive(self) -> bool:
        """Read whole from a zip or a folder (a release: `release.load`), not line by line."""
        return self.name in dataformats.ARCHIVE_FORMATS

    @property
    def export_name(self) -> str:
        return f"{self.name}.{self.extensions[0]}"


def _param(params: Mapping[str, str], name: str) -> str | None:
    return (params.get(name) or "").strip() or None


def _source(project: Project, params: Mapping[str, str], target: type[Claim | Segment]) -> str:
    """The label source of a FELM or FActScore export: `source`, else "gold" once the
    annotators have given a gold label; before that a ValueError naming the sources."""
    chosen = _param(params, "source")
    if chosen or gold.gold_by_target(project, target):
        return chosen or GOLD
    on = target._meta.model_name  # the Verdict field: claim or segment
    names = (
        project.systems.filter(kind=System.REFERENCE, **{f"verdicts__{on}__isnull": False})
        .distinct()
        .order_by("name")
        .values_list("name", flat=True)
    )
    raise ValueError(
        f"no {on} has a gold label from the annotators yet, so the default source "
        f"(gold) has no labels: choose a source, one of {', '.join(names) or 'none'}"
    )


def _answers(project: Project, params: Mapping[str, str]) -> tuple[str, str]:
    rows = exports.long_rows(project)
    kind = _param(params, "kind")
    if kind:
        rows = [r for r in rows if r["kind"] == kind]
    return exports.to_csv(rows, exports.LONG_FIELDS), CSV


def _wide(project: Project, params: Mapping[str, str]) -> tuple[str, str]:
    return exports.wide_csv(project), CSV


def _canonical(project: Project, params: Mapping[str, str]) -> tuple[str, str]:
    return _jsonl(canonical_records(project, source_model=_param(params, "source_model"))), JSONL


def _veriscore(project: Project, params: Mapping[str, str]) -> tuple[str, str]:
    records = veriscore_records(
        project,
        system=_param(params, "system"),
        verifier=_param(params, "verifier"),
        source_model=_param(params, "source_model"),
    )
    return _jsonl(records), JSONL


def _safe(project: Project, params: Mapping[str, str]) -> tuple[str, str]:
    data = safe_file(
        project,
        system=_param(params, "system"),
        verifier=_param(params, "verifier"),
        source_model=_param(params, "source_model"),
    )
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n", "application/json"


def _felm(project: Project, params: Mapping[str, str]) -> tuple[str, str]:
    source = _source(project, params, Segment)
    records = felm_records(project, source=source, source_model=_param(params, "source_model"))
    return _jsonl(records), JSONL


def _factscore(project: Project, params: Mapping[str, str]) -> tuple[str, str]:
    records = factscore_records(
        project,
        system=_param(params, "system"),
        source=_source(project, params, Claim),
        source_model=_param(params, "source_model"),
    )
    return _jsonl(records), JSONL


def _registry(*formats: Format) -> dict[str, Format]:
    """The formats by name; every format `pipeline.dataformats` reads has an entry."""
    registry = {f.name: f for f in formats}
    missing = [name for name in dataformats.FORMATS if name not in registry]
    if missing or len(registry) != len(formats):
        raise ImproperlyConfigured(
            f"annotation.formats.FORMATS: no entry for {', '.join(missing)} (read by "
            "pipeline.dataformats), or a name twice"
        )
    return registry


FORMATS = _registry(
    Format(
        canonical.NAME,
        "The platform's own JSON Lines: a document per line with its claim lists, "
        "evidence, every system's labels and its segments",
        writer=_canonical,
        params=("source_model",),
    ),
    Format(
        veriscore.NAME,
        "VeriScore's output: claims per sentence, search results, verification labels "
        "(also the pipeline's claims_, evidence_ and verification_ files)",
        writer=_veriscore,
        params=("system", "verifier", "source_model"),
    ),
    Format(
        veriscore.INPUT,
        "VeriScore's input: question, response, model, prompt_source",
    ),
    Format(
        factscore.NAME,
        "FActScore's labelled data: atomic facts per sentence, labelled S, NS or IR",
        writer=_factscore,
        params=("source", "system", "source_model"),
    ),
    Format(
        felm.NAME,
        "FELM: segmented responses with their labels, error types, comments and references",
        writer=_felm,
        params=("source", "source_model"),
    ),
    Format(
        safe.NAME,
        "SAFE's results file: one JSON object, claims per prompt and side with the "
        "rater's labels and searches",
        extensions=("json",),
        writer=_safe,
        params=("system", "verifier", "source_model"),
    ),
    Format(
        mapped.NAME,
        "Any other layout, read through a mapping file of JMESPath expressions",
        extensions=("jsonl", "json"),
    ),
    Format(
        release.NAME,
        "A released study (the platform's dataset release, a zip) into a new project",
        extensions=("zip",),
    ),
    Format(
        "answers",
        "The answers, one row per (item, unit, field, annotator) (the long table)",
        extensions=("csv",),
        writer=_answers,
        params=("kind",),
    ),
    Format(
        "wide",
        "The answers, one row per unit and a column per annotator and field",
        extensions=("csv",),
        writer=_wide,
    ),
)
# the upload page's, the API's and import_data's choices of `format`
IMPORT_CHOICES = ("auto", *(f.name for f in FORMATS.values() if f.reads))
# the API's exports and export_data's --format: a writer's name with its extension
EXPORTS = {f.export_name: f for f in FORMATS.values() if f.writer is not None}


def export(project: Project, name: str, *, params: Mapping[str, str]) -> tuple[str, str]:
    """(content, content type) of the named export; ValueError for a bad parameter."""
    found = EXPORTS.get(name)
    if found is None or found.writer is None:
        raise ValueError(f"unknown export {name!r}; one of {', '.join(EXPORTS)}")
    return found.writer(project, params)


def param_help(param: str) -> str:
    """A writer's parameter, with the exports that take it."""
    takers = [name for name, f in EXPORTS.items() if param in f.params]
    return f"{' / '.join(takers)}: {PARAMS[param]}"


def format_table() -> str:
    """The manual's table of formats (docs/researchers/importing.md), in Markdown."""
    rows = ["| format | files | read | written as | what it is |", "|---|---|---|---|---|"]
    for f in FORMATS.values():
        written = f"`{f.export_name}`" if f.writer else ""
        extensions = ", ".join(f".{e}" for e in f.extensions)
        rows.append(
            f"| `{f.name}` | {extensions} | {'yes' if f.reads else ''} | {written} "
            f"| {f.description} |"
        )
    return "\n".join(rows) + "\n"
