"""The rows of a release's five tables (items, annotations, gold, metric_outputs,
agreement), read in bulk (a few queries per table, whatever the project's size).

Nothing personal goes in: annotators are named by their membership pseudonym (A<n>,
R<n>: fixed for the project, so stable within a release and across releases), items by
their position in the release (1, 2, ... in item order), never by a database id. Account
names, emails, crowd worker ids, addresses and who adjudicated are never read here.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from .. import gold, hiring, kinds
from ..answers import read_answers
from ..kinds.base import ItemInfo
from ..models import Answer, Assignment, Claim, Evidence, Item, Project, Segment, System, Verdict
from ..reports import SECTIONS
from ..reports.queries import member_names, report_data
from ..reports.tables import Filters, Section, Table, isolated

REGULAR = "regular"
SEGMENT_UNIT = "segment:"  # a unit of the response's segments: "segment:<position>"
CHUNK = 20_000

Row = dict[str, Any]


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


class ReleaseIds:
    """Item id -> its number in the release (1, 2, ... in item order) and each item's
    role; read once per release."""

    def __init__(self, project: Project) -> None:
        pks = Item.objects.filter(project=project).order_by("pk").values_list("pk", flat=True)
        self.number = {pk: i for i, pk in enumerate(pks.iterator(chunk_size=CHUNK), 1)}
        self.quality = {
            q.item_id: q
            for q in hiring.QualityItem.objects.filter(item__project=project).only(
                "item_id", "role", "reference", "explanation"
            )
        }
        self.names = member_names(project, real_names=False)

    def role(self, item: int) -> str:
        q = self.quality.get(item)
        return q.role if q else REGULAR


# --- items ---------------------------------------------------------------------------


def _claim_texts(list_ids: set[int]) -> dict[int, list[str]]:
    texts: dict[int, list[str]] = defaultdict(list)
    claims = Claim.objects.filter(claim_list__in=list_ids).order_by("claim_list_id", "position")
    for cl, text in claims.values_list("claim_list_id", "text").iterator(chunk_size=CHUNK):
        texts[cl].append(text)
    return texts


def _evidence(claim_ids: set[int]) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = Evidence.objects.filter(claim__in=claim_ids).order_by("claim_id", "rank")
    for claim, rank, title, link, snippet in rows.values_list(
        "claim_id", "rank", "title", "link", "snippet"
    ).iterator(chunk_size=CHUNK):
        found[claim].append({"rank": rank, "title": title, "link": link, "snippet": snippet})
    return found


def _segments(documents: set[int]) -> dict[int, list[dict[str, Any]]]:
    found: dict[int, list[dict[str, Any]]] = defaultdict(list)
    # every segment, an empty one too (never a unit, but it keeps the positions)
    rows = Segment.objects.filter(document__in=documents).order_by("document", "position")
    for doc, position, text in rows.values_list("document_id", "position", "text").iterator(
        chunk_size=CHUNK
    ):
        found[doc].append({"position": position, "text": text})
    return found


def expected_units(
    project: Project, infos: dict[int, ItemInfo]
) -> dict[int, list[tuple[str, str]]]:
    by_kind: dict[str, dict[int, ItemInfo]] = defaultdict(dict)
    for pk, info in infos.items():
        by_kind[info.kind][pk] = info
    expected: dict[int, list[tuple[str, str]]] = {}
    for name, of_kind in by_kind.items():
        expected.update(kinds.get(name).expected(project, of_kind))
    return expected


ITEM_COLUMNS = (
    "pk",
    "kind",
    "document_id",
    "document__external_id",
    "document__domain",
    "document__question",
    "document__response",
    "document__source_model",
    "claim_id",
    "claim__text",
    "claim__claim_list__system__name",
    "claim__position",
    "list_a_id",
    "list_a__system__name",
    "list_b_id",
    "list_b__system__name",
)


def item_rows(project: Project, ids: ReleaseIds) -> Iterator[Row]:
    """One row per item: the document, and what the item showed (its claim with the
    search results, its claim lists, the response's segments), the (unit, field) pairs it
    asks, its role and, for a training, check or example item, the reference answer."""
    items = Item.objects.filter(project=project).order_by("pk")
    infos = ItemInfo.read(items)
    expected = expected_units(project, infos)
    rows = list(items.values_list(*ITEM_COLUMNS).iterator(chunk_size=CHUNK))
    lists = _claim_texts({r[12] for r in rows if r[12]} | {r[14] for r in rows if r[14]})
    evidence = _evidence({r[8] for r in rows if r[8]})
    with_segments = {
        r[2] for r in rows if any(u.startswith(SEGMENT_UNIT) for u, _ in expected.get(r[0], []))
    }
    segments = _segments(with_segments)
    for pk, kind, doc, ext, domain, question, response, model, claim, *rest in rows:
        text, claim_system, claim_position, la, sa, lb, sb = rest
        q = ids.quality.get(pk)
        yield {
            "item": ids.number[pk],
            "kind": kind,
            "role": ids.role(pk),
            "document": ext,
            "domain": domain,
            "question": question,
            "response": response,
            "source_model": model,
            "claim": text,
            "claim_system": claim_system,
            "claim_position": claim_position,
            "evidence": _json(evidence.get(claim, [])) if claim else None,
            "list_a_system": sa,
            "list_a_claims": _json(lists.get(la, [])) if la else None,
            "list_b_system": sb,
            "list_b_claims": _json(lists.get(lb, [])) if lb else None,
            "segments": _json(segments.get(doc, [])) if doc in with_segments else None,
            "units": _json([f"{u}.{f}" for u, f in expected.get(pk, [])]),
            "reference": _json(q.reference) if q else None,
            "explanation": q.explanation if q else None,
        }


# --- annotations ---------------------------------------------------------------------


def annotation_rows(project: Project, ids: ReleaseIds) -> Iterator[Row]:
    """One row per submitted answer (annotator x unit x field) of every item but the
    instruction examples: the value as the kind compares it (a comparison's choice as
    the chosen system's name) and as stored, the item's active time, its role, and on a
    training or check item whether the answer matched the reference."""
    answers = (
        Answer.objects.filter(
            assignment__item__project=project, assignment__status=Assignment.SUBMITTED
        )
        .exclude(assignment__item__quality__role=hiring.EXAMPLE)
        .order_by("assignment__item_id", "assignment__annotator_id", "unit", "field")
        .values_list(
            "assignment__item_id",
            "assignment__item__kind",
            "assignment__annotator_id",
            "assignment__swapped",
            "assignment__guideline_version",
            "assignment__active_seconds",
            "assignment__item__list_a__system__name",
            "assignment__item__list_b__system__name",
            "unit",
            "field",
            "value",
        )
    )
    specs = {spec.name: spec for spec in kinds.all_specs()}
    references = {pk: q.reference_pairs() for pk, q in ids.quality.items()}
    for item, kind, user, swapped, version, seconds, sa, sb, unit, fld, value in answers.iterator(
        chunk_size=CHUNK
    ):
        spec = specs[kind]
        compared = spec.comparable(fld, value, swapped)
        reference = references.get(item, {}).get((unit, fld))
        yield {
            "item": ids.number[item],
            "kind": kind,
            "annotator": ids.names.get(user, "A?"),
            "unit": unit,
            "field": fld,
            "value": spec.export_value(fld, compared, (sa, sb)),
            "value_as_stored": value,
            "presented_swapped": swapped,
            "guideline_version": version,
            "active_seconds": round(seconds, 1),
            "item_role": ids.role(item),
            "check_passed": None if reference is None else compared == reference,
        }


# --- gold ----------------------------------------------------------------------------


def gold_method(project: Project) -> str:
    """The project's gold method, as the gold seam names it (`Project.gold_method`)."""
    return project.gold_method


def unit_golds(project: Project) -> list[gold.Gold]:
    """Every answered unit's gold through the gold seam (`gold.field_golds`, called by
    `gold.gold_values`): an adjudicated value, else the project's method. The one call
    of the seam in a release."""
    return gold.gold_values(project, answers=read_answers(project))


def gold_rows(project: Project, ids: ReleaseIds) -> Iterator[Row]:
    """One row per answered unit of the regular items: its gold value (as the kind
    compares it, and as the annotations' `value` names it), how it was decided, the
    method's confidence and the votes."""
    systems = dict(
        (pk, (a, b))
        for pk, a, b in Item.objects.filter(project=project).values_list(
            "pk", "list_a__system__name", "list_b__system__name"
        )
    )
    specs = {spec.name: spec for spec in kinds.all_specs()}
    for g in unit_golds(project):
        value = g.value
        shown = specs[g.kind].export_value(g.field, value, systems[g.item]) if value else value
        yield {
            "item": ids.number[g.item],
            "kind": g.kind,
            "unit": g.unit,
            "field": g.field,
            "value": shown,
            "value_code": value,
            "decided_by": g.provenance,
            "method": g.method,
            "confidence": g.confidence,
            "votes": _json(g.votes),
            "annotations": sum(g.votes.values()),
            "note": g.note,
        }


# --- metric outputs ------------------------------------------------------------------


def _system_meta(project: Project) -> dict[int, dict[str, Any]]:
    meta = {}
    for s in System.objects.filter(project=project).select_related("pipeline_run"):
        run = s.pipeline_run
        recorded = (run.scores or {}).get("run", {}) if run else {}
        config = s.config if isinstance(s.config, dict) else {}
        meta[s.pk] = {
            "name": s.name,
            "kind": s.kind,
            "origin": s.origin,
            "model": s.model or None,
            "prompt_version": s.prompt_version or None,
            # a run's scores record these; an imported release's systems keep them in config
            "mode": recorded.get("mode") or config.get("mode") or config.get("reference"),
            "templates": recorded.get("templates") or config.get("templates"),
            "label_mode": recorded.get("label_mode") or config.get("label_mode"),
        }
    return meta


def metric_rows(project: Project, ids: ReleaseIds) -> Iterator[Row]:
    """One row per claim and verifier verdict on it (a claim without one: one row, no
    verdict), each with how its system made it: model, mode, prompt version, templates
    (their hash for a folder of prompts) as the scores files record."""
    meta = _system_meta(project)
    verdicts: dict[int, list[tuple[int | None, str | None]]] = defaultdict(list)
    for claim, verifier, label in (
        Verdict.objects.filter(claim__claim_list__document__project=project)
        .order_by("claim_id", "system__name")
        .values_list("claim_id", "system_id", "label")
        .iterator(chunk_size=CHUNK)
    ):
        verdicts[claim].append((verifier, label))
    claims = (
        Claim.objects.filter(claim_list__document__project=project)
        .order_by("claim_list__document__external_id", "claim_list__system__name", "position")
        .values_list(
            "pk", "claim_list__document__external_id", "claim_list__system_id", "position", "text"
        )
    )
    for pk, document, extractor, position, text in claims.iterator(chunk_size=CHUNK):
        ext = meta[extractor]
        for judged_by, verdict in verdicts.get(pk) or [(None, None)]:
            ver = meta[judged_by] if judged_by else {}
            yield {
                "document": document,
                "extractor": ext["name"],
                "extractor_origin": ext["origin"],
                "extraction_model": ext["model"],
                "extraction_prompt_version": ext["prompt_version"],
                "claim_position": position,
                "claim": text,
                "verifier": ver.get("name"),
                "verifier_kind": ver.get("kind"),
                "verifier_origin": ver.get("origin"),
                "verification_model": ver.get("model"),
                "verification_prompt_version": ver.get("prompt_version"),
                "verdict": verdict,
                "mode": ver.get("mode") or ext["mode"],
                "templates": ver.get("templates") or ext["templates"],
                "label_mode": ver.get("label_mode"),
            }


# --- agreement -----------------------------------------------------------------------

AGREEMENT_SECTIONS = ("agreement", "verifiers")


def report_sections(project: Project, *, bootstrap: int, seed: int = 0) -> list[Section]:
    """The report's agreement and verifier sections (annotators by pseudonym)."""
    data = report_data(
        project,
        filters=Filters(),
        names=member_names(project, real_names=False),
        bootstrap=bootstrap,
        seed=seed,
        k_rule="upper",
        with_charts=False,
    )
    sections: list[Section] = []
    for slug in AGREEMENT_SECTIONS:
        title, build = SECTIONS[slug]
        sections += isolated(slug, title, lambda build=build: build(data))  # type: ignore[misc]
    return sections


def _cell(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float):
        return repr(value)
    return str(value)


# a report's listings of single units (Fleiss' P_i per unit, the units where a system and
# the gold label disagree): they follow from `annotations` and `gold`, and at 100,000
# items they were 1.4 of the 1.6 million cells (900 MB of JSON lines)
PER_UNIT_COLUMNS = ("unit", "claim or segment id")


def released_tables(section: Section) -> list[Table]:
    """The section's tables a release keeps: all but the listings of single units."""
    return [t for t in section.tables if not set(PER_UNIT_COLUMNS) & set(t.columns)]


def agreement_rows(sections: list[Section]) -> Iterator[Row]:
    """The tables of `sections` (`released_tables`) in long form: one row per cell (every
    coefficient with its interval columns as the report shows them), values as text."""
    for section in sections:
        for table in released_tables(section):
            for r, row in enumerate(table.rows):
                for column, value in zip(table.columns, row, strict=True):
                    yield {
                        "section": section.title,
                        "table": table.name,
                        "table_title": table.title,
                        "row": r,
                        "column": column,
                        "value": _cell(value),
                        "note": table.note,
                    }
