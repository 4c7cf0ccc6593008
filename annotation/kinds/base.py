"""What every kind of item describes once (KindSpec), and the one encoding of a
(unit, field) pair on forms, in the API and in Label Studio.

Answers are stored per (unit, field): unit "item" for the whole item, "<type>:<index>"
for a part of it ("evidence:3", "segment:2", "fact:0"). A form field is named
`<field>__<unit>` ("stance__evidence:3"; a plain name belongs to "item"), an API error
names `<unit>.<field>`, a Label Studio control `<field>_<index>` ("stance_3").
"""

from __future__ import annotations

import re
from argparse import ArgumentParser
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple
from xml.sax.saxutils import quoteattr

from .protocols import LABEL_STUDIO_REQUIRED, PAGE_REQUIRED

if TYPE_CHECKING:
    from django.db.models import Model, QuerySet

    from ..forms import AnswerForm, PolicyForm
    from ..gold import Gold
    from ..models import Assignment, Item, Project, Verdict
    from .protocols import GoldKind, KindSection, LabelStudioKind, PageKind, ReportKind

ITEM = "item"
NO_TEXT = "(none)"  # Label Studio wants every $variable of the config in every task


# --- the (unit, field) encodings -----------------------------------------------------


def form_name(unit: str, field: str) -> str:
    return field if unit == ITEM else f"{field}__{unit}"


def unit_field(name: str) -> tuple[str, str]:
    field, _, unit = name.partition("__")
    return (unit or ITEM, field)


def api_name(name: str) -> str:
    """A form field name as the API's errors name it: "evidence:3.stance"."""
    unit, field = unit_field(name)
    return f"{unit}.{field}"


def unit_type(unit: str) -> str:
    """'evidence:3' -> 'evidence'; 'item' -> 'item'."""
    return unit.split(":", 1)[0]


_UNIT_NAMES = {
    "item": "The item",
    "evidence": "Search result",
    "segment": "Segment",
    "fact": "Fact",
}


def unit_label(unit: str) -> str:
    """A unit as the item's page names it: "evidence:2" -> "Search result 2"."""
    kind, _, number = unit.partition(":")
    name = _UNIT_NAMES.get(kind, kind.capitalize())
    return f"{name} {number}" if number else name


def unit_index(unit: str) -> int | None:
    try:
        return int(unit.split(":", 1)[1])
    except (IndexError, ValueError):
        return None


def ls_name(unit: str, field: str) -> str:
    return field if unit == ITEM else f"{field}_{unit.split(':', 1)[1]}"


# --- fields ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    unit: str = ITEM  # ITEM, or the type of the parts it is asked on ("evidence")
    choices: tuple[tuple[str, str], ...] = ()  # (value, human label); none = free text
    categorical: bool = True  # gets agreement figures and a gold value
    only_when: tuple[str, str] | None = None  # asked when another field of the unit has a value

    @property
    def values(self) -> list[str]:
        return [v for v, _ in self.choices]

    @property
    def is_text(self) -> bool:
        return not self.categorical


@dataclass(frozen=True)
class Agreement:
    level: str  # unit type
    field: str
    title: str


@dataclass(frozen=True)
class ItemInfo:
    """What KindSpec.expected reads of an item, read for many items in one query."""

    kind: str
    external_id: str  # the document's
    domain: str
    document: int
    claim: int | None  # verification: the claim judged
    list_a: int | None  # comparison: the first list; atomic facts: the facts

    COLUMNS = (
        "kind",
        "document__external_id",
        "document__domain",
        "document_id",
        "claim_id",
        "list_a_id",
    )

    @classmethod
    def read(cls, items: QuerySet[Item]) -> dict[int, ItemInfo]:
        """Item id -> its ItemInfo, for a queryset of items."""
        return {pk: cls(*row) for pk, *row in items.values_list("pk", *cls.COLUMNS)}

    @classmethod
    def of(cls, item: Item) -> ItemInfo:
        doc = item.document
        return cls(item.kind, doc.external_id, doc.domain, doc.pk, item.claim_id, item.list_a_id)


class Target(NamedTuple):
    """A unit with a gold label that automatic verdicts can be compared with (thousands
    per report: a tuple is made several times faster than a frozen dataclass)."""

    gold: Gold
    target: int  # claim or segment id
    domain: str
    document: int


# --- Label Studio building blocks ------------------------------------------------------


def ls_choices(
    name: str, to: str, values: Iterable[str], *, required: bool = True, header: str = ""
) -> str:
    options = "".join(f"<Choice value={quoteattr(v)}/>" for v in values)
    head = f"<Header value={quoteattr(header)}/>" if header else ""
    req = ' required="true"' if required else ""
    return (
        f'{head}<Choices name="{name}" toName="{to}" choice="single-radio"'
        f' showInline="true"{req}>{options}</Choices>'
    )


def ls_text(name: str, header: str) -> str:
    return f'<Header value={quoteattr(header)}/><Text name="{name}" value="${name}"/>'


def ls_textarea(
    name: str,
    to: str,
    *,
    placeholder: str = "",
    header: str = "",
    required: bool = False,
    rows: int = 2,
) -> str:
    head = f"<Header value={quoteattr(header)}/>" if header else ""
    extra = f" placeholder={quoteattr(placeholder)}" if placeholder else ""
    req = ' required="true"' if required else ""
    return (
        f'{head}<TextArea name="{name}" toName="{to}" rows="{rows}" maxSubmissions="1"'
        f"{extra}{req}/>"
    )


def ls_parts(name: str, parts: list[dict[str, Any]], slots: int) -> dict[str, Any]:
    """Label Studio variables `<name>_<position>` for the parts of a view ({position,
    text}); a slot no part fills gets NO_TEXT. The positions go in data.meta."""
    texts = {p["position"]: p["text"] for p in parts}
    data: dict[str, Any] = {f"{name}_{p}": texts.get(p, NO_TEXT) for p in range(slots)}
    data["meta"] = {"positions": sorted(texts)}
    return data


# --- the spec --------------------------------------------------------------------------


class KindSpec:
    """One kind of item, implementing every part of protocols.py: `Kind` (name, fields),
    `PageKind`, `LabelStudioKind`, `GoldKind`, `ReportKind`. Subclasses fill in the
    attributes and the methods in REQUIRED (the page's and Label Studio's); the defaults
    of the gold and report parts suit a kind whose answers need no translation and that
    has no report sections or verdicts of its own."""

    name: str
    title: str  # "Verification"
    template: str  # the annotator page
    fields: tuple[Field, ...] = ()
    agreement: tuple[Agreement, ...] = ()
    # field -> gold value of a tie (VeriScore reads a tied claim label as inconclusive);
    # without one a tie has no gold until adjudicated.
    tie_values: Mapping[str, str] = {}
    # the kind's own report sections, by slug: their builders are in its folder's
    # report.py, given by `report_section`
    report_sections: tuple[str, ...] = ()
    # Verdicts of automatic systems are compared with the gold of `verdict_field`, on
    # the model `verdict_target` (Claim or Segment), at the report level `verdict_level`.
    verdict_field: str = ""
    verdict_level: str = ""
    verdict_modes: tuple[str, ...] = ("binary",)
    ordered = False  # parts shown in an order drawn per annotator (Assignment.swapped)
    view_keys: Mapping[str, str] = {}  # what `view` returns: key -> description (API)
    # the page's keyboard shortcuts, listed on it and in the instructions:
    # (keys, what they do); "/" and "–" between keys are shown as text
    keys: tuple[tuple[tuple[str, ...], str], ...] = ()
    items_help: str = ""  # on the project page
    # adaptive overlap: the field it watches unless the researcher picks another of the
    # kind's agreement fields (`disagrees` says when answers to it disagree)
    main_field: str = ""

    # What every kind has of its own: these methods (the base raises NotImplementedError)
    # and, checked by missing_parts, a name, title, template, fields, keys and view_keys.
    REQUIRED = PAGE_REQUIRED + LABEL_STUDIO_REQUIRED

    @property
    def verdict_target(self) -> type[Model] | None:
        return None

    def missing_parts(self) -> list[str]:
        """The parts every kind needs that this one lacks (the registry refuses it)."""
        from django.template import TemplateDoesNotExist
        from django.template.loader import get_template

        missing = [m for m in self.REQUIRED if getattr(type(self), m) is getattr(KindSpec, m)]
        for attr in ("name", "title", "template", "fields", "keys", "view_keys", "items_help"):
            if not getattr(self, attr, None):
                missing.append(attr)
        if getattr(self, "template", None):
            try:
                get_template(self.template)
            except TemplateDoesNotExist:
                missing.append(f"template {self.template}")
        return missing

    # --- fields and values -----------------------------------------------------------

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    def categorical(self, project: Project | None = None) -> dict[str, list[str]]:
        """field -> declared label set, for the fields statistics and gold values use."""
        return {f.name: f.values for f in self.fields if f.categorical}

    def comparable(self, field: str, value: str, swapped: bool) -> str:
        """A stored answer as compared across annotators."""
        return value

    def disagrees(self, field: str, answers: list[dict[tuple[str, str], str]]) -> bool:
        """Whether one item's annotators disagree on `field`: adaptive overlap asks one
        more annotator while they do. `answers` holds each annotator's answers, (unit,
        field) -> comparable value (`comparable`: in the unswapped orientation). By
        default: on some unit that asks `field` ("item", or each evidence, segment or fact)
        two annotators gave different values; a field asked only when another has a value
        (`Field.only_when`: a segment's error type) only on the units where every
        annotator gave that value, as its agreement figure reads it."""
        f = self.field(field)
        condition = f.only_when if f else None
        by_unit: dict[str, set[str]] = {}
        for person in answers:
            for (unit, name), value in person.items():
                if name == field:
                    by_unit.setdefault(unit, set()).add(value)
        if condition:
            by_unit = {
                unit: values
                for unit, values in by_unit.items()
                if all(person.get((unit, condition[0])) == condition[1] for person in answers)
            }
        return any(len(values) > 1 for values in by_unit.values())

    def value_label(self, field: str, value: str) -> str:
        """A comparable value as researchers read it (adjudication): its human label."""
        f = self.field(field)
        return dict(f.choices).get(value, value) if f else value

    def queue_text(self, item: Item) -> str:
        """What the annotator's queue shows of the item, to tell items apart."""
        return item.document.response

    def seen_as(self, swapped: bool) -> str:
        """What an annotator's notes refer to, for researchers (comparison: list order)."""
        return ""

    def export_value(self, field: str, value: str, systems: tuple[str | None, str | None]) -> str:
        """A comparable value as exports show it."""
        return value

    def presented_systems(self, assignment: Assignment) -> tuple[str | None, str | None]:
        return (None, None)

    def tie_value(self, field: str) -> str | None:
        return self.tie_values.get(field)

    def as_verdict(self, value: str | None) -> str | None:
        """A gold value as a verdict label of stats.py."""
        return value

    def fact_verdicts(self, project: Project, golds: list[Gold] | None = None) -> dict[int, str]:
        """Claim id -> gold verdict, for kinds whose units are atomic facts (none here);
        `golds`: the kind's golds when the caller has them (else they are queried)."""
        return {}

    # --- annotators: what they see, what they answer ------------------------------------

    def view(self, item: Item, *, swapped: bool = False) -> dict[str, Any]:
        """Everything an annotator may see of the item besides the document's question and
        response: texts only, never a system name, a verdict or another person's answer.
        The page, the API and Label Studio all show this."""
        raise NotImplementedError

    def form(
        self, item: Item, data: Mapping[str, Any] | None, initial: dict[str, str] | None
    ) -> AnswerForm:
        raise NotImplementedError

    def page_context(self, view: dict[str, Any], form: AnswerForm) -> dict[str, Any]:
        return dict(view)

    def expected(
        self, project: Project, items: dict[int, ItemInfo]
    ) -> dict[int, list[tuple[str, str]]]:
        """item id -> the (unit, field) pairs it asks, categorical fields only."""
        raise NotImplementedError

    def unit_content(self, item: Item, unit: str, *, reveal: bool) -> dict[str, object]:
        """What the adjudication page shows next to one unit's answers."""
        return {}

    def verdict_targets(self, project: Project, golds: list[Gold]) -> list[Target]:
        return []

    def report_section(self, slug: str) -> KindSection:
        """The builder of the report section `slug`, one of `report_sections`."""
        raise ValueError(f"the {self.name} kind has no report section {slug!r}")

    def reference_from(self, item: Item, verdicts: QuerySet[Verdict]) -> dict[str, str]:
        """A training or check item's reference answer ("unit.field" -> value) from the
        verdicts of a reference system (human labels imported with the data)."""
        raise ValueError(f"{self.name} items cannot take a reference from verdicts")

    # --- items -----------------------------------------------------------------------

    def items_form(self, project: Project, data: Mapping[str, Any] | None = None) -> PolicyForm:
        raise NotImplementedError

    def add_arguments(self, parser: ArgumentParser) -> None:
        """The arguments of `create_items <project> <kind>` besides the assignment policy:
        the items form's systems (by name) and options. `cli_data` reads them back."""

    def cli_data(self, opts: dict[str, Any], system: Callable[[str], int]) -> dict[str, Any]:
        """The items form's data from the parsed `create_items` arguments; `system(name)`
        is the id of the project's system of that name."""
        return {}

    # --- Label Studio ------------------------------------------------------------------

    def ls_slots(self, items: list[Item]) -> int:
        """How many numbered parts the shared labelling config needs."""
        return 0

    def label_config(self, slots: int, project: Project) -> str:
        raise NotImplementedError

    def ls_task(self, view: dict[str, Any], slots: int) -> dict[str, Any]:
        """The task `data` Label Studio's config reads, from the blinded view."""
        raise NotImplementedError

    def ls_to_name(self, unit: str, field: str) -> str:
        return "response"

    def from_ls_name(self, name: str) -> tuple[str, str]:
        m = re.match(r"^(.+)_(\d+)$", name)
        if m:
            f = self.field(m.group(1))
            if f is not None and f.unit != ITEM:
                return (f"{f.unit}:{m.group(2)}", f.name)
        return (ITEM, name)

    def ls_result(self, answers: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
        """Our answers -> a Label Studio `result[]` (to pre-annotate, and in tests)."""
        results = []
        for (unit, fld), value in sorted(answers.items()):
            f = self.field(fld)
            text = f is not None and f.is_text
            results.append(
                {
                    "from_name": ls_name(unit, fld),
                    "to_name": self.ls_to_name(unit, fld),
                    "type": "textarea" if text else "choices",
                    "value": {"text": [value]} if text else {"choices": [value]},
                }
            )
        return results


if TYPE_CHECKING:  # mypy checks that KindSpec implements every part
    _PARTS: tuple[type[PageKind], type[LabelStudioKind], type[GoldKind], type[ReportKind]] = (
        KindSpec,
        KindSpec,
        KindSpec,
        KindSpec,
    )
