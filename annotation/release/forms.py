"""The release form the page and the API share: the licence, the card's header values
and its free-text parts (shown filled with the project's defaults, to edit)."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from ..models import Project
from .options import (
    FREE_TEXT,
    LICENCES,
    MAX_TEXT,
    TASK_CATEGORIES,
    ReleaseOptions,
    options_json,
    project_options,
)
from .study import available_licences

LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")  # ISO 639 with an optional region

FREE_TEXT_HELP = {
    "summary": "What was annotated, and why (the card's opening).",
    "limitations": "What the data cannot tell.",
    "source_data": "Where the items came from and under which licences.",
    "demographics": "Who the annotators were: only what you collected with their consent "
    "(left out of croissant.json when empty).",
    "citation": "How to cite the dataset (BibTeX), if you like.",
}


def form_initial(project: Project) -> dict[str, Any]:
    """The form as the project's release starts: an imported project's as the release it
    came from was built (its study.json), else the defaults and the card's parts written
    from the project."""
    options = project_options(project)
    return options_json(options) | {"languages": ", ".join(options.languages)}


class ReleaseForm(forms.Form):
    license = forms.ChoiceField(choices=[(v, v) for v in LICENCES], initial="cc-by-4.0")
    languages = forms.CharField(
        initial="en", max_length=200, help_text="ISO 639 codes, separated by commas"
    )
    task_categories = forms.MultipleChoiceField(
        choices=[(v, v) for v in TASK_CATEGORIES],
        initial=["text-classification"],
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    pretty_name = forms.CharField(max_length=200, required=False)
    summary = forms.CharField(widget=forms.Textarea, required=False, max_length=MAX_TEXT)
    limitations = forms.CharField(widget=forms.Textarea, required=False, max_length=MAX_TEXT)
    source_data = forms.CharField(widget=forms.Textarea, required=False, max_length=MAX_TEXT)
    demographics = forms.CharField(widget=forms.Textarea, required=False, max_length=MAX_TEXT)
    citation = forms.CharField(widget=forms.Textarea, required=False, max_length=MAX_TEXT)
    source_licences = forms.MultipleChoiceField(
        choices=(), required=False, widget=forms.CheckboxSelectMultiple
    )
    bootstrap = forms.IntegerField(min_value=0, max_value=10_000, initial=1000, required=False)

    def __init__(self, data: Any = None, *, project: Project) -> None:
        super().__init__(data, initial={} if data is not None else form_initial(project))
        licences = self.fields["source_licences"]
        assert isinstance(licences, forms.MultipleChoiceField)
        licences.choices = [(v, v) for v in available_licences()]
        for name in FREE_TEXT:
            self.fields[name].help_text = FREE_TEXT_HELP[name]

    def clean_languages(self) -> tuple[str, ...]:
        codes = tuple(c.strip() for c in self.cleaned_data["languages"].split(",") if c.strip())
        bad = [c for c in codes if not LANGUAGE.match(c)]
        if bad or not codes:
            raise forms.ValidationError(f"not a language code: {', '.join(bad) or '(none)'}")
        return codes

    def options(self) -> ReleaseOptions:
        data = self.cleaned_data
        return ReleaseOptions(
            license=data["license"],
            languages=data["languages"],
            task_categories=tuple(data["task_categories"] or ("text-classification",)),
            pretty_name=data["pretty_name"],
            source_licences=tuple(data["source_licences"]),
            bootstrap=1000 if data["bootstrap"] is None else data["bootstrap"],
            **{name: data[name] for name in FREE_TEXT},
        )
