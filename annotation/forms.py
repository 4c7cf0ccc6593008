from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django import forms
from django.core.validators import URLValidator

from .ingest import FORMATS
from .kinds import CLAIM_LABEL_NAMES, STANCES
from .models import Assignment, Item, Membership, Project, System

# "At least a sentence": a few words ending in a full stop, or simply long enough.
MIN_JUSTIFICATION_WORDS = 4


class ProjectForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["name", "description", "instructions"]
        widgets = {"instructions": forms.Textarea(attrs={"rows": 8})}


class InstructionsForm(forms.Form):
    instructions = forms.CharField(widget=forms.Textarea(attrs={"rows": 8}))


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Membership.ROLES, initial=Membership.ANNOTATOR)
    password = forms.CharField(
        required=False,
        widget=forms.PasswordInput,
        help_text="Only to create a new account; leave empty to add an existing user.",
    )


class ImportForm(forms.Form):
    file = forms.FileField()
    format = forms.ChoiceField(choices=[("auto", "Detect")] + [(f, f) for f in FORMATS])
    system = forms.CharField(
        required=False, help_text="System name for VeriScore claim files (default: veriscore)."
    )
    source_model = forms.CharField(
        required=False, help_text="Model that wrote the responses, when the file does not say."
    )
    verifier = forms.CharField(
        required=False,
        help_text="System name for the labels of VeriScore verification files "
        "(default: <system>-verifier).",
    )
    domain = forms.CharField(
        required=False, help_text="FELM: the domain of a per-domain file (default: the file's name)."
    )
    mapping = forms.FileField(
        required=False,
        help_text="Any other layout: a mapping file (YAML or JSON) of JMESPath expressions.",
    )
    update = forms.BooleanField(
        required=False, help_text="Replace stored documents and claim lists that differ "
        "(never those with annotators' answers).",
    )


class PolicyForm(forms.Form):
    """How items are spread over annotators (models.assignment_plan)."""

    k = forms.IntegerField(min_value=1, initial=2, label="Annotators per overlap item (k)")
    all_annotators = forms.BooleanField(required=False, label="k = all annotators")
    fraction = forms.FloatField(
        min_value=0, max_value=1, initial=0.2, label="Fraction of items with overlap (f)"
    )
    seed = forms.IntegerField(initial=0)

    def policy(self, project: Project) -> dict[str, Any]:
        data = self.cleaned_data
        k = project.annotators().count() if data["all_annotators"] else data["k"]
        return {"k": k, "fraction": data["fraction"], "seed": data["seed"]}


class ComparisonItemsForm(PolicyForm):
    system_a = forms.ModelChoiceField(queryset=System.objects.none())
    system_b = forms.ModelChoiceField(queryset=System.objects.none())
    field_order = ["system_a", "system_b"]

    def __init__(self, *args: Any, project: Project, **kwargs: Any):
        super().__init__(*args, **kwargs)
        systems = project.systems.filter(kind=System.EXTRACTOR)
        self.fields["system_a"].queryset = systems
        self.fields["system_b"].queryset = systems

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("system_a") and data.get("system_a") == data.get("system_b"):
            raise forms.ValidationError("Pick two different systems.")
        return data


class VerificationItemsForm(PolicyForm):
    system = forms.ModelChoiceField(queryset=System.objects.none(), label="Claims of")
    n = forms.IntegerField(min_value=1, initial=50, label="Number of claims")
    stratify = forms.MultipleChoiceField(
        choices=[("domain", "domain"), ("source_model", "source model")], required=False,
        widget=forms.CheckboxSelectMultiple, label="Stratify by")
    field_order = ["system", "n", "stratify"]

    def __init__(self, *args: Any, project: Project, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.fields["system"].queryset = project.systems.filter(kind=System.EXTRACTOR)


class AnswerForm(forms.Form):
    """An annotator's answers. A form field named `<field>__<unit>` is stored as the
    answer (unit, field); a plain name belongs to the unit "item"."""

    @staticmethod
    def unit_field(name: str) -> tuple[str, str]:
        field, _, unit = name.partition("__")
        return (unit or "item", field)

    @staticmethod
    def form_name(unit: str, field: str) -> str:
        return field if unit == "item" else f"{field}__{unit}"

    @classmethod
    def initial_from(cls, answers: dict[tuple[str, str], str]) -> dict[str, str]:
        return {cls.form_name(unit, f): v for (unit, f), v in answers.items()}

    def answer_values(self) -> dict[tuple[str, str], str]:
        """The (unit, field) -> value rows of a valid form."""
        return {self.unit_field(n): str(v).strip() for n, v in self.cleaned_data.items() if v}

    def draft_values(self) -> dict[tuple[str, str], str]:
        """What a draft keeps: any text typed so far, and only valid choices."""
        values = {}
        for name, field in self.fields.items():
            value = self.data.get(name, "").strip()
            if isinstance(field, forms.ChoiceField) and not field.valid_value(value):
                continue
            if value:
                values[self.unit_field(name)] = value
        return values


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
    )

    def clean_justification(self) -> str:
        text = self.cleaned_data["justification"].strip()
        if len(re.findall(r"\w+", text)) < MIN_JUSTIFICATION_WORDS:
            raise forms.ValidationError("Please justify your choice in at least one sentence.")
        return text


def consistency_hints(label: str, stances: list[str]) -> list[str]:
    """Where a claim label and the per-result stances disagree with Table 5 of VeriScore.
    Hints do not block: the annotator may confirm the label."""
    supports, contradicts = "supports" in stances, "contradicts" in stances
    hints = []
    if label == "supported" and not supports:
        hints.append("“Supported” but no search result is marked as supporting the claim.")
    if label == "supported" and contradicts:
        hints.append("“Supported” while a search result contradicts the claim "
                     "(contradicted, or inconclusive: conflicting evidence?).")
    if label == "contradicted" and not contradicts:
        hints.append("“Contradicted” but no search result is marked as contradicting the claim.")
    if label == "inconclusive-conflicting" and not (supports and contradicts):
        hints.append("“Conflicting evidence” needs a result that supports and one that contradicts.")
    if label == "inconclusive-not-enough" and supports and not contradicts:
        hints.append("“Not enough information” while a result supports the claim and none "
                     "contradicts it (supported?).")
    return hints


class VerificationForm(AnswerForm):
    """Stances per search result, then the claim label (VeriScore §3.3, Table 5)."""

    label = forms.ChoiceField(choices=list(CLAIM_LABEL_NAMES.items()), widget=forms.RadioSelect,
                              label="Is the claim supported by the search results?")
    confirm = forms.BooleanField(required=False, label="I have checked: keep my label")

    def __init__(self, *args: Any, ranks: list[int], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.ranks = ranks
        for rank in ranks:
            self.fields[f"stance__evidence:{rank}"] = forms.ChoiceField(
                choices=[(s, s.capitalize()) for s in STANCES], widget=forms.RadioSelect,
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
                "Please check your label, or confirm it: " + " ".join(self.hints), code="hint")
        return data

    def answer_values(self) -> dict[tuple[str, str], str]:
        values = super().answer_values()
        values.pop(("item", "confirm"), None)
        if self.hints:
            values[("item", "hints")] = " | ".join(self.hints)
            values[("item", "hint_confirmed")] = "yes"
        return values

    def stance_fields(self) -> list[forms.BoundField]:
        return [self[f"stance__evidence:{r}"] for r in self.ranks]


class SegmentForm(AnswerForm):
    """FELM's annotation page: each segment correct or not; when not, an error type, a
    reason and reference links; keep or remove the response."""

    keep = forms.ChoiceField(choices=[("keep", "Keep"), ("remove", "Remove")],
                             widget=forms.RadioSelect, label="Keep this response?")

    def __init__(self, *args: Any, positions: list[int], error_types: list[str], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.positions = positions
        for p in positions:
            self.fields[f"correct__segment:{p}"] = forms.ChoiceField(
                choices=[("true", "Correct"), ("false", "Incorrect")], widget=forms.RadioSelect,
                label=f"Segment {p + 1}")
            self.fields[f"error_type__segment:{p}"] = forms.ChoiceField(
                choices=[(e, e) for e in error_types], widget=forms.RadioSelect, required=False,
                label="Error type")
            self.fields[f"reason__segment:{p}"] = forms.CharField(
                required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Reason")
            self.fields[f"links__segment:{p}"] = forms.CharField(
                required=False, widget=forms.Textarea(attrs={"rows": 2}),
                label="Reference links (one per line)")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for p in self.positions:
            if data.get(f"correct__segment:{p}") != "false":
                # a correct segment carries no error details
                for name in ("error_type", "reason", "links"):
                    data[f"{name}__segment:{p}"] = ""
                continue
            where = f"Segment {p + 1}"
            if not data.get(f"error_type__segment:{p}"):
                self.add_error(f"error_type__segment:{p}", f"{where} is incorrect: choose an error type.")
            if not data.get(f"reason__segment:{p}", "").strip():
                self.add_error(f"reason__segment:{p}", f"{where} is incorrect: say why.")
            links = data.get(f"links__segment:{p}", "").split()
            if not links:
                self.add_error(f"links__segment:{p}", f"{where} is incorrect: give at least one reference link.")
            for link in links:
                try:
                    URLValidator(schemes=["http", "https"])(link)
                except forms.ValidationError:
                    self.add_error(f"links__segment:{p}", f"{where}: “{link[:80]}” is not a valid http(s) link.")
            data[f"links__segment:{p}"] = "\n".join(links)
        return data

    def segment_rows(self) -> list[dict[str, forms.BoundField]]:
        return [
            {name: self[f"{name}__segment:{p}"] for name in ("correct", "error_type", "reason", "links")}
            for p in self.positions
        ]


class SkipForm(forms.Form):
    reason = forms.CharField(max_length=500, widget=forms.TextInput(attrs={"size": 40}))


class PipelineRunForm(forms.Form):
    """What a researcher chooses for a pipeline run. No API key field: keys come from the
    worker's environment (OPENAI_API_KEY, SERPER_API_KEY) and are never stored."""

    extractor = forms.ChoiceField(
        choices=[("veriscore", "VeriScore (sliding window, Tables 6-7)"),
                 ("atomic", "Atomic facts per sentence (FActScore/SAFE-style baseline)")])
    label_mode = forms.ChoiceField(
        label="Verification labels",
        choices=[("binary", "Binary (supported / unsupported)"),
                 ("ternary", "Ternary (supported / contradicted / inconclusive)")])
    model = forms.CharField(max_length=200, help_text="Model name at the endpoint.")
    base_url = forms.CharField(
        label="Base URL", max_length=500, required=False,
        help_text="Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama); empty: OpenAI.")
    retriever = forms.ChoiceField(
        choices=[("serper", "Serper (Google results)"), ("bm25", "BM25 over the local corpus")])
    offline = forms.BooleanField(
        required=False, help_text="Answer from the pipeline's cache only; a miss fails the chunk.")
    chunk_size = forms.IntegerField(
        min_value=1, max_value=1000, initial=10,
        help_text="Documents per task; workers share a run chunk by chunk.")
    fixed_k = forms.FloatField(
        label="Fixed K", required=False, min_value=1,
        help_text="Empty: K per domain is the median claim count (VeriScore's upper median).")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        import os

        super().__init__(*args, **kwargs)
        self.fields["model"].initial = os.environ.get("PIPELINE_MODEL") or "gpt-4o-mini"
        self.fields["base_url"].initial = os.environ.get("OPENAI_BASE_URL", "")

    def clean_base_url(self) -> str:
        url = str(self.cleaned_data["base_url"]).strip()
        if url:
            URLValidator(schemes=["http", "https"])(url)
        return url


def answer_form(assignment: Assignment, data: Mapping[str, Any] | None = None) -> AnswerForm:
    """The form of the assignment's kind, bound to posted data (pages, API, Label Studio)
    or, without data, filled with the stored answers."""
    item = assignment.item
    initial = AnswerForm.initial_from(assignment.answers_dict()) if data is None else None
    if item.kind == Item.VERIFICATION:
        assert item.claim is not None
        ranks = list(item.claim.evidence.values_list("rank", flat=True))
        return VerificationForm(data, initial=initial, ranks=ranks)
    if item.kind == Item.SEGMENT:
        positions = list(item.document.segments.shown().values_list("position", flat=True))
        return SegmentForm(data, initial=initial, positions=positions,
                           error_types=list(item.project.error_types))
    return ComparisonForm(data, initial=initial)
