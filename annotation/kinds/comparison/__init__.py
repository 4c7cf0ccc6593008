"""Comparison: two claim lists of one document, order drawn per annotator, methods
hidden: which list better covers the verifiable content (VeriScore §3.1, Fig. 5)."""

from __future__ import annotations

import re
from argparse import ArgumentParser
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.db import transaction
from django.db.models import Count

from ...forms import AnswerForm, PolicyForm, sample_size
from ...models import Assignment, Claim, ClaimList, Item, Project, System, sample_ids
from ..base import ITEM, Agreement, Field, ItemInfo, KindSpec, ls_choices, ls_text, ls_textarea
from ..protocols import KindSection
from ..schema import COMPARISON

# "At least a sentence": a few words ending in a full stop, or simply long enough.
MIN_JUSTIFICATION_WORDS = 4
# Choices are stored as the presented list ("1"/"2") and compared across annotators as
# the storage side ("a"/"b") behind it, since the order differs per person.
SIDES = ["a", "b"]


JUSTIFY = "Please justify your choice in at least one sentence."


def _claim_texts(*lists: ClaimList) -> list[list[str]]:
    """Each list's claim texts in order: from a prefetch (`claims`) when made, else one
    query for all the lists."""
    if all("claims" in getattr(cl, "_prefetched_objects_cache", {}) for cl in lists):
        return [[c.text for c in cl.claims.all()] for cl in lists]
    texts: dict[int, list[str]] = {cl.pk: [] for cl in lists}
    rows = Claim.objects.filter(claim_list_id__in=list(texts)).order_by("claim_list", "position")
    for list_id, text in rows.values_list("claim_list_id", "text"):
        texts[list_id].append(text)
    return [texts[cl.pk] for cl in lists]


class ComparisonForm(AnswerForm):
    """The annotator's answer on a comparison item (VeriScore Fig. 5)."""

    choice = forms.ChoiceField(
        choices=[("1", "List 1"), ("2", "List 2")],
        widget=forms.RadioSelect,
        label="Which claim list better covers the verifiable content?",
    )
    hard = forms.ChoiceField(
        choices=[("yes", "Yes"), ("no", "No")],
        widget=forms.RadioSelect,
        label="Was it hard to decide?",
    )
    justification = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        label="Justification",
        help_text="At least one full sentence.",
        error_messages={"required": JUSTIFY},
    )

    def clean_justification(self) -> str:
        text: str = self.cleaned_data["justification"].strip()
        if len(re.findall(r"\w+", text)) < MIN_JUSTIFICATION_WORDS:
            raise forms.ValidationError(JUSTIFY)
        return text


class ComparisonItemsForm(PolicyForm):
    system_a = forms.ModelChoiceField(queryset=System.objects.none())
    system_b = forms.ModelChoiceField(queryset=System.objects.none())
    include_empty = forms.BooleanField(
        required=False,
        label="Also documents where both lists have no claim",
        help_text="Left out by default: two empty or abstained lists leave nothing to compare.",
    )
    n = sample_size()
    field_order = ["system_a", "system_b", "include_empty", "n"]

    def __init__(self, *args: Any, project: Project, **kwargs: Any):
        super().__init__(*args, **kwargs)
        systems = project.systems.filter(kind=System.EXTRACTOR)
        self.fields["system_a"].queryset = systems  # type: ignore[attr-defined]
        self.fields["system_b"].queryset = systems  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("system_a") and data.get("system_a") == data.get("system_b"):
            raise forms.ValidationError("Pick two different systems.")
        return data

    def make(self, project: Project) -> list[Item]:
        return comparison_items(
            project=project,
            system_a=self.cleaned_data["system_a"],
            system_b=self.cleaned_data["system_b"],
            include_empty=self.cleaned_data.get("include_empty", False),
            n=self.cleaned_data.get("n"),
            seed=self.cleaned_data["seed"],
        )


def comparison_items(
    *,
    project: Project,
    system_a: System,
    system_b: System,
    include_empty: bool = False,
    n: int | None = None,
    seed: int = 0,
) -> list[Item]:
    """One comparison item per document that has a claim list from both systems; not for
    a document where both lists have no claim (empty or abstained) unless include_empty.
    With `n`: a seeded sample of n of the documents that have no such item yet."""
    if system_a == system_b:
        raise ValueError("pick two different systems")

    def lists(system: System) -> Any:
        return ClaimList.objects.filter(system=system, document__project=project).annotate(
            n_claims=Count("claims")
        )

    lists_b = {cl.document_id: cl for cl in lists(system_b)}
    pairs = {
        cl_a.document_id: (cl_a, cl_b)
        for cl_a in lists(system_a)
        if (cl_b := lists_b.get(cl_a.document_id)) is not None
        and (include_empty or cl_a.n_claims or cl_b.n_claims)
    }
    made = set(
        Item.objects.filter(kind=COMPARISON, list_a__system=system_a, list_b__system=system_b)
        .filter(document__project=project)
        .values_list("document_id", flat=True)
    )
    created = []
    with transaction.atomic():
        for document in sample_ids(set(pairs) - made, n=n, seed=seed):
            cl_a, cl_b = pairs[document]
            item, was_created = Item.objects.get_or_create(
                kind=COMPARISON,
                list_a=cl_a,
                list_b=cl_b,
                defaults={"project": project, "document_id": document},
            )
            if was_created:
                created.append(item)
    return created


def _numbered(claims: list[str]) -> str:
    return "\n".join(f"{i}. {c}" for i, c in enumerate(claims, start=1)) or "(none)"


class Comparison(KindSpec):
    name = COMPARISON
    title = "Comparison"
    template = "annotation/comparison.html"
    fields = (
        Field(
            "choice",
            "Which claim list better covers the verifiable content?",
            choices=(("1", "List 1"), ("2", "List 2")),
        ),
        Field("hard", "Was it hard to decide?", choices=(("yes", "Yes"), ("no", "No"))),
        Field("justification", "Justification (at least one sentence)", categorical=False),
    )
    agreement = (
        Agreement(ITEM, "choice", "Comparison: which claim list is better"),
        Agreement(ITEM, "hard", "Comparison: hard to decide"),
    )
    report_sections = ("preference",)
    keys = (
        (("1", "/", "2"), "choose List 1 or List 2"),
        (("y", "/", "n"), "hard to decide: yes / no"),
        (("w",), "write the justification (Esc leaves the box)"),
    )
    ordered = True
    main_field = "choice"  # compared in the unswapped orientation (`comparable`)
    view_keys = {
        "list1": "comparison: the claims shown as List 1",
        "list2": "comparison: the claims shown as List 2",
    }
    items_help = (
        "One item per document that has a claim list from both systems. <em>k</em> "
        "annotators each see a seeded fraction <em>f</em> of the items; every other "
        "item goes to one annotator, balancing the load. The paper's study is f = 1, "
        "k = all."
    )

    def report_section(self, slug: str) -> KindSection:
        from .report import preference_section  # the report's modules load on first use

        return {"preference": preference_section}[slug]

    def categorical(self, project: Project | None = None) -> dict[str, list[str]]:
        return {"choice": SIDES, "hard": ["yes", "no"]}

    def value_label(self, field: str, value: str) -> str:
        if field == "choice" and value in SIDES:
            return f"List {value.upper()}"
        return super().value_label(field, value)

    def seen_as(self, swapped: bool) -> str:
        return (
            "saw List B as List 1, List A as List 2"
            if swapped
            else "saw List A as List 1, List B as List 2"
        )

    def comparable(self, field: str, value: str, swapped: bool) -> str:
        if field != "choice":
            return value
        return {"1": "b" if swapped else "a", "2": "a" if swapped else "b"}.get(value, value)

    def export_value(self, field: str, value: str, systems: tuple[str | None, str | None]) -> str:
        """The chosen side as the name of the system behind it."""
        if field == "choice" and value in SIDES:
            return systems[SIDES.index(value)] or value
        return value

    def presented_systems(self, assignment: Assignment) -> tuple[str | None, str | None]:
        first, second = assignment.presented_lists()
        return first.system.name, second.system.name

    def view(self, item: Item, *, swapped: bool = False) -> dict[str, Any]:
        assert item.list_a is not None and item.list_b is not None
        first, second = (item.list_b, item.list_a) if swapped else (item.list_a, item.list_b)
        list1, list2 = _claim_texts(first, second)
        return {"list1": list1, "list2": list2}

    def form(
        self, item: Item, data: Mapping[str, Any] | None, initial: dict[str, str] | None
    ) -> AnswerForm:
        return ComparisonForm(data, initial=initial)

    def expected(
        self, project: Project, items: dict[int, ItemInfo]
    ) -> dict[int, list[tuple[str, str]]]:
        return {pk: [(ITEM, "choice"), (ITEM, "hard")] for pk in items}

    def unit_content(self, item: Item, unit: str, *, reveal: bool) -> dict[str, object]:
        assert item.list_a is not None and item.list_b is not None
        return {
            "sides": [
                {
                    "side": side,
                    "system": cl.system.name if reveal else None,
                    "claims": [c.text for c in cl.claims.all()],
                }
                for side, cl in (("a", item.list_a), ("b", item.list_b))
            ]
        }

    def items_form(self, project: Project, data: Mapping[str, Any] | None = None) -> PolicyForm:
        return ComparisonItemsForm(data, project=project)

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("system_a", help="the extractor system of list A")
        parser.add_argument("system_b", help="the extractor system of list B")
        parser.add_argument(
            "--include-empty",
            action="store_true",
            help="also documents where both lists have no claim (left out by default)",
        )
        parser.add_argument("--n", type=int, help="a seeded sample of this many items")

    def cli_data(self, opts: dict[str, Any], system: Callable[[str], int]) -> dict[str, Any]:
        return {
            "system_a": system(opts["system_a"]),
            "system_b": system(opts["system_b"]),
            "include_empty": opts.get("include_empty", False),
            "n": opts.get("n"),
        }

    def label_config(self, slots: int, project: Project) -> str:
        return "".join(
            [
                ls_text("list1", "List 1"),
                ls_text("list2", "List 2"),
                ls_choices(
                    "choice",
                    "response",
                    ["1", "2"],
                    header="Which claim list better covers the verifiable content?",
                ),
                ls_choices("hard", "response", ["yes", "no"], header="Was it hard to decide?"),
                ls_textarea(
                    "justification",
                    "response",
                    rows=3,
                    required=True,
                    header="Justification (at least one sentence)",
                ),
            ]
        )

    def ls_task(self, view: dict[str, Any], slots: int) -> dict[str, Any]:
        return {
            "list1": _numbered(view["list1"]),
            "list2": _numbered(view["list2"]),
            "list1_claims": view["list1"],
            "list2_claims": view["list2"],
        }


SPEC = Comparison()
