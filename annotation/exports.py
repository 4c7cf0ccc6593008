"""The long format: one row per answer, the table every statistic and export reads."""

from __future__ import annotations

import io
import json
from typing import Any

from django.http import Http404, HttpResponse

from . import kinds, safecsv
from .gold import gold_values
from .models import Answer, Project, pseudonyms

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
]


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def long_rows(project: Project, *, real_names: bool = False) -> list[dict[str, Any]]:
    names = pseudonyms(project)
    golds = {(g.item, g.unit, g.field): g for g in gold_values(project)}
    answers = (
        Answer.objects.filter(assignment__item__project=project)
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
