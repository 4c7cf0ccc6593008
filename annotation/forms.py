from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.utils.html import format_html

from . import endpoints, manual
from .kinds.base import form_name, unit_field
from .models import AdaptiveOverlap, Item, Membership, Project

ANSWER_MAX_CHARS = 1_000_000  # the largest answer length limit a project may set
GOLD_METHODS = tuple(value for value, _ in Project._meta.get_field("gold_method").choices or ())
GOLD_METHOD_ERROR = "Unknown gold method %(value)s; one of " + ", ".join(GOLD_METHODS) + "."
ANSWER_DEFAULT = int(Project._meta.get_field("answer_max_chars").get_default())


def answer_max_chars_field() -> forms.IntegerField:
    return forms.IntegerField(
        min_value=1,
        max_value=ANSWER_MAX_CHARS,
        initial=ANSWER_DEFAULT,
        label="Longest free-text answer (characters)",
        help_text="An annotator's free-text answer (a justification, a note) longer than "
        f"this is refused with a message; 1 to {ANSWER_MAX_CHARS:,}.",
    )


class ProjectForm(forms.ModelForm):
    answer_max_chars = answer_max_chars_field()

    class Meta:
        model = Project
        fields = ["name", "description", "instructions", "answer_max_chars"]
        widgets = {"instructions": forms.Textarea(attrs={"rows": 8})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["answer_max_chars"].required = False  # the default when left out

    def clean_answer_max_chars(self) -> int:
        value = self.cleaned_data.get("answer_max_chars")
        return ANSWER_DEFAULT if value is None else int(value)


class ProjectSettingsForm(forms.ModelForm):
    """A project's settings after its creation (its instructions have their own versioned
    form): the project settings page and PUT /api/projects/<id>/settings/."""

    answer_max_chars = answer_max_chars_field()

    class Meta:
        model = Project
        fields = ["name", "description", "answer_max_chars", "gold_method"]
        error_messages = {"gold_method": {"invalid_choice": GOLD_METHOD_ERROR}}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["gold_method"].required = False  # left out: unchanged

    def clean_gold_method(self) -> str:
        return str(self.cleaned_data.get("gold_method") or self.instance.gold_method)


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


def sample_size() -> forms.IntegerField:
    """The items forms' sample size: at most n new items, drawn with the policy's seed."""
    return forms.IntegerField(
        required=False,
        min_value=1,
        label="Sample size",
        help_text="At most this many new items, drawn at random with the seed below (the "
        "same seed draws the same items); empty: every one.",
    )


class PolicyForm(forms.Form):
    """How items are spread over annotators (models.assignment_plan). The rules on k and
    f live in models.check_policy, which operations.create_items applies."""

    k = forms.IntegerField(initial=2, label="Annotators per overlap item (k)")
    all_annotators = forms.BooleanField(required=False, label="k = all annotators")
    fraction = forms.FloatField(initial=0.2, label="Fraction of items with overlap (f)")
    seed = forms.IntegerField(initial=0)

    def make(self, project: Project) -> list[Item]:
        """The items this form describes (a kind's items form says how)."""
        raise NotImplementedError

    def policy(self, project: Project) -> dict[str, Any]:
        data = self.cleaned_data
        k = project.annotators().count() if data["all_annotators"] else data["k"]
        return {"k": k, "fraction": data["fraction"], "seed": data["seed"]}


class AnswerForm(forms.Form):
    """An annotator's answers. A form field named `<field>__<unit>` is stored as the
    answer (unit, field); a plain name belongs to the unit "item"."""

    unit_field = staticmethod(unit_field)
    form_name = staticmethod(form_name)

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


class SkipForm(forms.Form):
    reason = forms.CharField(max_length=500, widget=forms.TextInput(attrs={"size": 40}))


MAX_FIXED_K = 100_000  # claims per response: beyond it every F1 is 0


class PipelineRunForm(forms.Form):
    """What a researcher chooses for a pipeline run. No URL and no key: the run names one
    of the operator's endpoints (annotation.endpoints), resolved by the worker."""

    extractor = forms.ChoiceField(
        choices=[
            ("veriscore", "VeriScore (sliding window, Tables 6-7)"),
            ("atomic", "Atomic facts per sentence (FActScore/SAFE-style baseline)"),
            ("verifastscore", "VeriFastScore (claims and verdicts in one call per response)"),
        ]
    )
    label_mode = forms.ChoiceField(
        label="Verification labels",
        choices=[
            ("binary", "Binary (supported / unsupported)"),
            ("ternary", "Ternary (supported / contradicted / inconclusive)"),
        ],
    )
    reference = forms.ChoiceField(
        label="Reference mode",
        required=False,
        choices=[
            ("", "No: our default mode"),
            ("veriscore", "VeriScore as released (2.0.3): every request as its CLI makes it"),
            ("verifastscore", "VeriFastScore as released (0.1.5)"),
        ],
    )
    endpoint = forms.ChoiceField(help_text="An endpoint the operator configured.")
    model = forms.CharField(max_length=200, help_text="Model name at the endpoint.")
    retriever = forms.ChoiceField(
        choices=[("serper", "Serper (Google results)"), ("bm25", "BM25 over the local corpus")]
    )
    offline = forms.BooleanField(
        required=False, help_text="Answer from the pipeline's cache only; a miss fails the chunk."
    )
    chunk_size = forms.IntegerField(
        min_value=1,
        max_value=1000,
        initial=10,
        help_text="Documents per task; workers share a run chunk by chunk.",
    )
    fixed_k = forms.FloatField(
        label="Fixed K",
        required=False,
        min_value=1,
        max_value=MAX_FIXED_K,
        help_text="Empty: K per domain is the median claim count (VeriScore's upper median).",
    )
    batch = forms.BooleanField(
        label="Batch API",
        required=False,
        help_text="The provider's Batch API: half the price, answers within 24 hours. "
        "A chunk waiting on its batch shows as waiting, never as stalled.",
    )
    batch_poll = forms.FloatField(
        label="Batch poll (seconds)",
        required=False,
        min_value=1,
        max_value=3600,
        help_text="How often a worker asks the provider about its batch (default 10).",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["endpoint"].choices = endpoints.choices()  # type: ignore[attr-defined]
        self.fields["endpoint"].initial = endpoints.first()
        self.fields["model"].initial = endpoints.default_model()
        self.fields["reference"].help_text = format_html(
            "Requests and scores exactly as the released code (its templates, set up by the "
            "operator); the method must match. See the manual: {}.",
            manual.link("pipeline/reference-mode", "Reference mode"),
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("retriever") == "bm25" and not settings.PIPELINE_BM25_CORPUS:
            self.add_error(
                "retriever",
                "No local corpus is set up for BM25 (the operator's PIPELINE_BM25_CORPUS):"
                " choose Serper.",
            )
        if data.get("reference"):
            try:
                endpoints.pipeline_config(data)
            except (ValueError, KeyError) as e:
                self.add_error("reference", str(e))
        elif data.get("endpoint") and data.get("extractor") and data.get("label_mode"):
            try:  # an endpoint speaking another API than chat serves reference runs only
                endpoints.pipeline_config(data)
            except (ValueError, KeyError) as e:
                self.add_error("endpoint", str(e))
        if data.get("endpoint") and data.get("model"):
            try:
                endpoints.check(data["endpoint"], data["model"])
            except ValueError as e:
                self.add_error("model", str(e))
        # Only a batch run has batch options; a run without them keeps the defaults.
        if not data.get("batch"):
            data.pop("batch", None)
            data.pop("batch_poll", None)
        elif data.get("batch_poll") is None:
            data.pop("batch_poll", None)
        return data


class AdaptiveOverlapForm(forms.Form):
    """Adaptive overlap: start with `start` annotators per item, add one while they
    disagree on `field`, up to `up_to` (pages and API)."""

    field = forms.ChoiceField(choices=(), help_text="the field watched, kind.field")
    start = forms.IntegerField(min_value=2, max_value=10)
    up_to = forms.IntegerField(min_value=3, max_value=10)

    def __init__(self, data: Any = None, *, choices: list[tuple[str, str]]) -> None:
        """`choices`: the fields it may watch (`operations.adaptive_fields`)."""
        super().__init__(data)
        field: Any = self.fields["field"]
        field.choices = choices

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("start") and data.get("up_to") and data["start"] >= data["up_to"]:
            raise forms.ValidationError("Up to must be more than the start.")
        return data

    def save(self, project: Project) -> AdaptiveOverlap:
        kind, field = self.cleaned_data["field"].split(".", 1)
        policy, _ = AdaptiveOverlap.objects.update_or_create(
            project=project,
            defaults={
                "kind": kind,
                "field": field,
                "start": self.cleaned_data["start"],
                "up_to": self.cleaned_data["up_to"],
            },
        )
        return policy
