"""The hiring forms, for the hiring page and the hiring API alike: a project's quality
policy and an invite link."""

from __future__ import annotations

import datetime as dt

from django import forms

from .models import HiringPolicy, Invite


class PolicyForm(forms.ModelForm):
    class Meta:
        model = HiringPolicy
        fields = ["pass_mark", "check_rate", "pause_below", "pause_after"]

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        for name in ("pass_mark", "check_rate", "pause_below"):
            v = data.get(name)
            if v is not None and not 0 <= v <= 1:
                self.add_error(name, "Give a share between 0 and 1.")
        if data.get("check_rate") == 1:
            self.add_error("check_rate", "A queue cannot be only checks.")
        return data


class InviteForm(forms.ModelForm):
    expires_in_days = forms.IntegerField(required=False, min_value=1)

    class Meta:
        model = Invite
        fields = [
            "note",
            "cap",
            "worker_param",
            "extra_params",
            "items_per_person",
            "completion_code",
            "completion_url",
        ]

    def clean_extra_params(self) -> list[str]:
        value = self.cleaned_data.get("extra_params") or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise forms.ValidationError('Give a list of parameter names, e.g. ["STUDY_ID"].')
        return value

    def save(self, commit: bool = True) -> Invite:
        invite: Invite = super().save(commit=False)
        days = self.cleaned_data.get("expires_in_days")
        if days:
            invite.expires_at = invite.created_at + dt.timedelta(days=days)
        if commit:
            invite.save()
        return invite
