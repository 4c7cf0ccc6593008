"""What a report is built with (`ReportOptions`) and the one form that reads it for the
report pages, the API and `agreement_report`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms

from .. import gold as gold_rules
from ..models import Project
from .queries import annotator_choices, domains_of
from .tables import Filters

MAX_BOOTSTRAP = 10_000  # resamples; more would tie up a web worker for minutes
DEFAULT_BOOTSTRAP = 1000
MAX_SEED = 2**32 - 1  # numpy's seeds are 32-bit unsigned


@dataclass(frozen=True)
class ReportOptions:
    """What a report is built with: which answers (`filters`), usernames or pseudonyms,
    the bootstrap's resamples and seed, K's rule, charts, whether and how to plan the study
    (`plan_method`: simulation or kappaSize's closed form), the gold method and whether to
    compare the headline figures across gold methods. `build_report` and the report cache
    take it whole; its repr is the cache key's options part."""

    filters: Filters = Filters()
    real_names: bool = False
    bootstrap: int = DEFAULT_BOOTSTRAP
    seed: int = 0
    k_rule: str = "upper"
    with_charts: bool = True
    plan: bool = False
    plan_method: str = "simulation"
    gold: str | None = None  # the gold method (gold.METHODS); None: the project's
    sensitivity: bool = False  # compare the headline figures across gold methods


class ReportOptionsForm(forms.Form):
    annotators = forms.TypedMultipleChoiceField(
        coerce=int, required=False, widget=forms.CheckboxSelectMultiple
    )
    domains = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    names = forms.BooleanField(required=False, label="Show usernames")
    bootstrap = forms.IntegerField(
        required=False, min_value=0, max_value=MAX_BOOTSTRAP, label="Bootstrap resamples"
    )
    seed = forms.IntegerField(required=False, min_value=0, max_value=MAX_SEED)
    plan = forms.BooleanField(required=False, label="Plan the study (slower)")
    plan_method = forms.ChoiceField(
        choices=[
            ("simulation", "simulation (all three coefficients, with assurance)"),
            ("kappasize", "kappaSize (Rotondi & Donner, Fleiss' kappa)"),
        ],
        required=False,
        label="Planning method",
    )
    sensitivity = forms.BooleanField(
        required=False, label="Compare the gold methods (fits every annotator model)"
    )
    gold = forms.ChoiceField(
        choices=[("", "the project's")]
        + [(m, gold_rules.METHOD_TITLES[m]) for m in gold_rules.METHODS],
        required=False,
        label="Gold method",
        error_messages={
            "invalid_choice": "Unknown gold method %(value)s; one of "
            + ", ".join(gold_rules.METHODS)
            + "."
        },
    )

    def __init__(self, data: Any = None, *, project: Project) -> None:
        super().__init__(data)
        real_names = (data or {}).get("names") in (True, "1", "on", "true")
        annotators: Any = self.fields["annotators"]
        annotators.choices = annotator_choices(project, real_names=real_names)
        domains: Any = self.fields["domains"]
        domains.choices = [(d, d or "(no domain)") for d in domains_of(project)]

    def options(self) -> ReportOptions:
        """`build_report`'s options (a valid form; defaults for an unbound one)."""
        data = self.cleaned_data if self.is_bound else {}
        bootstrap, seed = data.get("bootstrap"), data.get("seed")
        return ReportOptions(
            filters=Filters(
                annotators=tuple(data.get("annotators") or ()),
                domains=tuple(data.get("domains") or ()),
                date_from=data.get("date_from"),
                date_to=data.get("date_to"),
            ),
            real_names=bool(data.get("names")),
            bootstrap=DEFAULT_BOOTSTRAP if bootstrap is None else bootstrap,
            seed=0 if seed is None else seed,
            plan=bool(data.get("plan")),
            plan_method=data.get("plan_method") or "simulation",
            gold=data.get("gold") or None,
            sensitivity=bool(data.get("sensitivity")),
        )

    def problems(self) -> str:
        """The errors in one line, for the command line."""
        return "; ".join(
            f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in self.errors.items()
        )
