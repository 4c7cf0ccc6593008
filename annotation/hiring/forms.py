"""The hiring forms, for the hiring page and the hiring API alike: a project's quality
policy and an invite link."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

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
        labels = {
            "pass_mark": "Training pass mark",
            "check_rate": "Share of known-answer checks",
            "pause_below": "Pause below check accuracy",
            "pause_after": "Checks before a pause can happen",
            "pay_per_item": "Bonus per real item",
            "pay_per_correct_check": "Bonus per correct check",
            "training_per_person": "Training items per person",
            "careless_action": "When answers look careless",
            "careless_fast_share": "Too fast: share of the median time",
            "careless_same_share": "Same label: share of a run",
            "careless_run": "Same label: run length (items)",
            "min_seconds_per_item": "Minimum seconds per item",
            "join_expiry_minutes": "Minutes to start after joining",
            "lock_at_completion": "Lock answers at completion",
        }
        help_texts = {
            "pass_mark": "share of training units answered like the reference (0 to 1)",
            "check_rate": f"share of a new queue that are known-answer checks (0 to"
            f" {MAX_CHECK_RATE})",
            "pause_below": "a person whose check accuracy falls below this (0 to 1) is"
            " paused; empty: never",
            "pause_after": "checks a person answers before the pause rule applies",
            "pay_per_item": "the payments export's bonus for each real item submitted",
            "pay_per_correct_check": "the bonus for each known-answer unit answered right",
            "training_per_person": "drawn at random from the training items; 0 = every"
            " training item",
            "careless_fast_share": "faster than this share of the project's median time"
            " per item counts as too fast (above 0, at most 1)",
            "careless_same_share": "the same label on this share (0.5 to 1) ...",
            "careless_run": "... of this many items in a row counts as careless",
            "min_seconds_per_item": "an item answered faster counts as careless; 0 = no minimum",
            "join_expiry_minutes": "a person who submits nothing this long after joining"
            " is returned and frees their place; empty: never",
            "lock_at_completion": "a person who completed cannot change their answers",
        }
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


class ParamNamesField(forms.CharField):
    """URL parameter names: typed as "STUDY_ID, SESSION_ID" (commas or spaces), or a
    list (the API's body; a JSON list as text, as older pages posted it)."""

    def to_python(self, value: Any) -> Any:
        if isinstance(value, list):
            return value
        text = (super().to_python(value) or "").strip()
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError as e:
                raise forms.ValidationError("Give parameter names separated by commas.") from e
        return [v for v in re.split(r"[\s,]+", text) if v]

    def prepare_value(self, value: Any) -> Any:
        return ", ".join(value) if isinstance(value, list) else value


class InviteForm(forms.ModelForm):
    expires_in_days = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_INVITE_DAYS,
        label="Expires after (days)",
        help_text="empty: never",
    )
    extra_params = ParamNamesField(
        required=False,
        label="Other URL parameters to store",
        help_text="names separated by commas, e.g. GROUP, SOURCE: their values are stored"
        " with the worker id; a Prolific link stores STUDY_ID and SESSION_ID anyway",
    )

    class Meta:
        model = Invite
        labels = {
            "note": "Note (for you)",
            "cap": "At most this many people",
            "worker_param": "Worker id parameter",
            "items_per_person": "Real items per person",
            "completion_code": "Completion code",
            "completion_url": "Completion URL",
            "screened_out_code": "Screened-out code",
            "screened_out_url": "Screened-out URL",
            "skips_allowed": "Skips allowed",
            "time_limit_minutes": "Time limit (minutes)",
            "market": "Market",
            "study_id": "Study id",
        }
        help_texts = {
            "note": "seen by researchers only",
            "cap": "empty: no limit",
            "worker_param": "the URL parameter holding the worker's id (Prolific:"
            " PROLIFIC_PID, MTurk: workerId, taken from the market when left as"
            " PROLIFIC_PID); empty: no id asked, every Start makes a new account",
            "items_per_person": "real items each person gets on joining (the least"
            " covered ones), besides training and known-answer checks; 0 = no real items"
            " (training and checks only)",
            "completion_code": "shown when the person has done their items (Prolific's"
            " completion code)",
            "completion_url": "where a person who is done is sent instead of seeing the"
            " code, e.g. https://app.prolific.com/submissions/complete?cc=CODE",
            "screened_out_code": "shown when training fails or checks pause the person",
            "screened_out_url": "where a screened-out person is sent instead of seeing the code",
            "skips_allowed": "skipped items that still count as done",
            "time_limit_minutes": "minutes from joining; a person not finished by then"
            " is returned (their open items go back to the pool); empty: no limit",
            "market": "whose ids the link takes: each market's ids are checked in their"
            " documented form",
            "study_id": "the market's id of the study (Prolific's STUDY_ID): a join"
            " naming another study is refused; empty: not checked",
        }
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
            raise forms.ValidationError(
                "Give parameter names (letters, digits, _) separated by commas, e.g. GROUP, SOURCE."
            )
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
