"""Planning the study (issue 30): units, comparisons and money the real study needs,
projected from the pilot (the project's answers so far) or from assumed values.

The figures come from `stats.planning`; this module reads the pilot: the count vectors
of each agreement field (as the agreement section reads them), the preference
judgements per domain, the median active time per item and the hiring policy's
training and check overhead.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, NamedTuple

from django import forms
from django.db.models import Q

from .. import hiring, kinds, stats
from ..gold import fetch
from ..models import AdaptiveOverlap, Assignment, Project
from ..stats import planning
from .agreement import field_units
from .preference import preference_rows
from .queries import ReportData, assignment_filter, member_names, report_data
from .tables import Cell, Filters, Section, Table

DEFAULT_RATERS = (2, 3, 4, 5)


@dataclass(frozen=True)
class PlanOptions:
    target: float = 0.1  # 95 % CI half-width wanted for each coefficient
    assurance: float = 0.9  # share of studies that must reach it
    share: float = 0.6  # preference share to detect against 0.5
    power: float = 0.8
    alpha: float = 0.05
    hourly_rate: float | None = None  # None: the project's rate (`pay_rates`)
    raters: tuple[int, ...] = DEFAULT_RATERS
    studies: int = 100  # simulated studies per candidate size
    bootstrap: int = 0  # per simulated study: 0 the jackknife, else bootstrap resamples
    seed: int = 0
    kappa: float | None = None  # assumed values, used where the pilot has no data
    shares: tuple[float, ...] | None = None
    seconds_per_item: float | None = None  # assumed active time; else the pilot's median
    field: str | None = None  # "kind.field" the assumed values are for (default: every
    # field without pilot answers that has as many categories as `shares`)


class PayRates(NamedTuple):
    hourly: float | None
    per_item: float  # paid per answer on top of the hours


def pay_rates(project: Project) -> PayRates:
    """The project's pay rates: the hiring policy's per-item pay (the payments export's
    bonus rate); the hourly rate is the researcher's (`--rate`, the API's `rate`)."""
    policy = hiring.HiringPolicy.objects.filter(project=project).first()
    return PayRates(hourly=None, per_item=float(policy.pay_per_item) if policy else 0.0)


def overhead(project: Project) -> tuple[float, int]:
    """(check rate, training items per annotator) from the hiring policy."""
    policy = hiring.HiringPolicy.objects.filter(project=project).first()
    training = hiring.QualityItem.objects.filter(
        item__project=project, role=hiring.TRAINING
    ).count()
    return (policy.check_rate if policy else 0.0), training


def median_seconds(data: ReportData) -> dict[str, float]:
    """kind -> median active seconds over submitted regular items (the pilot's)."""
    rows = Assignment.objects.filter(
        Q(item__project=data.project)
        & assignment_filter(data.filters)
        & hiring.regular()
        & Q(status=Assignment.SUBMITTED)
    ).values_list("item__kind", "active_seconds")
    per: dict[str, list[float]] = {}
    for kind, seconds in fetch(rows):
        per.setdefault(kind, []).append(seconds)
    return {kind: statistics.median(values) for kind, values in per.items()}


# --------------------------------------------------------------------------- section


def planning_section(data: ReportData) -> Section | None:
    """The report's section (on request: `build_report(plan=True)`): default targets and
    the report's seed; none with bootstrap 0, a report without intervals."""
    if not data.bootstrap:
        return None
    options = PlanOptions(seed=data.seed)
    return plan_section(data, options)


def plan_section(data: ReportData, options: PlanOptions) -> Section | None:
    rate = pay_rates(data.project)
    if options.hourly_rate is not None:
        rate = rate._replace(hourly=options.hourly_rate)
    check_rate, training = overhead(data.project)
    seconds = median_seconds(data)
    agreement, unplanned = _agreement_rows(data, options, seconds, rate, check_rate, training)
    preference = _preference_rows(data, options)
    if not agreement and not preference:
        return None
    tables = []
    if agreement:
        tables.append(
            Table(
                "planning-agreement",
                f"Units needed for a 95 % CI half-width of {options.target:g}",
                (
                    "task",
                    "unit",
                    "field",
                    "source",
                    "annotators per unit",
                    "pilot units",
                    "kappa used",
                    "units for Fleiss' kappa",
                    "units for Krippendorff's alpha",
                    "units for Gwet's AC1",
                    "units planned",
                    "items planned",
                    "answers incl. checks and training",
                    "median active s per item",
                    "annotator-hours",
                    "cost",
                ),
                tuple(agreement),
            )
        )
    if preference:
        tables.append(
            Table(
                "planning-preference",
                f"Comparisons needed to detect a preference of {options.share:g} vs 0.5",
                (
                    "system A",
                    "system B",
                    "domain",
                    "pilot judgements",
                    "pilot share preferring A",
                    f"needed for {options.share:g}",
                    "needed for the pilot share",
                    "still to collect",
                ),
                tuple(preference),
            )
        )
    rate_note = (
        f"Cost: annotator-hours x {rate.hourly:g} per hour"
        + (f" + {rate.per_item:g} per answer" if rate.per_item else "")
        + "."
        if rate.hourly is not None
        else "No hourly rate: give one (plan_study --rate, or the API's rate) for a cost."
    )
    analysed = (
        f"with {options.bootstrap} bootstrap resamples of its units (percentile interval)"
        if options.bootstrap
        else "by the jackknife of its units (1.96 standard errors; within a few per cent "
        "of the report's percentile bootstrap interval)"
    )
    notes: tuple[str, ...] = (
        f"A study of the planned size reaches the half-width in at least "
        f"{options.assurance:.0%} of {options.studies} simulated studies, each analysed "
        f"{analysed} (seed {options.seed}).",
        "Source 'pilot': the pilot's units resampled as they are. 'model': the "
        "common-correlation model (with probability kappa every annotator gives the same "
        "label, else each draws from the category shares) with the pilot's Fleiss' kappa "
        "and category shares; 'assumed': the same model with the values given. The model "
        "assumes interchangeable annotators whose agreement does not change with their number.",
        "Pilot units: units with two or more answers among the field's labels (one answer "
        "cannot agree; answers outside the labels are left out, as in the agreement section).",
        "Items planned: units planned / the pilot's units per item (fields on evidence, "
        "segments or facts have several per item; 1 without a pilot).",
        f"Answers: items x annotators, plus known-answer checks (check rate {check_rate:g} of "
        f"a queue) and {training} training items per annotator, from the hiring policy (as "
        "many annotators in all as per unit).",
        rate_note,
        f"Preference: two-sided one-sample test against 0.5 at alpha {options.alpha:g} with "
        f"power {options.power:g} (normal approximation on Cohen's h, statsmodels).",
    )
    if unplanned:
        notes += (
            "Not planned (no pilot answers and no assumed values with as many categories): "
            + ", ".join(unplanned)
            + ".",
        )
    return Section("planning", "Planning the study", notes, tuple(tables))


def _agreement_rows(
    data: ReportData,
    options: PlanOptions,
    seconds: dict[str, float],
    rate: PayRates,
    check_rate: float,
    training: int,
) -> tuple[list[tuple[Cell, ...]], list[str]]:
    by_field = field_units(data)
    out: list[tuple[Cell, ...]] = []
    unplanned: list[str] = []
    for spec in kinds.all_specs():
        per_item = options.seconds_per_item or seconds.get(spec.name)
        for agreement in spec.agreement:
            categories = spec.categorical(data.project)[agreement.field]
            units = by_field.get((spec.name, agreement.level, agreement.field), {})
            counts = [
                [sum(v == c for v in row.values()) for c in categories] for row in units.values()
            ]
            counts = [c for c in counts if sum(c) >= 2]
            # units of a sub-unit field (evidence, segment, fact) per item, in the pilot
            items = {str(u).split("/", 1)[0] for u in units}
            per_item_units = len(units) / len(items) if items else 1.0
            plans: list[tuple[str, int, float | None, planning.UnitModel]] = []
            if counts:
                current = Counter(sum(c) for c in counts).most_common(1)[0][0]
                pilot = planning.UnitModel.observed(counts)
                kappa = float(stats.nominal_coefficients(pilot.patterns, pilot.probs)["fleiss"][0])
                plans.append(("pilot", current, kappa if math.isfinite(kappa) else None, pilot))
                shares: tuple[float, ...] = tuple(planning.category_shares(counts))
                source = "model"
            elif _assumed_for(options, spec.name, agreement.field, categories):
                assert options.kappa is not None and options.shares is not None
                kappa, shares, source = options.kappa, options.shares, "assumed"
            else:
                unplanned.append(f"{spec.name}.{agreement.field}")
                continue
            model_kappa = min(max(kappa, 0.0), 0.99) if math.isfinite(kappa) else 0.0
            for m in options.raters:
                model = planning.UnitModel.common_correlation(model_kappa, shares, m)
                plans.append((source, m, model_kappa, model))
            for source_, m, kappa_used, model in plans:
                needed = planning.units_needed(
                    model,
                    options.target,
                    assurance=options.assurance,
                    studies=options.studies,
                    bootstrap=options.bootstrap,
                    seed=options.seed,
                )
                found = [n.units for n in needed.values()]
                planned = None if None in found else max(u for u in found if u is not None)
                n_items = None if planned is None else math.ceil(planned / per_item_units)
                cost: planning.Budget | None = None
                if n_items is not None and per_item is not None:
                    cost = planning.budget(
                        n_items,
                        m,
                        seconds_per_item=per_item,
                        hourly_rate=rate.hourly,
                        check_rate=check_rate,
                        training_items=training,
                        per_item_rate=rate.per_item,
                    )
                out.append(
                    (
                        spec.name,
                        agreement.level,
                        agreement.field,
                        source_,
                        m,
                        len(counts),
                        kappa_used,
                        *(needed[k].units for k in planning.COEFFICIENTS),
                        planned,
                        n_items,
                        None
                        if cost is None
                        else cost.answers + cost.check_answers + cost.training_answers,
                        per_item,
                        None if cost is None else cost.hours,
                        None if cost is None else cost.cost,
                    )
                )
    return out, unplanned


def _assumed_for(options: PlanOptions, kind: str, field: str, categories: list[str]) -> bool:
    """Whether the assumed values plan this field (one without pilot answers)."""
    if options.kappa is None or options.shares is None:
        return False
    if options.field not in (None, f"{kind}.{field}"):
        return False
    if len(options.shares) == len(categories):
        return True
    if options.field is None:
        return False
    raise ValueError(
        f"{kind}.{field} has {len(categories)} categories ({', '.join(categories)}); "
        f"{len(options.shares)} shares were given"
    )


def _preference_rows(data: ReportData, options: PlanOptions) -> list[tuple[Cell, ...]]:
    out: list[tuple[Cell, ...]] = []
    needed = planning.preference_comparisons(
        options.share, 0.5, alpha=options.alpha, power=options.power
    )
    for spec in kinds.all_specs():
        if "preference" not in spec.report_sections:
            continue
        rows, _, _ = preference_rows(data.project, spec, data.rows_of.get(spec.name, []))
        if not rows:
            continue
        for cell in stats.preference(rows).cells:
            if cell.domain is None:
                continue
            observed = (
                planning.preference_comparisons(
                    cell.a_rate, 0.5, alpha=options.alpha, power=options.power
                )
                if 0 < cell.a_rate < 1 and cell.a_rate != 0.5
                else None
            )
            out.append(
                (
                    cell.system_a,
                    cell.system_b,
                    cell.domain,
                    cell.n,
                    cell.a_rate,
                    needed,
                    observed,
                    max(0, needed - cell.n),
                )
            )
    return out


def plan_project(project: Project, options: PlanOptions) -> Section | None:
    """The planning section of a whole project (every annotator, domain and date)."""
    names = member_names(project, real_names=False)
    data = report_data(
        project,
        filters=Filters(),
        names=names,
        bootstrap=options.bootstrap,
        seed=options.seed,
        k_rule="upper",
        with_charts=False,
    )
    return plan_section(data, options)


# --------------------------------------------------------------------------- options


class PlanOptionsForm(forms.Form):
    """The planning options the command and the API take, with their limits."""

    target = forms.FloatField(
        min_value=0.01, max_value=0.5, required=False, help_text="95 % CI half-width (0.1)"
    )
    assurance = forms.FloatField(
        min_value=0.5, max_value=0.99, required=False, help_text="share of studies (0.9)"
    )
    share = forms.FloatField(
        min_value=0.01, max_value=0.99, required=False, help_text="preference share (0.6)"
    )
    power = forms.FloatField(min_value=0.5, max_value=0.99, required=False, help_text="(0.8)")
    alpha = forms.FloatField(min_value=0.001, max_value=0.2, required=False, help_text="(0.05)")
    rate = forms.FloatField(min_value=0, max_value=10_000, required=False, help_text="hourly rate")
    kappa = forms.FloatField(
        min_value=0, max_value=0.99, required=False, help_text="assumed Fleiss' kappa"
    )
    shares = forms.CharField(
        max_length=200, required=False, help_text="assumed category shares: 0.3,0.7"
    )
    seconds = forms.FloatField(
        min_value=1, max_value=86_400, required=False, help_text="active seconds per item"
    )
    studies = forms.IntegerField(
        min_value=20, max_value=300, required=False, help_text="simulated studies (100)"
    )
    bootstrap = forms.IntegerField(
        min_value=0,
        max_value=300,
        required=False,
        help_text="resamples per study, for the report's percentile interval (0: the jackknife)",
    )
    seed = forms.IntegerField(min_value=0, max_value=2**32 - 1, required=False)
    field = forms.CharField(
        max_length=100, required=False, help_text="kind.field the assumed values are for"
    )

    def clean_share(self) -> float | None:
        share = self.cleaned_data.get("share")
        if share == 0.5:
            raise forms.ValidationError("The share to detect must differ from 0.5.")
        return share

    def clean_shares(self) -> tuple[float, ...] | None:
        text = (self.cleaned_data.get("shares") or "").strip()
        if not text:
            return None
        try:
            values = tuple(float(v) for v in text.split(","))
        except ValueError:
            raise forms.ValidationError(
                f"Shares are numbers separated by commas, got {text!r}."
            ) from None
        if not all(math.isfinite(v) for v in values):
            raise forms.ValidationError(f"Shares are finite numbers, got {text!r}.")
        if len(values) < 2 or min(values) <= 0 or abs(sum(values) - 1) > 1e-6:
            raise forms.ValidationError(
                f"Shares are 2 or more positive numbers summing to 1, got {text!r}."
            )
        return values

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("field") == "":
            data["field"] = None
        if (data.get("kappa") is None) != (data.get("shares") is None):
            raise forms.ValidationError("Assumed values need both kappa and shares.")
        return data

    def options(self) -> PlanOptions:
        data = {k: v for k, v in self.cleaned_data.items() if v is not None}
        renamed = {"rate": "hourly_rate", "seconds": "seconds_per_item"}
        return PlanOptions(**{renamed.get(k, k): v for k, v in data.items()})

    def problems(self) -> str:
        return "; ".join(
            f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in self.errors.items()
        )


# --------------------------------------------------------------------------- adaptive overlap


def adaptive_overlap_section(data: ReportData) -> Section | None:
    """What the project's adaptive overlap did: the items it escalated, the answers and
    annotator-hours it used against fixed overlap m, and Fleiss' kappa on the first k
    answers of every item (every item has k of them, so kappa is unbiased by which items
    got more; alpha and AC1 on all answers are in the agreement section)."""
    policy = AdaptiveOverlap.objects.filter(project=data.project).first()
    if policy is None:
        return None
    rows = fetch(
        Assignment.objects.filter(
            Q(item__project=data.project, item__kind=policy.kind) & hiring.regular()
        )
        .order_by("pk")
        .values_list("item_id", "annotator_id", "status")
    )
    per_item: dict[int, list[tuple[int, str]]] = {}
    for item, annotator, status in rows:
        per_item.setdefault(item, []).append((annotator, status))
    under = {i: a for i, a in per_item.items() if len(a) >= policy.start}
    if not under:
        return None
    escalated = sorted(i for i, a in under.items() if len(a) > policy.start)
    answers = sum(1 for a in under.values() for _, status in a if status == Assignment.SUBMITTED)
    fixed = len(under) * policy.up_to
    seconds = median_seconds(data).get(policy.kind)
    saved = None if seconds is None else (fixed - answers) * seconds / 3600

    # Fleiss' kappa on the first k answers of each unit of the items (in the order the
    # item was assigned): the item itself, or each of its evidence, segments or facts
    first: dict[Hashable, tuple[str | None, ...]] = {}
    for (item, unit, field), values in data.grouped.items():
        if field != policy.field or item not in under:
            continue
        labels = tuple(values.get(annotator) for annotator, _ in under[item][: policy.start])
        if None not in labels:
            first[(item, unit)] = labels
    kappa: stats.Coefficient | None = None
    if first:
        ratings = stats.Ratings(
            units=tuple(first),
            raters=tuple(f"answer {n + 1}" for n in range(policy.start)),
            labels=tuple(first.values()),
        )
        categories = kinds.get(policy.kind).categorical(data.project)[policy.field]
        kappa = stats.agreement(
            ratings, categories=categories, bootstrap=data.bootstrap, seed=data.seed
        ).fleiss_kappa
    summary = Table(
        "adaptive-overlap",
        "Adaptive overlap",
        (
            "task",
            "field",
            "start k",
            "up to m",
            "items",
            "items escalated",
            "answers",
            "answers at fixed m",
            "annotator-hours saved",
            "units with k answers",
            "Fleiss' kappa, first k answers",
            "kappa CI low",
            "kappa CI high",
        ),
        (
            (
                policy.kind,
                policy.field,
                policy.start,
                policy.up_to,
                len(under),
                len(escalated),
                answers,
                fixed,
                saved,
                len(first),
                None if kappa is None else kappa.value,
                None if kappa is None else kappa.ci_low,
                None if kappa is None else kappa.ci_high,
            ),
        ),
    )
    items = Table(
        "adaptive-overlap-items",
        "Items given more than k annotators",
        ("item", "annotators"),
        tuple((i, len(under[i])) for i in escalated),
    )
    notes = (
        f"Items of the {policy.kind} kind given {policy.start} annotators get one more while "
        f"their answers to {policy.field} disagree, up to {policy.up_to}. Items given fewer "
        "(outside the overlap fraction) are not counted.",
        "Answers at fixed m: every item answered by m annotators. Hours saved: the "
        "difference at the median active time per item.",
        "Fleiss' kappa here uses the first k answers of every item, so the items that got "
        "more (those that disagreed) do not weigh more; the agreement section's figures "
        "use every answer.",
        "Items, answers and hours are the whole project's (the report's filters do not "
        "apply to them); the kappa uses the filtered answers.",
    )
    return Section("adaptive-overlap", "Adaptive overlap", notes, (summary, items))
