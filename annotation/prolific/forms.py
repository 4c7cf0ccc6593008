"""The page's form for an action on an invite's Prolific study (the API's serializer takes
the same names); `params()` gives what `services.act` reads."""

from __future__ import annotations

from typing import Any

from django import forms

from . import services
from .client import REJECTION_CATEGORIES


class ActionForm(forms.Form):
    action = forms.ChoiceField(choices=[(a, a) for a in services.ACTIONS])
    name = forms.CharField(required=False, max_length=200, help_text="the title participants see")
    description = forms.CharField(
        required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3})
    )
    reward_cents = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=services.MAX_REWARD_CENTS,
        label="Reward (cents)",
        help_text="per place, in the Prolific account's currency",
    )
    places = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=services.MAX_PLACES,
        help_text="default: the invite's cap",
    )
    estimated_minutes = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=24 * 60,
        help_text="default: the pilot's median active time per item x the items per person",
    )
    submissions = forms.MultipleChoiceField(required=False)  # choices: the study's
    category = forms.ChoiceField(
        required=False,
        choices=[("", "–")] + [(c, c) for c in REJECTION_CATEGORIES],
        label="Rejection category",
    )
    message = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="sent to the participant; Prolific requires at least "
        f"{services.MIN_REJECTION_MESSAGE} characters",
    )
    reasons = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Return reasons",
        help_text="one per line",
    )
    confirm = forms.BooleanField(required=False)

    def __init__(self, *args: Any, submission_ids: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["submissions"].choices = [(s, s) for s in submission_ids or []]  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("action") == "create":
            missing = [f for f in ("name", "description", "reward_cents") if not data.get(f)]
            if missing:
                raise forms.ValidationError(f"A new study needs: {', '.join(missing)}.")
        return data

    def params(self) -> dict[str, Any]:
        data = dict(self.cleaned_data)
        data["reasons"] = [line for line in data.get("reasons", "").splitlines() if line.strip()]
        return data
