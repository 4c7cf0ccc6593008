from __future__ import annotations

import re
from typing import Any

from django import forms

from .ingest import FORMATS
from .models import Membership, Project, System

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


class ComparisonItemsForm(forms.Form):
    system_a = forms.ModelChoiceField(queryset=System.objects.none())
    system_b = forms.ModelChoiceField(queryset=System.objects.none())
    k = forms.IntegerField(min_value=1, initial=2, label="Annotators per overlap item (k)")
    all_annotators = forms.BooleanField(required=False, label="k = all annotators")
    fraction = forms.FloatField(
        min_value=0, max_value=1, initial=0.2, label="Fraction of items with overlap (f)"
    )
    seed = forms.IntegerField(initial=0)

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


class ComparisonForm(forms.Form):
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

    @staticmethod
    def from_answers(answers: dict[tuple[str, str], str]) -> dict[str, str]:
        return {f: v for (unit, f), v in answers.items() if unit == "item"}

    def answer_values(self) -> dict[tuple[str, str], str]:
        """The (unit, field) -> value rows of a valid form."""
        return {("item", f): str(v).strip() for f, v in self.cleaned_data.items() if v}

    def draft_values(self) -> dict[tuple[str, str], str]:
        """What a draft keeps: any text typed so far, and only valid choices."""
        values = {}
        for name, field in self.fields.items():
            value = self.data.get(name, "").strip()
            if isinstance(field, forms.ChoiceField) and not field.valid_value(value):
                continue
            if value:
                values[("item", name)] = value
        return values


class SkipForm(forms.Form):
    reason = forms.CharField(max_length=500, widget=forms.TextInput(attrs={"size": 40}))
