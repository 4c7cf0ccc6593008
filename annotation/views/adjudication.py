"""Researchers settle disagreements: units ordered hardest first, answers under pseudonyms."""

from __future__ import annotations

from collections import defaultdict

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from .. import kinds
from ..errors import posted_id
from ..gold import gold_values, label_rows
from ..kinds import categorical_fields
from ..models import Adjudication, Answer, Assignment, Item, pseudonyms
from .common import HtmxRequest, project_for_researcher


@login_required
def adjudication(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    kind = request.GET.get("kind", "")
    reveal = request.GET.get("reveal") == "1"
    if request.method == "POST":
        return _set_gold(request, project_id)

    labels = label_rows(project, kind=kind or None)
    golds = [g for g in gold_values(project, rows=labels)
             if len(g.votes) > 1 or g.provenance == "adjudicated"]
    golds.sort(key=lambda g: (g.provenance == "adjudicated", -g.disagreement, g.item, g.unit, g.field))
    names = pseudonyms(project)
    answers: dict[tuple[int, str, str], list[tuple[str, str]]] = defaultdict(list)
    for row in labels:
        answers[(row.item, row.unit, row.field)].append((names.get(row.annotator, "A?"), row.value))
    # Justifications help to see why people disagree on a comparison.
    notes: dict[tuple[int, str], str] = {}
    for a in Answer.objects.filter(
        assignment__item__project=project, assignment__status=Assignment.SUBMITTED,
        field__in=["justification", "reason"],
    ).values("assignment__item_id", "assignment__annotator_id", "unit", "value"):
        key = (a["assignment__item_id"], f"{names.get(a['assignment__annotator_id'], 'A?')}:{a['unit']}")
        notes[key] = a["value"]
    items = {i.pk: i for i in Item.objects.filter(pk__in={g.item for g in golds}).select_related(
        "document", "claim", "list_a__system", "list_b__system")}
    rows = []
    for g in golds[:200]:
        item = items[g.item]
        rows.append({
            "gold": g,
            "item": item,
            "answers": [
                {"who": who, "value": value, "note": notes.get((g.item, f"{who}:{g.unit}"), "")}
                for who, value in answers[(g.item, g.unit, g.field)]
            ],
            "choices": categorical_fields(item.kind, project)[g.field],
            "content": kinds.get(item.kind).unit_content(item, g.unit, reveal=reveal),
        })
    return render(request, "annotation/adjudication.html", {
        "project": project, "rows": rows, "n_disputed": len(golds), "kind": kind, "reveal": reveal,
        "kinds": [(spec.name, spec.title) for spec in kinds.all_specs()],
    })


def _set_gold(request: HtmxRequest, project_id: int) -> HttpResponse:
    project = project_for_researcher(request, project_id)
    item = get_object_or_404(Item, pk=posted_id(request, "item"), project=project)
    unit, field = request.POST.get("unit", ""), request.POST.get("field", "")
    value = request.POST.get("value", "")
    allowed = categorical_fields(item.kind, project).get(field, [])
    back = reverse("adjudication", args=[project.pk]) + "?" + request.GET.urlencode()
    if value not in allowed:
        messages.error(request, f"“{value}” is not a value of {field}; choose one of {', '.join(allowed)}.")
        return redirect(back)
    Adjudication.objects.update_or_create(
        item=item, unit=unit, field=field,
        defaults={"value": value, "note": request.POST.get("note", "").strip(), "by": request.user},
    )
    messages.success(request, f"Gold value of item {item.pk} {unit} {field} set to {value}.")
    return redirect(back)

