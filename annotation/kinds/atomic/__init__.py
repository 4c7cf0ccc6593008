"""Atomic facts (FActScore's human annotation): a response and its atomic facts, from
any claim-list system; each fact Supported, Not supported or Irrelevant against a
knowledge source shown beside it: the passages imported with the document
(canonical `knowledge: [{title, text, url}]`), else the search results of its facts."""

from __future__ import annotations

from argparse import ArgumentParser
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.db import transaction
from django.db.models import Count, Model, QuerySet

from ...forms import AnswerForm, PolicyForm, sample_size
from ...gold import Gold
from ...models import (
    Claim,
    ClaimList,
    Document,
    Evidence,
    Item,
    Project,
    System,
    Verdict,
    sample_ids,
)
from ..base import (
    ITEM,
    NO_TEXT,
    Agreement,
    Field,
    ItemInfo,
    KindSpec,
    Target,
    form_name,
    ls_choices,
    ls_parts,
    ls_text,
    ls_textarea,
    unit_index,
)
from ..protocols import KindSection
from ..schema import ATOMIC

FACT_LABELS = (
    ("supported", "Supported"),
    ("not-supported", "Not supported"),
    ("irrelevant", "Irrelevant"),
)
KEYS = {"supported": "s", "not-supported": "n", "irrelevant": "i"}
# FActScore's S / NS / IR as stats.py's verdict labels
VERDICTS = {"supported": "supported", "not-supported": "unsupported", "irrelevant": "irrelevant"}
# A reference verdict as a fact label: FActScore's released S / NS / IR, or a verdict label
REFERENCE_LABELS = {
    "s": "supported",
    "ns": "not-supported",
    "ir": "irrelevant",
    **{v: label for label, v in VERDICTS.items()},
    **{label: label for label in VERDICTS},
}


def knowledge_of(claim_list: ClaimList) -> list[dict[str, str]]:
    """The passages to judge the facts against: the document's imported knowledge, else
    the distinct search results of the list's claims."""
    passages = claim_list.document.metadata.get("knowledge") or []
    if passages:
        return [
            {"title": p.get("title", ""), "text": p["text"], "url": p.get("url", "")}
            for p in passages
        ]
    seen: dict[tuple[str, str, str], None] = {}
    evidence = Evidence.objects.filter(claim__claim_list=claim_list)
    for e in evidence.order_by("claim__position", "rank"):
        seen.setdefault((e.title, e.snippet, e.link), None)
    return [{"title": t, "text": s, "url": u} for t, s, u in seen]


class AtomicForm(AnswerForm):
    response = ""  # the document's response, for the page's sentence marks

    def __init__(self, *args: Any, positions: list[int], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.positions = positions
        for p in positions:
            self.fields[form_name(f"fact:{p}", "label")] = forms.ChoiceField(
                choices=FACT_LABELS, widget=forms.RadioSelect, label=f"Fact {p + 1}"
            )
            self.fields[form_name(f"fact:{p}", "reason")] = forms.CharField(
                required=False, max_length=2000, label=f"Why (fact {p + 1}, optional)"
            )

    def fact_fields(self) -> list[forms.BoundField]:
        return [self[form_name(f"fact:{p}", "label")] for p in self.positions]

    def reason_fields(self) -> list[forms.BoundField]:
        return [self[form_name(f"fact:{p}", "reason")] for p in self.positions]


def sentence_pieces(
    response: str, sentences: list[str]
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The response cut at the facts' sentences, each found sentence numbered (its first
    occurrence from where the previous one ended, then from the start): the pieces
    [{text, sentence: n or None}] and sentence text -> n."""
    spans: list[tuple[int, int, str]] = []
    start = 0
    for text in dict.fromkeys(t.strip() for t in sentences if t and t.strip()):
        at = response.find(text, start)
        if at < 0:
            at = response.find(text)
        if at < 0 or any(a < at + len(text) and at < b for a, b, _ in spans):
            continue
        spans.append((at, at + len(text), text))
        start = at + len(text)
    spans.sort()
    pieces: list[dict[str, Any]] = []
    found: dict[str, int] = {}
    end = 0
    for n, (a, b, text) in enumerate(spans, start=1):
        if a > end:
            pieces.append({"text": response[end:a], "sentence": None})
        pieces.append({"text": response[a:b], "sentence": n})
        found[text] = n
        end = b
    if end < len(response):
        pieces.append({"text": response[end:], "sentence": None})
    return pieces, found


class AtomicItemsForm(PolicyForm):
    system = forms.ModelChoiceField(queryset=System.objects.none(), label="Facts of")
    n = sample_size()
    field_order = ["system", "n"]

    def __init__(self, *args: Any, project: Project, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["system"].queryset = project.systems.filter(kind=System.EXTRACTOR)  # type: ignore[attr-defined]

    def make(self, project: Project) -> list[Item]:
        data = self.cleaned_data
        return atomic_items(
            project=project, system=data["system"], n=data.get("n"), seed=data["seed"]
        )


def atomic_items(
    *,
    project: Project,
    system: System,
    documents: QuerySet[Document] | None = None,
    n: int | None = None,
    seed: int = 0,
) -> list[Item]:
    """One item per claim list of the system that has facts (in `documents`, if given).
    With `n`: a seeded sample of n of the lists that have no item yet."""
    lists = (
        ClaimList.objects.filter(system=system, document__project=project)
        .annotate(n=Count("claims"))
        .filter(n__gt=0)
    )
    if documents is not None:
        lists = lists.filter(document__in=documents)
    if not lists.exists():
        raise ValueError(f"{system.name} has no claim list with facts in this project")
    made = Item.objects.filter(project=project, kind=ATOMIC).values("list_a_id")
    chosen = sample_ids(lists.exclude(pk__in=made).values_list("pk", flat=True), n=n, seed=seed)
    created = []
    with transaction.atomic():
        for cl in ClaimList.objects.filter(pk__in=chosen).order_by("document_id"):
            item, was_created = Item.objects.get_or_create(
                project=project, kind=ATOMIC, list_a=cl, defaults={"document_id": cl.document_id}
            )
            if was_created:
                created.append(item)
    return created


class AtomicFacts(KindSpec):
    name = ATOMIC
    title = "Atomic facts"
    template = "annotation/atomic.html"
    fields = (
        Field(
            "label",
            "Is the fact supported by the knowledge source?",
            unit="fact",
            choices=FACT_LABELS,
        ),
        Field("reason", "Why (optional)", unit="fact", categorical=False),
    )
    agreement = (
        Agreement("fact", "label", "Atomic facts: supported, not supported or irrelevant"),
    )
    main_field = "label"
    report_sections = ("fact-labels",)
    keys = (
        (("j", "/", "k"), "next / previous fact"),
        (
            ("s", "/", "n", "/", "i"),
            "the fact is supported / not supported by the knowledge source / irrelevant",
        ),
        (("w",), "write why (the active fact's optional box; Esc leaves it)"),
    )
    verdict_field = "label"
    verdict_level = "fact"
    view_keys = {
        "facts": "atomic facts: [{position, text, sentence}] (the response's sentence "
        "the fact was taken from, when the file gives it)",
        "knowledge": "atomic facts: the knowledge source [{title, text, url}]",
        "topic": "atomic facts: the topic the response was asked about (FActScore)",
    }
    items_help = (
        "One item per response with a claim list from the system: each atomic fact "
        "labelled Supported, Not supported or Irrelevant against the document's "
        "knowledge passages or search results (FActScore)."
    )

    def report_section(self, slug: str) -> KindSection:
        from .report import fact_labels  # the report's modules load on first use

        return {"fact-labels": fact_labels}[slug]

    @property
    def verdict_target(self) -> type[Model]:
        return Claim

    def as_verdict(self, value: str | None) -> str | None:
        return VERDICTS.get(value or "", value)

    def view(self, item: Item, *, swapped: bool = False) -> dict[str, Any]:
        assert item.list_a is not None
        return {
            "facts": [
                {"position": c.position, "text": c.text, "sentence": c.sentence}
                for c in item.list_a.claims.all()
            ],
            "knowledge": knowledge_of(item.list_a),
            "topic": item.list_a.document.metadata.get("topic", ""),
        }

    def form(
        self, item: Item, data: Mapping[str, Any] | None, initial: dict[str, str] | None
    ) -> AnswerForm:
        assert item.list_a is not None
        positions = list(item.list_a.claims.values_list("position", flat=True))
        form = AtomicForm(data, initial=initial, positions=positions)
        form.response = item.list_a.document.response
        return form

    def page_context(self, view: dict[str, Any], form: AnswerForm) -> dict[str, Any]:
        assert isinstance(form, AtomicForm)
        response = form.response
        options = [{"value": v, "label": label, "key": KEYS[v]} for v, label in FACT_LABELS]
        sentences = [f["sentence"] for f in view["facts"]]
        pieces, found = sentence_pieces(response, sentences)
        return {
            "knowledge": view["knowledge"],
            "topic": view["topic"],
            "pieces": pieces,
            "facts": [
                {
                    "fact": fact,
                    "field": field,
                    "reason": reason,
                    "options": options,
                    "sentence": found.get(fact["sentence"]),
                }
                for fact, field, reason in zip(
                    view["facts"], form.fact_fields(), form.reason_fields(), strict=True
                )
            ],
        }

    def expected(
        self, project: Project, items: dict[int, ItemInfo]
    ) -> dict[int, list[tuple[str, str]]]:
        positions: dict[int | None, list[int]] = defaultdict(list)
        lists = [info.list_a for info in items.values()]
        claims = Claim.objects.filter(claim_list__in=lists)
        for cl, pos in claims.values_list("claim_list_id", "position"):
            positions[cl].append(pos)
        return {
            pk: [(f"fact:{p}", "label") for p in sorted(positions.get(info.list_a, []))]
            for pk, info in items.items()
        }

    def unit_content(self, item: Item, unit: str, *, reveal: bool) -> dict[str, object]:
        """The fact with what the annotators saw (the response, the fact's sentence, the
        knowledge source) and the labels imported for it (FActScore's S / NS / IR)."""
        assert item.list_a is not None
        fact = item.list_a.claims.filter(position=unit_index(unit)).first()  # type: ignore[misc]
        if fact is None:
            return {"claim": ""}
        document = item.list_a.document
        return {
            "claim": fact.text,
            "response": document.response,
            "sentence": fact.sentence,
            "knowledge": knowledge_of(item.list_a),
            "topic": document.metadata.get("topic", ""),
            "imported": [
                {"system": name, "label": label}
                for name, label in fact.verdicts.order_by("system__name").values_list(
                    "system__name", "label"
                )
            ],
        }

    def verdict_targets(self, project: Project, golds: list[Gold]) -> list[Target]:
        info = {
            pk: (cl, domain, doc)
            for pk, cl, domain, doc in Item.objects.filter(
                project=project, kind=self.name
            ).values_list("pk", "list_a_id", "document__domain", "document_id")
        }
        facts = Claim.objects.filter(claim_list__in=[i[0] for i in info.values()])
        claims = {
            (cl, pos): pk for pk, cl, pos in facts.values_list("pk", "claim_list_id", "position")
        }
        targets = []
        for g in golds:
            if g.field != self.verdict_field or g.value is None or g.item not in info:
                continue
            cl, domain, doc = info[g.item]
            claim = claims.get((cl, unit_index(g.unit)))  # type: ignore[arg-type]
            if claim is not None:
                targets.append(Target(g, claim, domain, doc))
        return targets

    def reference_from(self, item: Item, verdicts: QuerySet[Verdict]) -> dict[str, str]:
        """Each fact's label from the verdicts on the item's facts (FActScore's human
        labels: factscore-human-labels)."""
        reference = {}
        found = verdicts.filter(claim__claim_list=item.list_a_id).order_by("claim__position")
        for pos, label in found.values_list("claim__position", "label"):
            value = REFERENCE_LABELS.get(label.strip().lower())
            if value is None:
                raise ValueError(
                    f"fact {pos + 1}: the verdict {label!r} is not S, NS or IR "
                    "(supported, not supported, irrelevant)"
                )
            reference[f"fact:{pos}.label"] = value
        return reference

    def items_form(self, project: Project, data: Mapping[str, Any] | None = None) -> PolicyForm:
        return AtomicItemsForm(data, project=project)

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("system", help="the system whose claim lists hold the facts")
        parser.add_argument("--n", type=int, help="a seeded sample of this many items")

    def cli_data(self, opts: dict[str, Any], system: Callable[[str], int]) -> dict[str, Any]:
        return {"system": system(opts["system"]), "n": opts.get("n")}

    def ls_slots(self, items: list[Item]) -> int:
        return max(i.list_a.claims.count() for i in items if i.list_a)

    def label_config(self, slots: int, project: Project) -> str:
        parts = [ls_text("knowledge", "Knowledge source")]
        for p in range(slots):
            parts += [
                ls_text(f"fact_{p}", f"Fact {p + 1}"),
                ls_choices(f"label_{p}", f"fact_{p}", [v for v, _ in FACT_LABELS], required=False),
                ls_textarea(f"reason_{p}", f"fact_{p}", placeholder="Why (optional)"),
            ]
        return "".join(parts)

    def ls_task(self, view: dict[str, Any], slots: int) -> dict[str, Any]:
        knowledge = "\n\n".join(
            f"{k['title']}\n{k['text']}\n{k['url']}".strip() for k in view["knowledge"]
        )
        return {
            "facts": view["facts"],
            "knowledge": knowledge or NO_TEXT,
            **ls_parts("fact", view["facts"], slots),
        }

    def ls_to_name(self, unit: str, field: str) -> str:
        return "response" if unit == ITEM else f"fact_{unit.split(':', 1)[1]}"

    def fact_verdicts(self, project: Project, golds: list[Gold] | None = None) -> dict[int, str]:
        """Claim id -> the gold label of the fact as a verdict (supported, unsupported or
        irrelevant), like a verifier's verdict set: what FActScore-style tables read;
        `golds`: the golds of all of this kind's submitted answers, if the caller has them."""
        from ...gold import gold_values

        if golds is None:
            golds = gold_values(project, kind=self.name)
        return {
            t.target: VERDICTS[t.gold.value]
            for t in self.verdict_targets(project, golds)
            if t.gold.value in VERDICTS
        }


SPEC = AtomicFacts()
fact_verdicts = SPEC.fact_verdicts
