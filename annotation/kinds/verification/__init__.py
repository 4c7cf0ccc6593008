"""Verification: one claim with its search results: a stance per result, then a
claim-level label (VeriScore §3.3, Tables 2, 5, 8)."""

from __future__ import annotations

from argparse import ArgumentParser
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.db import transaction
from django.db.models import Max, Model, QuerySet

from ...answers import fetch
from ...forms import AnswerForm, PolicyForm
from ...gold import Gold
from ...models import Claim, Evidence, Item, Project, System, Verdict, sample_claims
from ..base import ITEM, NO_TEXT, Agreement, Field, ItemInfo, KindSpec, Target, ls_choices, ls_text
from ..protocols import KindSection
from ..schema import VERIFICATION

STANCES = ["supports", "contradicts", "inconclusive"]
CLAIM_LABEL_NAMES = {
    "supported": "Supported",
    "contradicted": "Contradicted",
    "inconclusive-not-enough": "Inconclusive (not enough information)",
    "inconclusive-conflicting": "Inconclusive (conflicting evidence)",
}
CLAIM_LABELS = list(CLAIM_LABEL_NAMES)
TIE_VALUE = "inconclusive-not-enough"  # VeriScore reads a tie as not enough information


def consistency_hints(label: str, stances: list[str]) -> list[str]:
    """Where a claim label and the per-result stances disagree with Table 5 of VeriScore.
    Hints do not block: the annotator may confirm the label."""
    supports, contradicts = "supports" in stances, "contradicts" in stances
    hints = []
    if label == "supported" and not supports:
        hints.append("“Supported” but no search result is marked as supporting the claim.")
    if label == "supported" and contradicts:
        hints.append(
            "“Supported” while a search result contradicts the claim "
            "(contradicted, or inconclusive: conflicting evidence?)."
        )
    if label == "contradicted" and not contradicts:
        hints.append("“Contradicted” but no search result is marked as contradicting the claim.")
    if label == "inconclusive-conflicting" and not (supports and contradicts):
        hints.append(
            "“Conflicting evidence” needs a result that supports and one that contradicts."
        )
    if label == "inconclusive-not-enough" and supports and not contradicts:
        hints.append(
            "“Not enough information” while a result supports the claim and none "
            "contradicts it (supported?)."
        )
    return hints


class VerificationForm(AnswerForm):
    """Stances per search result, then the claim label (VeriScore §3.3, Table 5)."""

    label = forms.ChoiceField(
        choices=list(CLAIM_LABEL_NAMES.items()),
        widget=forms.RadioSelect,
        label="Is the claim supported by the search results?",
    )
    confirm = forms.BooleanField(required=False, label="I have checked: keep my label")

    def __init__(self, *args: Any, ranks: list[int], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.ranks = ranks
        for rank in ranks:
            self.fields[f"stance__evidence:{rank}"] = forms.ChoiceField(
                choices=[(s, s.capitalize()) for s in STANCES],
                widget=forms.RadioSelect,
                label=f"Search result {rank}",
            )
        self.hints: list[str] = []

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        stances = [data.get(f"stance__evidence:{r}", "") for r in self.ranks]
        if data.get("label"):
            self.hints = consistency_hints(data["label"], stances)
        if self.hints and not data.get("confirm"):
            raise forms.ValidationError(
                "Please check your label, or confirm it: " + " ".join(self.hints), code="hint"
            )
        return data

    def answer_values(self) -> dict[tuple[str, str], str]:
        values = super().answer_values()
        values.pop((ITEM, "confirm"), None)
        if self.hints:
            values[(ITEM, "hints")] = " | ".join(self.hints)
            values[(ITEM, "hint_confirmed")] = "yes"
        return values

    def stance_fields(self) -> list[forms.BoundField]:
        return [self[f"stance__evidence:{r}"] for r in self.ranks]


class VerificationItemsForm(PolicyForm):
    system = forms.ModelChoiceField(queryset=System.objects.none(), label="Claims of")
    n = forms.IntegerField(min_value=1, initial=50, label="Number of claims")
    stratify = forms.MultipleChoiceField(
        choices=[("domain", "domain"), ("source_model", "source model")],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Stratify by",
    )
    field_order = ["system", "n", "stratify"]

    def __init__(self, *args: Any, project: Project, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["system"].queryset = project.systems.filter(kind=System.EXTRACTOR)  # type: ignore[attr-defined]

    def make(self, project: Project) -> list[Item]:
        data = self.cleaned_data
        return verification_items(
            project=project,
            system=data["system"],
            n=data["n"],
            seed=data["seed"],
            stratify=tuple(data["stratify"]),
        )


def verification_items(
    *, project: Project, system: System, n: int, seed: int, stratify: tuple[str, ...] = ()
) -> list[Item]:
    """Sample `n` claims of one system that have search results, one verification item
    each. `stratify` may name "domain" and "source_model"."""
    unknown = set(stratify) - {"domain", "source_model"}
    if unknown:
        raise ValueError(f"cannot stratify by {', '.join(sorted(unknown))}")
    taken = set(
        Item.objects.filter(project=project, kind=VERIFICATION).values_list("claim_id", flat=True)
    )
    rows = (
        Claim.objects.filter(
            claim_list__system=system, claim_list__document__project=project, evidence__isnull=False
        )
        .distinct()
        .values_list("id", "claim_list__document__domain", "claim_list__document__source_model")
    )
    pool = [
        (
            cid,
            "/".join(v for k, v in (("domain", domain), ("source_model", model)) if k in stratify),
        )
        for cid, domain, model in rows
        if cid not in taken
    ]
    if not pool:
        raise ValueError(f"no claim of {system.name} with search results is left to sample")
    docs = dict(
        Claim.objects.filter(id__in=[c for c, _ in pool]).values_list(
            "id", "claim_list__document_id"
        )
    )
    with transaction.atomic():
        return [
            Item.objects.create(
                project=project, kind=VERIFICATION, claim_id=cid, document_id=docs[cid]
            )
            for cid in sample_claims(pool, n=n, seed=seed)
        ]


class Verification(KindSpec):
    name = VERIFICATION
    title = "Verification"
    template = "annotation/verification.html"
    fields = (
        Field(
            "stance",
            "Stance of the search result",
            unit="evidence",
            choices=tuple((s, s.capitalize()) for s in STANCES),
        ),
        Field(
            "label",
            "Is the claim supported by the search results?",
            choices=tuple(CLAIM_LABEL_NAMES.items()),
        ),
    )
    agreement = (
        Agreement("evidence", "stance", "Verification: stance of each search result"),
        Agreement(ITEM, "label", "Verification: claim label"),
    )
    main_field = "label"
    tie_values = {"label": TIE_VALUE}
    report_sections = ("claim-labels", "evidence-ranks")
    keys = (
        (("j", "/", "k"), "next / previous search result"),
        (
            ("s", "/", "c", "/", "i"),
            "the result supports / contradicts / is inconclusive about the claim",
        ),
        (
            ("1", "–", "4"),
            "claim label: supported, contradicted, inconclusive (not enough "
            "information), inconclusive (conflicting evidence)",
        ),
        (("x",), "confirm a label the page questions"),
    )
    verdict_field = "label"
    verdict_level = "claim"
    verdict_modes = ("binary", "ternary")
    view_keys = {
        "claim": "verification: the claim",
        "evidence": "verification: its search results [{rank, title, snippet, link}]",
    }
    items_help = (
        "A seeded sample of claims that have search results, optionally stratified by "
        "domain and source model; one item per claim. (VeriScore's study: 50 claims "
        "for all three annotators and 3 × 90 single, i.e. n = 320, f = 50/320, k = 3.)"
    )

    def report_section(self, slug: str) -> KindSection:
        from .report import claim_labels, evidence_ranks  # loaded on first use

        return {"claim-labels": claim_labels, "evidence-ranks": evidence_ranks}[slug]

    @property
    def verdict_target(self) -> type[Model]:
        return Claim

    def view(self, item: Item, *, swapped: bool = False) -> dict[str, Any]:
        assert item.claim is not None
        return {
            "claim": item.claim.text,
            "evidence": [
                {"rank": e.rank, "title": e.title, "snippet": e.snippet, "link": e.link}
                for e in item.claim.evidence.all()
            ],
        }

    def form(
        self, item: Item, data: Mapping[str, Any] | None, initial: dict[str, str] | None
    ) -> AnswerForm:
        assert item.claim is not None
        ranks = list(item.claim.evidence.values_list("rank", flat=True))
        return VerificationForm(data, initial=initial, ranks=ranks)

    def page_context(self, view: dict[str, Any], form: AnswerForm) -> dict[str, Any]:
        assert isinstance(form, VerificationForm)
        by_rank = {e["rank"]: e for e in view["evidence"]}
        return {
            "claim": view["claim"],
            "results": [
                {"rank": rank, "evidence": by_rank[rank], "field": field}
                for rank, field in zip(form.ranks, form.stance_fields(), strict=True)
            ],
        }

    def expected(
        self, project: Project, items: dict[int, ItemInfo]
    ) -> dict[int, list[tuple[str, str]]]:
        ranks: dict[int | None, list[int]] = defaultdict(list)
        claims = [info.claim for info in items.values() if info.claim]
        evidence = Evidence.objects.filter(claim__in=claims)
        for claim, rank in evidence.values_list("claim_id", "rank"):
            ranks[claim].append(rank)
        return {
            pk: [(f"evidence:{r}", "stance") for r in sorted(ranks.get(info.claim, []))]
            + [(ITEM, "label")]
            for pk, info in items.items()
        }

    def queue_text(self, item: Item) -> str:
        return item.claim.text if item.claim else item.document.response

    def unit_content(self, item: Item, unit: str, *, reveal: bool) -> dict[str, object]:
        content: dict[str, object] = {"claim": item.claim.text if item.claim else ""}
        if unit != ITEM:
            content["evidence"] = Evidence.objects.filter(
                claim=item.claim, rank=int(unit.split(":", 1)[1])
            ).first()
        return content

    def verdict_targets(self, project: Project, golds: list[Gold]) -> list[Target]:
        items = Item.objects.filter(project=project, kind=self.name).order_by()
        info = {  # plain tuples from the cursor (answers.fetch): 40,000 items at 100,000
            pk: (claim, domain, doc)
            for pk, claim, domain, doc in fetch(
                items.values_list("pk", "claim_id", "document__domain", "document_id")
            )
        }
        return [
            Target(g, *info[g.item])
            for g in golds
            if g.field == self.verdict_field and g.value is not None and g.item in info
        ]

    def reference_from(self, item: Item, verdicts: QuerySet[Verdict]) -> dict[str, str]:
        """The claim label of the item's claim."""
        return {f"{ITEM}.label": v.label for v in verdicts.filter(claim=item.claim_id)}

    def items_form(self, project: Project, data: Mapping[str, Any] | None = None) -> PolicyForm:
        return VerificationItemsForm(data, project=project)

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("system", help="the extractor system whose claims are sampled")
        parser.add_argument("--n", type=int, default=50, help="claims to sample")
        parser.add_argument("--stratify", nargs="*", default=[], choices=["domain", "source_model"])

    def cli_data(self, opts: dict[str, Any], system: Callable[[str], int]) -> dict[str, Any]:
        return {"system": system(opts["system"]), "n": opts["n"], "stratify": opts["stratify"]}

    def ls_slots(self, items: list[Item]) -> int:
        return max((i.claim.evidence.aggregate(n=Max("rank"))["n"] or 0) for i in items if i.claim)

    def label_config(self, slots: int, project: Project) -> str:
        parts = [ls_text("claim", "Claim")]
        for r in range(1, slots + 1):
            parts += [
                ls_text(f"evidence_{r}", f"Search result {r}"),
                ls_choices(f"stance_{r}", f"evidence_{r}", STANCES, required=False),
            ]
        parts.append(
            ls_choices(
                "label",
                "claim",
                CLAIM_LABELS,
                header="Is the claim supported by the search results?",
            )
        )
        return "".join(parts)

    def ls_task(self, view: dict[str, Any], slots: int) -> dict[str, Any]:
        data: dict[str, Any] = {"claim": view["claim"], "evidence": view["evidence"]}
        by_rank = {e["rank"]: e for e in view["evidence"]}
        for r in range(1, slots + 1):
            e = by_rank.get(r)
            data[f"evidence_{r}"] = (
                f"{e['title']}\n{e['snippet']}\n{e['link']}".strip() if e else NO_TEXT
            )
        data["meta"] = {"ranks": sorted(by_rank)}
        return data

    def ls_to_name(self, unit: str, field: str) -> str:
        if unit != ITEM:
            return f"evidence_{unit.split(':', 1)[1]}"
        return "claim" if field == "label" else "response"


SPEC = Verification()
