"""The hiring forms, for the hiring page and the hiring API alike: a project's quality
policy and an invite link."""

from __future__ import annotations

import datetime as dt
import re

from django import forms

from ..models import Item, Project
from .markets import MARKETS, OTHER
from .models import HiringPolicy, Invite, QualityItem
from .services import check_pool_problem, mark_many, sample

PARAM = re.compile(r"[A-Za-z0-9_]{1,50}")  # a URL parameter's name


CARELESS_FIELDS = [
    "training_per_person",
    "careless_action",
    "careless_fast_share",
    "careless_same_share",
    "careless_run",
    "min_seconds_per_item",
]

MAX_CHECK_RATE = 0.5  # more, and a queue is mostly checks


class PolicyForm(forms.ModelForm):
    class Meta:
        model = HiringPolicy
        fields = [
            "pass_mark",
            "check_rate",
            "pause_below",
            "pause_after",
            "pay_per_item",
            "pay_per_correct_check",
            *CARELESS_FIELDS,
            "join_expiry_minutes",
            "lock_at_completion",
        ]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for name in CARELESS_FIELDS:  # left out (the API's older body): kept as they are
            self.fields[name].required = False

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        for name in CARELESS_FIELDS:
            if data.get(name) is None:
                data[name] = getattr(self.instance, name)
        if not 0 < (data.get("careless_fast_share") or 0) <= 1:
            self.add_error("careless_fast_share", "Give a share above 0, at most 1.")
        if not 0.5 <= (data.get("careless_same_share") or 0) <= 1:
            self.add_error("careless_same_share", "Give a share between 0.5 and 1.")
        if not 2 <= (data.get("careless_run") or 0) <= 1000:
            self.add_error("careless_run", "Give 2 to 1000 items.")
        if (data.get("min_seconds_per_item") or 0) > 3600:
            self.add_error("min_seconds_per_item", "Give at most 3600 seconds.")
        if (data.get("training_per_person") or 0) > 1000:
            self.add_error("training_per_person", "Give at most 1000 items.")
        for name in ("pass_mark", "check_rate", "pause_below"):
            v = data.get(name)
            if v is not None and not 0 <= v <= 1:
                self.add_error(name, "Give a share between 0 and 1.")
        for name in ("pay_per_item", "pay_per_correct_check"):
            v = data.get(name)
            if v is not None and not 0 <= v <= 1000:
                self.add_error(name, "Give an amount between 0 and 1000.")
        rate = data.get("check_rate")
        if rate is not None and MAX_CHECK_RATE < rate <= 1:
            self.add_error("check_rate", f"At most {MAX_CHECK_RATE:.0%} of a queue can be checks.")
        return data


# A hundred years: further out, the expiry date overflows (a 500 before this bound).
MAX_INVITE_DAYS = 36500


class InviteForm(forms.ModelForm):
    expires_in_days = forms.IntegerField(required=False, min_value=1, max_value=MAX_INVITE_DAYS)

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
            "screened_out_code",
            "screened_out_url",
            "skips_allowed",
            "time_limit_minutes",
            "market",
            "study_id",
        ]

    def clean(self) -> dict[str, object]:
        """A market's link takes the market's worker parameter unless another is named,
        and needs one; its study id is in the market's documented form."""
        data = super().clean() or {}
        if self.instance.project_id and (n := data.get("items_per_person")):
            problem = check_pool_problem(self.instance.project, int(str(n)))
            if problem:
                self.add_error("items_per_person", problem)
        market = MARKETS.get(str(data.get("market") or OTHER), MARKETS[OTHER])
        data["market"] = market.name
        if market.name == OTHER:
            return data
        if "worker_param" not in self.data or data.get("worker_param") == "PROLIFIC_PID":
            data["worker_param"] = market.worker_param  # the form's default: Prolific's
        if not data.get("worker_param"):
            self.add_error("worker_param", f"A {market.label} link needs the worker id parameter.")
        study = data.get("study_id") or ""
        pattern, rule = market.rule(market.study_param, False)
        if study and not pattern.fullmatch(str(study)):
            self.add_error("study_id", f"A {market.label} study id is {rule}.")
        return data

    def clean_extra_params(self) -> list[str]:
        value = self.cleaned_data.get("extra_params") or []
        if not isinstance(value, list) or not all(
            isinstance(v, str) and PARAM.fullmatch(v) for v in value
        ):
            raise forms.ValidationError('Give a list of parameter names, e.g. ["STUDY_ID"].')
        return value

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["skips_allowed"].required = False
        self.fields["market"].required = False

    def clean_skips_allowed(self) -> int:
        return self.cleaned_data.get("skips_allowed") or 0

    def clean_worker_param(self) -> str:
        value = self.cleaned_data.get("worker_param") or ""
        if value and not PARAM.fullmatch(value):
            raise forms.ValidationError("Give a URL parameter name, e.g. PROLIFIC_PID.")
        return value

    def clean_time_limit_minutes(self) -> int | None:
        value = self.cleaned_data.get("time_limit_minutes")
        if value is not None and not 1 <= value <= 60 * 24 * 30:
            raise forms.ValidationError("Give a time limit between 1 minute and 30 days.")
        return value

    def save(self, commit: bool = True) -> Invite:
        invite: Invite = super().save(commit=False)
        if invite.market != OTHER:  # the market's parameter when none was named
            invite.worker_param = self.cleaned_data["worker_param"]
        days = self.cleaned_data.get("expires_in_days")
        if days:
            invite.expires_at = invite.created_at + dt.timedelta(days=days)
        if commit:
            invite.save()
        return invite


class MarkManyForm(forms.Form):
    """Mark items chosen on the items list (`items`) or drawn at random (`sample` per
    kind) as training or checks; each takes its reference from `reference_system`'s
    verdicts or else its adjudications."""

    items = forms.TypedMultipleChoiceField(coerce=int, required=False, choices=[])
    sample = forms.IntegerField(
        required=False, min_value=1, max_value=1000, help_text="or: this many per kind, at random"
    )
    role = forms.ChoiceField(choices=QualityItem.ROLES)
    reference_system = forms.CharField(
        required=False,
        max_length=200,
        help_text="an imported reference system (e.g. factscore-human-labels); empty: the"
        " items' adjudications",
    )
    explanation = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, project: Project, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.project = project
        self.fields["items"].choices = [  # type: ignore[attr-defined]
            (pk, pk) for pk in Item.objects.filter(project=project).values_list("pk", flat=True)
        ]

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if bool(data.get("items")) == bool(data.get("sample")):
            raise forms.ValidationError("Select items on the items list, or give a sample size.")
        name = (data.get("reference_system") or "").strip()
        data["system"] = self.project.systems.filter(name=name).first() if name else None
        if name and data["system"] is None:
            self.add_error("reference_system", f"No system {name!r} in this project.")
        return data

    def chosen(self) -> list[Item]:
        if self.cleaned_data.get("sample"):
            return sample(self.project, self.cleaned_data["sample"])
        return list(Item.objects.filter(pk__in=self.cleaned_data["items"]).order_by("pk"))

    def save(self) -> tuple[int, list[str]]:
        return mark_many(
            self.chosen(),
            self.cleaned_data["role"],
            system=self.cleaned_data["system"],
            explanation=self.cleaned_data["explanation"],
        )
