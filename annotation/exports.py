"""The answer exports: the long format (one row per answer, with its unit's gold) and the
wide diagnosis table (one row per unit, one column per annotator)."""

from __future__ import annotations

import io
import json
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from django.db.models import Q, QuerySet
from django.http import Http404, HttpResponse

from . import hiring, kinds, safecsv
from .gold import gold_values
from .kinds import ReportKind
from .kinds.base import Field, ItemInfo
from .models import Answer, Assignment, Item, Project, pseudonyms
from .reports.queries import annotator_choices, assignment_filter, member_names
from .reports.tables import Filters

LONG_FIELDS = [
    "item",
    "kind",
    "document",
    "domain",
    "unit",
    "field",
    "value",
    "annotator",
    "status",
    "list1_system",
    "list2_system",
    "guideline_version",
    "started_at",
    "submitted_at",
    "active_seconds",
    "answered_at",
    "gold",
    "gold_provenance",
    "gold_method",
    "gold_confidence",
    "item_role",
]


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def long_rows(project: Project, *, real_names: bool = False) -> list[dict[str, Any]]:
    """One row per answer, with its unit's gold by the project's gold method
    (`gold_method`: the method or "adjudicated"; `gold_confidence`: the value's vote share
    or posterior, 1 when adjudicated)."""
    names = pseudonyms(project)
    golds = {(g.item, g.unit, g.field): g for g in gold_values(project)}
    # training and known-answer items: their answers are listed, marked, and left out of
    # gold and every statistic (as the report does)
    roles = dict(
        hiring.QualityItem.objects.filter(item__project=project).values_list("item_id", "role")
    )
    answers = (
        Answer.objects.filter(assignment__item__project=project, assignment__item__deletion=None)
        .exclude(assignment__item__quality__role=hiring.EXAMPLE)  # shown, never work
        .select_related(
            "assignment__annotator",
            "assignment__item__document",
            "assignment__item__list_a__system",
            "assignment__item__list_b__system",
        )
        .order_by("assignment__item_id", "assignment__annotator_id", "unit", "field")
    )
    rows = []
    for answer in answers:
        a = answer.assignment
        item = a.item
        spec = kinds.get(item.kind)
        gold = golds.get((item.pk, answer.unit, answer.field))
        gold_value = gold.value if gold else None
        list1, list2 = spec.presented_systems(a)
        if gold_value:
            # e.g. the gold side of a comparison as the name of the system behind it
            systems = (
                item.list_a.system.name if item.list_a else None,
                item.list_b.system.name if item.list_b else None,
            )
            gold_value = spec.export_value(answer.field, gold_value, systems)
        rows.append(
            {
                "item": item.pk,
                "kind": item.kind,
                "document": item.document.external_id,
                "domain": item.document.domain,
                "unit": answer.unit,
                "field": answer.field,
                "value": answer.value,
                "annotator": a.annotator.username
                if real_names
                else names.get(a.annotator_id, "A?"),
                "status": a.status,
                "list1_system": list1,
                "list2_system": list2,
                "guideline_version": a.guideline_version,
                "started_at": _iso(a.started_at),
                "submitted_at": _iso(a.submitted_at),
                "active_seconds": round(a.active_seconds, 1),
                "answered_at": _iso(answer.updated_at),
                "gold": gold_value,
                "gold_provenance": gold.provenance if gold else None,
                "gold_method": gold.method if gold else None,
                "gold_confidence": gold.confidence if gold else None,
                "item_role": roles.get(item.pk, ""),
            }
        )
    return rows


def to_csv(rows: list[dict[str, Any]], fields: list[str] | None = None) -> str:
    out = io.StringIO()
    writer = safecsv.DictWriter(out, fieldnames=fields or (list(rows[0]) if rows else LONG_FIELDS))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def respond(rows: list[dict[str, Any]], *, fmt: str, filename: str) -> HttpResponse:
    if fmt == "csv":
        response = HttpResponse(to_csv(rows), content_type="text/csv; charset=utf-8")
    elif fmt == "json":
        response = HttpResponse(json.dumps(rows, indent=1), content_type="application/json")
    else:
        raise Http404("Unknown export format.")
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return response


# --- the wide diagnosis table -------------------------------------------------------

NO_ANSWER = "(no answer)"
NOT_ASSIGNED = "(not assigned)"
SKIPPED = "(skipped)"
NOT_APPLICABLE = "(not applicable)"


def wide_rows(
    project: Project, *, filters: Filters | None = None, real_names: bool = False
) -> tuple[list[str], list[list[str]]]:
    """The diagnosis table: one row per (item, unit, field), one column per annotator.

    Cells hold the annotator's answer, or an explicit marker: "(no answer)" (assigned,
    submitted or not, but this field is empty), "(skipped)", "(not assigned)", and
    "(not applicable)" for an error type on a segment the annotator marked correct.
    Comparison choices show the chosen system's name, not the list number.
    """
    filters = filters or Filters()
    names = member_names(project, real_names=real_names)
    annotators = [uid for uid, _ in annotator_choices(project, real_names=real_names)]
    if filters.annotators:
        annotators = [a for a in annotators if a in filters.annotators]
    assignments = Assignment.objects.filter(
        Q(item__project=project) & assignment_filter(filters) & hiring.regular()
    ).values_list("item_id", "annotator_id", "status")
    status: dict[tuple[int, int], str] = {}
    for item, annotator, st in assignments.iterator(chunk_size=5000):
        status[(item, annotator)] = st
        if annotator not in annotators:
            annotators.append(annotator)
    items = Item.objects.filter(Q(project=project) & hiring.regular("pk"))
    if filters.domains:
        items = items.filter(document__domain__in=filters.domains)
    item_info = ItemInfo.read(items)
    specs = {spec.name: spec for spec in kinds.all_specs()}
    answered = _wide_answers(project, filters, items, item_info, specs)
    header = [*LONG_FIELDS[:6], *[names.get(a, f"A?{a}") for a in annotators]]
    out = []
    for item, unit, fld in _wide_keys(project, item_info, answered, specs):
        info = item_info[item]
        given = answered.get((item, unit, fld), {})
        row = [str(item), info.kind, info.external_id, info.domain, unit, fld]
        for a in annotators:
            state = status.get((item, a))
            if a in given:
                row.append(given[a])
            elif state is None:
                row.append(NOT_ASSIGNED)
            elif state == Assignment.SKIPPED:
                row.append(SKIPPED)
            elif _not_asked(specs[info.kind].field(fld), answered, (item, unit), a):
                row.append(NOT_APPLICABLE)
            else:
                row.append(NO_ANSWER)
        out.append(row)
    return header, out


def _wide_answers(
    project: Project,
    filters: Filters,
    items: QuerySet[Item],
    item_info: dict[int, ItemInfo],
    specs: Mapping[str, ReportKind],
) -> dict[tuple[int, str, str], dict[int, str]]:
    """(item, unit, field) -> annotator -> the answer as exported (comparison choices as
    the chosen system's name), for the kinds' categorical fields."""
    systems = {
        pk: (a, b)
        for pk, a, b in items.values_list("pk", "list_a__system__name", "list_b__system__name")
    }
    fields = sorted({f for spec in specs.values() for f in spec.categorical(project)})
    answered: dict[tuple[int, str, str], dict[int, str]] = defaultdict(dict)
    answers = Answer.objects.filter(
        Q(assignment__item__project=project, field__in=fields)
        & hiring.regular("assignment__item_id")
        & assignment_filter(filters, "assignment__")
    ).values_list(
        "assignment__item_id",
        "assignment__annotator_id",
        "assignment__swapped",
        "unit",
        "field",
        "value",
    )
    for item, annotator, swapped, unit, fld, value in answers.iterator(chunk_size=5000):
        info = item_info.get(item)
        if info:
            spec = specs[info.kind]
            value = spec.export_value(fld, spec.comparable(fld, value, swapped), systems[item])
        answered[(item, unit, fld)][annotator] = value
    return answered


def _wide_keys(
    project: Project,
    item_info: dict[int, ItemInfo],
    answered: dict[tuple[int, str, str], dict[int, str]],
    specs: Mapping[str, ReportKind],
) -> list[tuple[int, str, str]]:
    """The table's rows: every (item, unit, field) the kinds expect, in item order, then
    any other answered one of these items."""
    by_kind: dict[str, dict[int, ItemInfo]] = defaultdict(dict)
    for pk, info in item_info.items():
        by_kind[info.kind][pk] = info
    expected: dict[int, list[tuple[str, str]]] = {}
    for name, of_kind in by_kind.items():
        expected.update(specs[name].expected(project, of_kind))
    keys: dict[tuple[int, str, str], None] = {}
    for pk in sorted(item_info):
        for unit, fld in expected.get(pk, []):
            keys[(pk, unit, fld)] = None
    for key in sorted(answered):
        if key[0] in item_info:
            keys.setdefault(key, None)
    return list(keys)


def _not_asked(
    field: Field | None,
    answered: dict[tuple[int, str, str], dict[int, str]],
    unit: tuple[int, str],
    annotator: int,
) -> bool:
    """A conditional field the annotator's other answer made moot (an error type of a
    segment they marked correct)."""
    if field is None or field.only_when is None:
        return False
    given = answered.get((*unit, field.only_when[0]), {}).get(annotator)
    return given is not None and given != field.only_when[1]


def wide_csv(project: Project, *, filters: Filters | None = None, real_names: bool = False) -> str:
    header, rows = wide_rows(project, filters=filters, real_names=real_names)
    out = io.StringIO()
    writer = safecsv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()
