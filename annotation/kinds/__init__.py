"""The registry of item kinds: each kind is described once, in its own module, by a
KindSpec (base.py): its units and fields, their choices, which are categorical, its
form and template, what an annotator may see, its Label Studio mapping, its gold rules
and report sections. Pages, API, Label Studio, gold, reports and exports loop over it.

The kind modules import models, and models imports `kinds.schema`: so this package
loads its kind modules on first use, not on import.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured

from . import schema
from .base import ITEM, KindSpec, unit_label, unit_type
from .protocols import GoldKind, Kind, LabelStudioKind, PageKind, ReportKind

if TYPE_CHECKING:
    from collections.abc import Mapping

    from django.db.models import Model, QuerySet

    from ..forms import AnswerForm
    from ..gold import Gold
    from ..models import Assignment, Item, Project

__all__ = [
    "ITEM",
    "GoldKind",
    "Kind",
    "KindSpec",
    "LabelStudioKind",
    "PageKind",
    "ReportKind",
    "all_specs",
    "answer_form",
    "categorical_fields",
    "get",
    "gold",
    "labelstudio",
    "names",
    "page",
    "report",
    "unit_label",
    "unit_type",
]


@cache
def _registry() -> dict[str, KindSpec]:
    specs = {}
    for name in schema.NAMES:
        spec = importlib.import_module(f"{__name__}.{name}").SPEC
        missing = spec.missing_parts() + ([] if spec.name == name else [f"name {name!r}"])
        if missing:
            raise ImproperlyConfigured(
                f"The item kind {name!r} (annotation/kinds/{name}/) lacks: " + ", ".join(missing)
            )
        specs[name] = spec
    levels = [spec.verdict_level for spec in specs.values() if spec.verdict_level]
    if len(levels) != len(set(levels)):  # the verifier sections keep each level's units apart
        raise ImproperlyConfigured(f"Two item kinds judge verdicts at one level: {levels}")
    return specs


def get(kind: str) -> KindSpec:
    try:
        return _registry()[kind]
    except KeyError:
        raise ValueError(f"unknown item kind {kind!r}") from None


def all_specs() -> list[KindSpec]:
    return list(_registry().values())


# A registered kind typed as the one part a caller needs (protocols.py)


def page(kind: str) -> PageKind:
    return get(kind)


def labelstudio(kind: str) -> LabelStudioKind:
    return get(kind)


def gold(kind: str) -> GoldKind:
    return get(kind)


def report(kind: str) -> ReportKind:
    return get(kind)


def names() -> list[str]:
    return list(schema.NAMES)


def categorical_fields(kind: str, project: Project | None = None) -> dict[str, list[str]]:
    """field -> declared label set, for the fields statistics and gold values use."""
    return get(kind).categorical(project)


def answer_form(assignment: Assignment, data: Any = None) -> AnswerForm:
    """The form of the assignment's kind, bound to posted data (pages, API, Label Studio)
    or, without data, filled with the stored answers."""
    from ..forms import AnswerForm

    initial = AnswerForm.initial_from(assignment.answers_dict()) if data is None else None
    return get(assignment.item.kind).form(assignment.item, data, initial)


def view(assignment: Assignment) -> dict[str, Any]:
    """What this annotator may see of the item (KindSpec.view), in their order."""
    return get(assignment.item.kind).view(assignment.item, swapped=assignment.swapped)


def preview(item: Item) -> tuple[KindSpec, dict[str, Any], AnswerForm]:
    """The item as an annotator would see it, in its stored order, with its empty form:
    the researchers' preview (page and API). Nothing is saved: no assignment, no answer."""
    from ..models import Assignment

    spec = get(item.kind)
    shown = Assignment(item=item, swapped=False)  # never saved
    return spec, spec.view(item, swapped=shown.swapped), spec.form(item, None, {})


def preview_items(project: Project) -> QuerySet[Item]:
    """The project's items with what a preview reads of them."""
    from ..models import Item

    return Item.objects.filter(project=project).select_related(
        "document", "list_a", "list_b", "claim"
    )


def judging(model: type[Model]) -> list[KindSpec]:
    """The kinds whose gold labels are compared with verdicts on `model` (Claim, Segment)."""
    return [s for s in all_specs() if s.verdict_target is model]


def fact_verdicts(
    project: Project, golds_of: Mapping[str, list[Gold]] | None = None
) -> dict[int, str]:
    """Claim id -> the annotators' gold label of the atomic fact as a verdict, from every
    kind that labels facts (FActScore-style tables read them like a verifier's verdicts).
    `golds_of` (kind -> the golds of all its submitted answers, as a report without
    filters has them) saves querying the answers again."""
    found: dict[int, str] = {}
    for spec in all_specs():
        golds = None if golds_of is None else golds_of.get(spec.name, [])
        found.update(spec.fact_verdicts(project, golds))
    return found
