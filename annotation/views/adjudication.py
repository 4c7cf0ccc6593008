"""Researchers settle disagreements: units ordered hardest first (or, `order=uncertain`,
the gold method's least confident first), answers under pseudonyms."""

from __future__ import annotations

from collections import defaultdict

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from .. import kinds
from ..errors import posted_id
from ..gold import Gold, gold_values, label_rows
from ..kinds import categorical_fields
from ..models import Answer, Assignment, Item, Project, pseudonyms
from ..operations import AdjudicationError, adjudicate
from .common import HtmxRequest, project_for_researcher

PER_PAGE = 50


@login_required
def adjudication(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    kind = request.GET.get("kind", "")
    field = request.GET.get("field", "")
    reveal = request.GET.get("reveal") == "1"
    order = request.GET.get("order", "")
    if order not in ORDERS:
        return HttpResponse(
            f"Unknown order {order!r}; one of: {', '.join(repr(o) for o in ORDERS)}.",
            status=400,
            content_type="text/plain",
        )
    if request.method == "POST":
        return _set_gold(request, project_id, reveal=reveal)

    golds = _disputed(project, kind=kind, field=field, order=order)
    page = Paginator(golds, PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "annotation/adjudication.html",
        {
            "project": project,
            "rows": _rows(project, list(page), reveal=reveal),
            "n_disputed": len(golds),
            "kind": kind,
            "field": field,
            "reveal": reveal,
            "order": order,
            "page": page,
            "query": query.urlencode(),
            "kinds": [(spec.name, spec.title) for spec in kinds.all_specs()],
            "fields": sorted({f for spec in kinds.all_specs() for f in spec.categorical(project)}),
        },
    )


ORDERS = ("", "uncertain")  # hardest first; the gold method's least confident first


def _disputed(project: Project, *, kind: str = "", field: str = "", order: str = "") -> list[Gold]:
    """Units where submitted answers differ (or a researcher decided), hardest first (the
    most disagreement), or with `order="uncertain"` by the project's gold method's
    confidence, lowest first (no gold value: first of all); adjudicated units last."""
    golds = [
        g
        for g in gold_values(project, kind=kind or None)
        if (len(g.votes) > 1 or g.provenance == "adjudicated") and (not field or g.field == field)
    ]
    if order == "uncertain":
        golds.sort(
            key=lambda g: (
                g.provenance == "adjudicated",
                -1.0 if g.value is None or g.confidence is None else g.confidence,
                g.item,
                g.unit,
                g.field,
            )
        )
        return golds
    golds.sort(
        key=lambda g: (g.provenance == "adjudicated", -g.disagreement, g.item, g.unit, g.field)
    )
    return golds


def _rows(project: Project, golds: list[Gold], *, reveal: bool) -> list[dict[str, object]]:
    """What the page shows of each unit: its content, each annotator's answer under a
    pseudonym with their note (and, for comparisons, the order they saw), gold choices."""
    if not golds:
        return []
    names = pseudonyms(project)
    item_ids = {g.item for g in golds}
    items = {
        i.pk: i
        for i in Item.objects.filter(pk__in=item_ids).select_related(
            "document", "claim", "list_a__system", "list_b__system"
        )
    }
    labels = label_rows(project, where=Q(item_id__in=item_ids))
    answers: dict[tuple[int, str, str], list[tuple[int, str]]] = defaultdict(list)
    for row in labels:
        answers[(row.item, row.unit, row.field)].append((row.annotator, row.value))
    swapped = dict(
        ((a["item_id"], a["annotator_id"]), a["swapped"])
        for a in Assignment.objects.filter(item_id__in=item_ids).values(
            "item_id", "annotator_id", "swapped"
        )
    )
    # Justifications and reasons help to see why people disagree.
    notes: dict[tuple[int, int, str], str] = {}
    for a in Answer.objects.filter(
        assignment__item_id__in=item_ids,
        assignment__status=Assignment.SUBMITTED,
        field__in=["justification", "reason"],
    ).values("assignment__item_id", "assignment__annotator_id", "unit", "value"):
        notes[(a["assignment__item_id"], a["assignment__annotator_id"], a["unit"])] = a["value"]
    rows = []
    for g in golds:
        item = items[g.item]
        spec = kinds.get(item.kind)
        rows.append(
            {
                "gold": g,
                "gold_label": spec.value_label(g.field, g.value) if g.value else "",
                "item": item,
                "answers": [
                    {
                        "who": names.get(uid, "A?"),
                        "value": spec.value_label(g.field, value),
                        "note": notes.get((g.item, uid, g.unit), ""),
                        "seen_as": spec.seen_as(swapped.get((g.item, uid), False)),
                    }
                    for uid, value in answers[(g.item, g.unit, g.field)]
                ],
                "choices": [
                    (v, spec.value_label(g.field, v))
                    for v in categorical_fields(item.kind, project)[g.field]
                ],
                "content": spec.unit_content(item, g.unit, reveal=reveal),
            }
        )
    return rows


def _set_gold(request: HtmxRequest, project_id: int, *, reveal: bool) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    item = get_object_or_404(Item, pk=posted_id(request, "item"), project=project)
    unit, field = request.POST.get("unit", ""), request.POST.get("field", "")
    value = request.POST.get("value", "")
    back = reverse("adjudication", args=[project.pk]) + "?" + request.GET.urlencode()
    error = ""
    try:
        adjudicate(
            item=item,
            unit=unit,
            field=field,
            value=value,
            note=request.POST.get("note", ""),
            by=request.user,
        )
    except AdjudicationError as e:
        error = str(e)
    if request.htmx:  # the unit is swapped in place: the page keeps its scroll position
        gold = next(
            (
                g
                for g in _disputed(project, kind=item.kind, field=field)
                if (g.item, g.unit) == (item.pk, unit)
            ),
            None,
        )
        if gold is None:
            return HttpResponse(status=404)
        return render(
            request,
            "annotation/adjudication.html#unit",
            {
                "project": project,
                "row": _rows(project, [gold], reveal=reveal)[0],
                "error": error,
                "saved": not error,
            },
        )
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"Gold value of item {item.pk} {unit} {field} set to {value}.")
    return redirect(back)
