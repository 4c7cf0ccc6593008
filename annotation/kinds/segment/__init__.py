"""Segments (FELM): each segment of a response correct or not; when not, an error type,
a reason and reference links; per response keep or remove (FELM App. B, Fig. 5)."""

from __future__ import annotations

from argparse import ArgumentParser
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.core.validators import URLValidator
from django.db import transaction
from django.db.models import Max, Model, QuerySet

from ...answers import fetch
from ...forms import AnswerForm, PolicyForm, sample_size
from ...gold import Gold
from ...models import DEFAULT_ERROR_TYPES, Document, Item, Project, Segment, Verdict, sample_ids
from ..base import (
    ITEM,
    Agreement,
    Field,
    ItemInfo,
    KindSpec,
    Target,
    ls_choices,
    ls_parts,
    ls_text,
    ls_textarea,
    unit_index,
)
from ..schema import SEGMENT

DETAILS = ("error_type", "reason", "links")  # asked when a segment is incorrect


class SegmentForm(AnswerForm):
    """FELM's annotation page: each segment correct or not; when not, an error type, a
    reason and reference links; keep or remove the response."""

    keep = forms.ChoiceField(
        choices=[("keep", "Keep"), ("remove", "Remove")],
        widget=forms.RadioSelect,
        label="Keep this response?",
    )

    def __init__(self, *args: Any, positions: list[int], error_types: list[str], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.positions = positions
        for p in positions:
            self.fields[f"correct__segment:{p}"] = forms.ChoiceField(
                choices=[("true", "Correct"), ("false", "Incorrect")],
                widget=forms.RadioSelect,
                label=f"Segment {p + 1}",
            )
            self.fields[f"error_type__segment:{p}"] = forms.ChoiceField(
                choices=[(e, e) for e in error_types],
                widget=forms.RadioSelect,
                required=False,
                label="Error type",
            )
            self.fields[f"reason__segment:{p}"] = forms.CharField(
                required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Reason"
            )
            self.fields[f"links__segment:{p}"] = forms.CharField(
                required=False,
                widget=forms.Textarea(attrs={"rows": 2}),
                label="Reference links (one per line)",
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for p in self.positions:
            if data.get(f"correct__segment:{p}") != "false":
                # a correct segment carries no error details
                for name in DETAILS:
                    data[f"{name}__segment:{p}"] = ""
                continue
            where = f"Segment {p + 1}"
            if not data.get(f"error_type__segment:{p}"):
                self.add_error(
                    f"error_type__segment:{p}", f"{where} is incorrect: choose an error type."
                )
            if not data.get(f"reason__segment:{p}", "").strip():
                self.add_error(f"reason__segment:{p}", f"{where} is incorrect: say why.")
            links = data.get(f"links__segment:{p}", "").split()
            if not links:
                self.add_error(
                    f"links__segment:{p}",
                    f"{where} is incorrect: give at least one reference link.",
                )
            for link in links:
                try:
                    URLValidator(schemes=["http", "https"])(link)
                except forms.ValidationError:
                    self.add_error(
                        f"links__segment:{p}",
                        f"{where}: “{link[:80]}” is not a valid http(s) link.",
                    )
            data[f"links__segment:{p}"] = "\n".join(links)
        return data

    def segment_rows(self) -> list[dict[str, forms.BoundField]]:
        return [
            {name: self[f"{name}__segment:{p}"] for name in ("correct", *DETAILS)}
            for p in self.positions
        ]


class SegmentItemsForm(PolicyForm):
    n = sample_size()

    def __init__(self, *args: Any, project: Project, **kwargs: Any):
        super().__init__(*args, **kwargs)

    def make(self, project: Project) -> list[Item]:
        data = self.cleaned_data
        return segment_items(project=project, n=data.get("n"), seed=data["seed"])


def segment_items(
    *,
    project: Project,
    documents: QuerySet[Document] | None = None,
    n: int | None = None,
    seed: int = 0,
) -> list[Item]:
    """One segment item per document; documents without segments are split into
    sentences by the pipeline's splitter. With `n`: a seeded sample of n of the documents
    that have no segment item yet."""
    from pipeline.split import split_sentences  # plain Python, no Django

    documents = documents if documents is not None else project.documents.all()
    made = Item.objects.filter(project=project, kind=SEGMENT).values("document_id")
    free = documents.filter(project=project).exclude(pk__in=made).values_list("pk", flat=True)
    chosen = sample_ids(free, n=n, seed=seed)
    created = []
    with transaction.atomic():
        for doc in Document.objects.filter(pk__in=chosen).prefetch_related("segments"):
            if not doc.segments.exists():
                Segment.objects.bulk_create(
                    Segment(document=doc, position=i, text=text)
                    for i, text in enumerate(split_sentences(doc.response))
                )
            item, was_created = Item.objects.get_or_create(
                project=project, kind=SEGMENT, document=doc
            )
            if was_created:
                created.append(item)
    return created


class Segments(KindSpec):
    name = SEGMENT
    title = "Segments"
    template = "annotation/segments.html"
    fields = (
        Field(
            "correct",
            "Is the segment correct?",
            unit="segment",
            choices=(("true", "Correct"), ("false", "Incorrect")),
        ),
        # choices come from the project (error_types); see categorical()
        Field("error_type", "Error type", unit="segment", only_when=("correct", "false")),
        Field("reason", "Reason", unit="segment", categorical=False),
        Field("links", "Reference links (one per line)", unit="segment", categorical=False),
        Field("keep", "Keep this response?", choices=(("keep", "Keep"), ("remove", "Remove"))),
    )
    agreement = (
        Agreement("segment", "correct", "Segments: correct or not"),
        Agreement(
            "segment",
            "error_type",
            "Segments: error type, on segments every annotator marked incorrect",
        ),
        Agreement(ITEM, "keep", "Segments: keep or remove the response"),
    )
    keys = (
        (("j", "/", "k"), "next / previous segment"),
        (("t", "/", "f"), "the segment is correct (true) / incorrect (false)"),
        (("1", "–", "9"), "error type of an incorrect segment"),
        (("r", "/", "l"), "write the reason / the reference links (Esc leaves the box)"),
        (("a", "/", "d"), "keep / remove the response"),
    )
    verdict_field = "correct"
    verdict_level = "segment"
    main_field = "correct"
    view_keys = {
        "segments": "segments: [{position, text}]",
        "error_types": "segments: the error types to choose from",
    }
    items_help = (
        "One item per document: its imported segments (FELM), or its sentences when it has none."
    )

    @property
    def verdict_target(self) -> type[Model]:
        return Segment

    def categorical(self, project: Project | None = None) -> dict[str, list[str]]:
        error_types = list(project.error_types) if project else DEFAULT_ERROR_TYPES
        return {"correct": ["true", "false"], "error_type": error_types, "keep": ["keep", "remove"]}

    def as_verdict(self, value: str | None) -> str | None:
        return {"true": "supported", "false": "unsupported"}.get(value or "", value)

    def view(self, item: Item, *, swapped: bool = False) -> dict[str, Any]:
        return {
            "segments": [
                {"position": s.position, "text": s.text} for s in item.document.segments.shown()
            ],
            "error_types": list(item.project.error_types),
        }

    def form(
        self, item: Item, data: Mapping[str, Any] | None, initial: dict[str, str] | None
    ) -> AnswerForm:
        positions = list(item.document.segments.shown().values_list("position", flat=True))
        return SegmentForm(
            data, initial=initial, positions=positions, error_types=list(item.project.error_types)
        )

    def page_context(self, view: dict[str, Any], form: AnswerForm) -> dict[str, Any]:
        assert isinstance(form, SegmentForm)
        return {
            "segments": [
                {"segment": seg, **fields}
                for seg, fields in zip(view["segments"], form.segment_rows(), strict=True)
            ]
        }

    def expected(
        self, project: Project, items: dict[int, ItemInfo]
    ) -> dict[int, list[tuple[str, str]]]:
        positions: dict[int, list[int]] = defaultdict(list)
        docs = [info.document for info in items.values()]
        segments = Segment.objects.filter(document__in=docs).shown()
        for doc, pos in segments.values_list("document_id", "position"):
            positions[doc].append(pos)
        expected = {}
        for pk, info in items.items():
            pairs = []
            for pos in sorted(positions.get(info.document, [])):
                pairs += [(f"segment:{pos}", "correct"), (f"segment:{pos}", "error_type")]
            expected[pk] = [*pairs, (ITEM, "keep")]
        return expected

    def unit_content(self, item: Item, unit: str, *, reveal: bool) -> dict[str, object]:
        if unit == ITEM:
            return {"segments": list(item.document.segments.shown())}
        return {
            "segment": Segment.objects.filter(  # type: ignore[misc]
                document=item.document, position=unit_index(unit)
            ).first()
        }

    def verdict_targets(self, project: Project, golds: list[Gold]) -> list[Target]:
        # plain tuples from the cursor (answers.fetch): a 100,000-item project has 90,000
        # segments; each unit's position read once
        # lookup tables: unordered (the models' default order would sort 90,000 segments)
        items = Item.objects.filter(project=project, kind=self.name).order_by()
        docs = {
            pk: (doc, domain)
            for pk, doc, domain in fetch(items.values_list("pk", "document_id", "document__domain"))
        }
        segments = Segment.objects.filter(document__project=project).order_by()
        segment_ids = {
            (doc, pos): pk
            for pk, doc, pos in fetch(segments.values_list("pk", "document_id", "position"))
        }
        positions: dict[str, int | None] = {}
        targets = []
        for g in golds:
            if g.field != self.verdict_field or g.value is None or g.item not in docs:
                continue
            doc, domain = docs[g.item]
            if (pos := positions.get(g.unit, -1)) == -1:
                pos = positions[g.unit] = unit_index(g.unit)
            seg = segment_ids.get((doc, pos))
            if seg is not None:
                targets.append(Target(g, seg, domain, doc))
        return targets

    def reference_from(self, item: Item, verdicts: QuerySet[Verdict]) -> dict[str, str]:
        """Each segment's label (FELM's true / false)."""
        found = verdicts.filter(segment__document=item.document_id)
        return {
            f"segment:{pos}.correct": label
            for pos, label in found.values_list("segment__position", "label")
        }

    def items_form(self, project: Project, data: Mapping[str, Any] | None = None) -> PolicyForm:
        return SegmentItemsForm(data, project=project)

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--n", type=int, help="a seeded sample of this many items")

    def cli_data(self, opts: dict[str, Any], system: Callable[[str], int]) -> dict[str, Any]:
        return {"n": opts.get("n")}

    def ls_slots(self, items: list[Item]) -> int:
        return max((i.document.segments.aggregate(n=Max("position"))["n"] or -1) + 1 for i in items)

    def label_config(self, slots: int, project: Project) -> str:
        parts = []
        for p in range(slots):
            parts += [
                ls_text(f"segment_{p}", f"Segment {p + 1}"),
                ls_choices(f"correct_{p}", f"segment_{p}", ["true", "false"], required=False),
                ls_choices(
                    f"error_type_{p}",
                    f"segment_{p}",
                    list(project.error_types),
                    required=False,
                    header="Error type (when incorrect)",
                ),
                ls_textarea(f"reason_{p}", f"segment_{p}", placeholder="Reason"),
                ls_textarea(
                    f"links_{p}", f"segment_{p}", placeholder="Reference links, one per line"
                ),
            ]
        parts.append(
            ls_choices("keep", "response", ["keep", "remove"], header="Keep this response?")
        )
        return "".join(parts)

    def ls_task(self, view: dict[str, Any], slots: int) -> dict[str, Any]:
        return {"segments": view["segments"], **ls_parts("segment", view["segments"], slots)}

    def ls_to_name(self, unit: str, field: str) -> str:
        return "response" if unit == ITEM else f"segment_{unit.split(':', 1)[1]}"


SPEC = Segments()
