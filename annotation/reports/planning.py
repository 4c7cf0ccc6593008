"""Planning the study: units, comparisons and money the real study needs, projected from
the pilot (the project's answers so far) or from assumed values; and what adaptive
overlap did (docs/researchers/planning.md).

The figures come from `stats.planning`; this module reads the pilot: the count vectors
of each agreement field (as the agreement section reads them), the preference
judgements per domain, the median active time per item and the hiring policy's
training and check overhead.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Container, Hashable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from django import forms
from django.db.models import Q

from .. import hiring, kinds, stats
from ..answers import FieldCodes, fetch
from ..models import AdaptiveOverlap, Answer, Assignment, OverlapWait, Project
from ..stats import planning
from .agreement import field_codes
from .preference import preference_rows
from .queries import ReportData, assignment_filter, member_names, report_data
from .tables import Cell, Filters, Section, Table

Row = dict[str, Cell]  # a table's row by column: the table's columns are its rows' keys


@dataclass(frozen=True)
class PlanOptions:
    target: float = 0.1  # 95 % CI half-width wanted for each coefficient
    assurance: float = 0.9  # share of studies that must reach it
    share: float = 0.6  # preference share to detect against 0.5
    power: float = 0.8
    alpha: float = 0.05
    hourly_rate: float | None = None  # the researcher's (`--rate`, the API's `rate`); None: no cost
    raters: tuple[int, ...] = (2, 3, 4, 5)
    studies: int = 100  # simulated studies per candidate size
    bootstrap: int = 0  # per simulated study: 0 the jackknife, else bootstrap resamples
    seed: int = 0
    kappa: float | None = None  # assumed values, used where the pilot has no data
    shares: tuple[float, ...] | None = None
    seconds_per_item: float | None = None  # assumed active time; else the pilot's median
    field: str | None = None  # "kind.field" the assumed values are for (default: every
    # field without pilot answers that has as many categories as `shares`)
    # "simulation" (the default: the report's interval, all three coefficients, with
    # assurance) or "kappasize" (Rotondi & Donner's closed form, exactly as the R package)
    method: str = "simulation"
    family: str = "ci"  # kappaSize: "ci" (CI...), "power" (Power...), "fixedn" (FixedN...)
    kappa1: float | None = None  # the power family's alternative kappa
    n: int | None = None  # the fixed-n family's subjects
    sided: int | None = None  # None: kappaSize's (ci 2, power 2, fixedn 1)
    # a pilot of fewer units is flagged (its own interval says little)
    min_pilot_units: int = 10


class _Pay(NamedTuple):
    """What the budget columns read besides the options."""

    hourly: float | None  # PlanOptions.hourly_rate
    per_answer: float  # the hiring policy's pay per item (the payments export's bonus rate)
    check_rate: float  # the hiring policy's share of checks in a queue
    training: int  # training items per annotator
    seconds: dict[str, float]  # kind -> the pilot's median active seconds per item


def _pay(data: ReportData, hourly: float | None) -> _Pay:
    policy = hiring.HiringPolicy.objects.filter(project=data.project).first()
    training = hiring.QualityItem.objects.filter(
        item__project=data.project, role=hiring.TRAINING
    ).count()
    pay, checks = (float(policy.pay_per_item), policy.check_rate) if policy else (0.0, 0.0)
    return _Pay(hourly, pay, checks, training, median_seconds(data))


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


def planning_section(data: ReportData, method: str = "simulation") -> Section | None:
    """The report's section (on request: `build_report(plan=True)`): default targets and
    the report's seed, by `method` (simulation or kappasize: kappaSize's CI family); none
    with bootstrap 0, a report without intervals."""
    if not data.bootstrap:
        return None
    options = PlanOptions(seed=data.seed, method=method)
    return plan_section(data, options)


def plan_section(data: ReportData, options: PlanOptions) -> Section | None:
    pay = _pay(data, options.hourly_rate)
    if options.method == "kappasize":
        return _kappasize_section(data, options, pay)
    agreement, unplanned, degenerate = _agreement_rows(data, options, pay)
    preference = _preference_rows(data, options)
    if not agreement and not preference:
        return None
    tables = []
    if agreement:
        title = f"Units needed for a 95 % CI half-width of {options.target:g}"
        tables.append(_table("planning-agreement", title, agreement))
    if preference:
        title = f"Comparisons needed to detect a preference of {options.share:g} vs 0.5"
        tables.append(_table("planning-preference", title, preference))
    notes = _plan_notes(options, pay, unplanned, degenerate)
    return Section("planning", "Planning the study", notes, tuple(tables))


def _table(name: str, title: str, rows: list[Row]) -> Table:
    """A table of rows built alike (the same columns in the same order)."""
    return Table(name, title, tuple(rows[0]), tuple(tuple(row.values()) for row in rows))


def _plan_notes(
    options: PlanOptions, pay: _Pay, unplanned: list[str], degenerate: list[str]
) -> tuple[str, ...]:
    """How the plan was made: the simulation, its sources, the answers and the cost."""
    rate_note = (
        f"Cost: annotator-hours x {pay.hourly:g} per hour"
        + (f" + {pay.per_answer:g} per answer" if pay.per_answer else "")
        + "."
        if pay.hourly is not None
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
        f"Answers: items x annotators, plus known-answer checks (check rate {pay.check_rate:g} of "
        f"a queue) and {pay.training} training items per annotator, from the hiring policy (as "
        "many annotators in all as per unit).",
        rate_note,
        f"Preference: two-sided one-sample test against 0.5 at alpha {options.alpha:g} with "
        f"power {options.power:g} (normal approximation on Cohen's h, statsmodels).",
    )
    notes += _unplanned(unplanned)
    if degenerate:
        notes += (
            "Pilots not resampled as they are (the 'model' rows use the pilot's kappa, at "
            "least 0, and shares; collect more pilot units): " + "; ".join(degenerate) + ".",
        )
    return notes


def _unplanned(fields: list[str]) -> tuple[str, ...]:
    """The note naming the fields not planned, if any."""
    if not fields:
        return ()
    return (
        "Not planned (no pilot answers and no assumed values with as many categories): "
        + ", ".join(fields)
        + ".",
    )


def _agreement_rows(
    data: ReportData, options: PlanOptions, pay: _Pay
) -> tuple[list[Row], list[str], list[str]]:
    """The rows, the fields not planned, and the pilots not resampled as they are (why)."""
    pilots, unplanned = _pilots(data, options)
    degenerate: list[str] = []
    small: list[str] = []
    out: list[Row] = []
    for pilot in pilots:
        kappa = pilot.kappa
        plans: list[tuple[str, int, float, planning.UnitModel]] = []
        source = pilot.source
        if pilot.model is not None:
            why = _degenerate(pilot)  # '' only with a finite kappa
            if why:
                degenerate.append(f"{pilot.kind}.{pilot.field} ({why})")
            else:
                plans.append(("pilot", pilot.current, kappa, pilot.model))
                if pilot.units < options.min_pilot_units:
                    small.append(f"{pilot.kind}.{pilot.field} ({pilot.units} units)")
            source = "model"
        model_kappa = min(max(kappa, 0.0), 0.99) if math.isfinite(kappa) else 0.0
        for m in options.raters:
            model = planning.UnitModel.common_correlation(model_kappa, pilot.shares, m)
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
            out.append(
                {
                    **_head(pilot, source_, m),
                    "kappa used": kappa_used,
                    **{
                        f"units for {name}": needed[k].units
                        for k, name in planning.COEFFICIENTS.items()
                    },
                    "units planned": planned,
                    **_budget(planned, pilot, m, options, pay),
                }
            )
    if small:  # planned, flagged
        degenerate.append(
            f"small pilots, their rows to read with care (fewer than {options.min_pilot_units}"
            f" units): {', '.join(small)}"
        )
    return out, unplanned, degenerate


def _degenerate(pilot: _Pilot) -> str:
    """Why the pilot's units, resampled as they are, cannot plan ('' when they can): units
    all alike (every resample the same: an interval of zero width), or no kappa."""
    if pilot.model is not None and len(pilot.model.patterns) < 2:
        return f"its {pilot.units} units all have the same answers: an interval of zero width"
    if not math.isfinite(pilot.kappa):
        return "the pilot's kappa is undefined"
    return ""


def _head(pilot: _Pilot, source: str, raters: int) -> Row:
    """A planning row's first cells."""
    return {
        "task": pilot.kind,
        "unit": pilot.level,
        "field": pilot.field,
        "source": source,
        "annotators per unit": raters,
        "pilot units": pilot.units,
    }


def _budget(
    planned: int | None, pilot: _Pilot, raters: int, options: PlanOptions, pay: _Pay
) -> Row:
    """Items, answers (incl. checks and training), active time, hours and cost of the
    units planned; None without units planned or an active time."""
    seconds = options.seconds_per_item or pay.seconds.get(pilot.kind)
    items = None if planned is None else math.ceil(planned / pilot.per_item_units)
    answers = hours = cost = None
    if items is not None and seconds is not None:
        budget = planning.budget(
            items,
            raters,
            seconds_per_item=seconds,
            hourly_rate=pay.hourly,
            check_rate=pay.check_rate,
            training_items=pay.training,
            per_item_rate=pay.per_answer,
        )
        answers = budget.answers + budget.check_answers + budget.training_answers
        hours, cost = budget.hours, budget.cost
    return {
        "items planned": items,
        "answers incl. checks and training": answers,
        "median active s per item": seconds,
        "annotator-hours": hours,
        "cost": cost,
    }


KAPPASIZE_TABLES = {  # family -> its table's title and its own columns
    "ci": ("Units needed (kappaSize CI...)", ("kappaL", "kappaU", "units (n)")),
    "power": ("Units needed (kappaSize Power...)", ("kappa1", "power", "units (n)", "kappaSize N")),
    "fixedn": (
        "Expected lower limit for a fixed n (kappaSize FixedN...)",
        ("n", "expected kappaL", "exact kappaL"),
    ),
}


class _Pilot(NamedTuple):
    kind: str
    level: str
    field: str
    source: str
    raters: tuple[int, ...]
    units: int
    kappa: float
    shares: tuple[float, ...]
    per_item_units: float
    current: int  # the pilot's most common annotators per unit (0 without a pilot)
    model: planning.UnitModel | None  # the pilot's units as they are (None: assumed)


def _pilot_counts(codes: FieldCodes | None, categories: list[str]) -> tuple[list[list[int]], float]:
    """Per unit of the pilot with two answers or more, how many chose each category; and
    the units per item (a sub-unit field: evidence, segments, facts)."""
    if codes is None or not len(codes.units):
        return [], 1.0
    # each distinct row's count per category, laid out per unit
    of_row = [
        [sum(codes.values[v] == c for v in row if v >= 0) for c in categories]
        for row in codes.distinct.tolist()
    ]
    counts = [of_row[r] for r in codes.row_of.tolist() if sum(of_row[r]) >= 2]
    return counts, len(codes.units) / len(np.unique(codes.items))


def _pilots(data: ReportData, options: PlanOptions) -> tuple[list[_Pilot], list[str]]:
    """Per agreement field: the pilot's Fleiss' kappa and category shares (or the assumed
    values), with the annotators per unit to plan for."""
    out: list[_Pilot] = []
    unplanned: list[str] = []
    for spec in kinds.all_specs():
        for agreement in spec.agreement:
            categories = spec.categorical(data.project)[agreement.field]
            codes = field_codes(data, spec.name, agreement.level, agreement.field)
            counts, per_item_units = _pilot_counts(codes, categories)
            model: planning.UnitModel | None = None
            current = 0
            if counts:
                current = Counter(sum(c) for c in counts).most_common(1)[0][0]
                model = planning.UnitModel.observed(counts)
                kappa = float(stats.nominal_coefficients(model.patterns, model.probs)["fleiss"][0])
                shares = tuple(planning.category_shares(counts))
                raters = tuple(sorted({current, *options.raters}))
                source = "pilot"
            elif _assumed_for(options, spec.name, agreement.field, categories):
                assert options.kappa is not None and options.shares is not None
                kappa, shares, source = options.kappa, options.shares, "assumed"
                raters = options.raters
            else:
                unplanned.append(f"{spec.name}.{agreement.field}")
                continue
            out.append(
                _Pilot(
                    spec.name,
                    agreement.level,
                    agreement.field,
                    source,
                    raters,
                    len(counts),
                    kappa,
                    shares,
                    per_item_units,
                    current,
                    model,
                )
            )
    return out, unplanned


def kappasize_call(options: PlanOptions, pilot: _Pilot, raters: int, sided: int) -> str:
    """The R call of kappaSize that gives the same figure, for a paper's methods section."""
    kappa0, shares = pilot.kappa, pilot.shares
    props = "c(" + ", ".join(f"{s:.4g}" for s in shares) + ")"
    name = planning.kappasize_name(options.family, len(shares))
    k0 = f"kappa0={kappa0:.4g}"
    tail = f"props={props}, raters={raters}, alpha={options.alpha:g}"
    if options.family == "ci":
        high = f"{kappa0 + options.target:.4g}" if sided == 2 else "NA"
        return f"{name}({k0}, kappaL={kappa0 - options.target:.4g}, kappaU={high}, {tail})"
    if options.family == "power":
        return f"{name}({k0}, kappa1={options.kappa1:g}, {tail}, power={options.power:g})"
    return f"{name}({k0}, n={options.n}, {tail})"


def _kappasize_figures(
    options: PlanOptions, pilot: _Pilot, raters: int, sided: int
) -> tuple[tuple[Cell, ...], int | None]:
    """The family's own columns (KAPPASIZE_TABLES) and the units it plans (None: fixed n)."""
    kappa0, shares, alpha = pilot.kappa, pilot.shares, options.alpha
    if options.family == "ci":
        low, high = kappa0 - options.target, kappa0 + options.target if sided == 2 else None
        n = planning.kappasize_ci(kappa0, low, high, shares, raters, alpha)
        return (low, high, n), n
    if options.family == "power":
        assert options.kappa1 is not None
        power = planning.kappasize_power(
            kappa0, options.kappa1, shares, raters, alpha, options.power, sided
        )
        return (options.kappa1, options.power, power.n, power.n_exact), power.n
    assert options.n is not None
    fixed = planning.kappasize_fixed_n(kappa0, options.n, shares, raters, alpha, sided)
    return (options.n, fixed.kappa_low, fixed.kappa_low_exact), None


def _kappasize_section(data: ReportData, options: PlanOptions, pay: _Pay) -> Section | None:
    family = options.family
    sided = options.sided or (1 if family == "fixedn" else 2)
    pilots, unplanned = _pilots(data, options)
    rows = _kappasize_rows(pilots, options, sided, pay)
    if not rows:
        return None
    sides = "two" if sided == 2 else "one"
    what = {
        "ci": f"the expected {sides}-sided {1 - options.alpha:.0%} "
        f"interval of kappa0 -/+ {options.target:g}",
        "power": f"power {options.power:g} to tell kappa1 = {options.kappa1} from kappa0 at "
        f"alpha {options.alpha:g} ({sides}-sided)",
        "fixedn": f"the expected lower limit of a {sides}-sided "
        f"{1 - options.alpha:.0%} interval from n = {options.n} units",
    }[family]
    notes = (
        f"kappaSize (Rotondi & Donner 2012; Donner & Eliasziw 1992), exactly as the R package "
        f"computes it: {what}. The 'kappaSize call' column is the R call that gives the same "
        "figure.",
        "kappa0 is the pilot's Fleiss' kappa and the shares its category shares (or the "
        "values assumed); the model is Rotondi & Donner's common correlation: interchangeable "
        "annotators, Fleiss' kappa only, and an expected interval (about half of real "
        "studies reach it), where the simulation method plans all three coefficients with "
        "assurance. kappaSize covers 2 to 5 categories and 2 to 6 annotators.",
        *_unplanned(unplanned),
    )
    table = _table(f"planning-kappasize-{family}", KAPPASIZE_TABLES[family][0], rows)
    return Section("planning", "Planning the study", notes, (table,))


def _kappasize_rows(pilots: list[_Pilot], options: PlanOptions, sided: int, pay: _Pay) -> list[Row]:
    """A row per pilot and number of annotators: kappaSize's figures, items and cost."""
    columns = KAPPASIZE_TABLES[options.family][1]
    rows: list[Row] = []
    for pilot in pilots:
        for m in pilot.raters:
            problem = None
            figures: tuple[Cell, ...] = (None,) * len(columns)
            planned = None
            call = None
            try:
                call = kappasize_call(options, pilot, m, sided)
                figures, planned = _kappasize_figures(options, pilot, m, sided)
            except ValueError as error:
                problem = str(error)
            row = {
                **_head(pilot, pilot.source, m),
                "kappa0": pilot.kappa,
                "category shares": ", ".join(f"{s:.4g}" for s in pilot.shares),
                "kappaSize call": call,
                **dict(zip(columns, figures, strict=True)),
                **_budget(planned, pilot, m, options, pay),
                "not planned because": problem,
            }
            del row["median active s per item"]  # not in kappaSize's table
            rows.append(row)
    return rows


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


def _preference_rows(data: ReportData, options: PlanOptions) -> list[Row]:
    out: list[Row] = []
    needed = planning.preference_comparisons(
        options.share, 0.5, alpha=options.alpha, power=options.power
    )
    for spec in kinds.all_specs():
        if "preference" not in spec.report_sections:
            continue
        rows, _, _ = preference_rows(data.project, spec, data.answers)
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
                {
                    "system A": cell.system_a,
                    "system B": cell.system_b,
                    "domain": cell.domain,
                    "pilot judgements": cell.n,
                    "pilot share preferring A": cell.a_rate,
                    f"needed for {options.share:g}": needed,
                    "needed for the pilot share": observed,
                    "still to collect": max(0, needed - cell.n),
                }
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
    method = forms.ChoiceField(
        choices=[("simulation", "simulation"), ("kappasize", "kappasize")],
        required=False,
        help_text="simulation (default) or kappasize (Rotondi & Donner, as the R package)",
    )
    family = forms.ChoiceField(
        choices=[(f, f) for f in planning.KAPPASIZE_FAMILIES],
        required=False,
        help_text="kappasize: ci (default), power or fixedn",
    )
    kappa1 = forms.FloatField(
        min_value=0.01, max_value=0.99, required=False, help_text="kappasize power: kappa1"
    )
    n = forms.IntegerField(
        min_value=11, max_value=10_000_000, required=False, help_text="kappasize fixedn: units"
    )
    sided = forms.TypedChoiceField(
        choices=[("1", "1"), ("2", "2")],
        coerce=int,
        required=False,
        empty_value=None,
        help_text="1 or 2 (default: kappaSize's; ci 2, power 2, fixedn 1)",
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
        for key in ("field", "method", "family"):
            if data.get(key) == "":
                data[key] = None
        if (data.get("kappa") is None) != (data.get("shares") is None):
            raise forms.ValidationError("Assumed values need both kappa and shares.")
        kappasize = data.get("method") == "kappasize"
        if not kappasize and any(
            data.get(k) is not None for k in ("family", "kappa1", "n", "sided")
        ):
            raise forms.ValidationError(
                "family, kappa1, n and sided are options of method=kappasize."
            )
        if kappasize and data.get("family") == "power" and data.get("kappa1") is None:
            raise forms.ValidationError("The power family needs kappa1 (the kappa to detect).")
        if kappasize and data.get("family") == "fixedn" and data.get("n") is None:
            raise forms.ValidationError("The fixedn family needs n (the units available).")
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


def _finished_items(policy: AdaptiveOverlap, under: dict[int, list[tuple[int, str]]]) -> list[int]:
    """Items of the policy whose answers are all in and get no more: m of them, or k or
    more that agree by the kind's rule (operations.widen_overlap's test)."""
    done = [i for i, a in under.items() if all(s == Assignment.SUBMITTED for _, s in a)]
    spec = kinds.get(policy.kind)
    answers: dict[int, dict[int, dict[tuple[str, str], str]]] = {i: {} for i in done}
    for item, assignment, swapped, unit, field, value in fetch(
        Answer.objects.filter(assignment__item__in=done).values_list(
            "assignment__item_id", "assignment_id", "assignment__swapped", "unit", "field", "value"
        )
    ):
        comparable = spec.comparable(field, value, bool(swapped))
        answers[item].setdefault(assignment, {})[(unit, field)] = comparable
    return sorted(
        i
        for i in done
        if len(under[i]) >= policy.up_to
        or not spec.disagrees(policy.field, list(answers[i].values()))
    )


def _first_answers(
    data: ReportData,
    policy: AdaptiveOverlap,
    under: dict[int, list[tuple[int, str]]],
    categories: Container[str],
) -> tuple[dict[Hashable, tuple[str | None, ...]], int]:
    """(item, unit) -> the first k answers of each unit of the items (in the order the
    item was assigned): the item itself, or each of its evidence, segments or facts;
    the units with k answers among the field's labels (`categories`), in (item, unit)
    order; and how many answers outside them the units with k answers had (those units
    left out, as the agreement section leaves such answers out)."""
    first: dict[Hashable, tuple[str | None, ...]] = {}
    outside = 0
    for codes in data.answers.of_kind(policy.kind):
        if codes.field != policy.field:
            continue
        column = {a: j for j, a in enumerate(codes.annotators.tolist())}
        for item, unit, row in zip(
            codes.items.tolist(), codes.units, codes.codes.tolist(), strict=True
        ):
            if item not in under:
                continue
            at = [column.get(annotator) for annotator, _ in under[item][: policy.start]]
            labels = tuple(None if j is None or row[j] < 0 else codes.values[row[j]] for j in at)
            if None in labels:
                continue  # not k answers
            unknown = sum(label not in categories for label in labels)
            outside += unknown
            if not unknown:
                first[(item, unit)] = labels
    return dict(sorted(first.items())), outside  # whatever the levels


def _assigned(data: ReportData, policy: AdaptiveOverlap) -> dict[int, list[tuple[int, str]]]:
    """item -> (annotator, status) of its assignments, in the order they were made."""
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
    return per_item


def _first_kappa(
    data: ReportData,
    policy: AdaptiveOverlap,
    first: dict[Hashable, tuple[str | None, ...]],
    categories: list[str],
) -> stats.Coefficient | None:
    """Fleiss' kappa on the first k answers of the units (`_first_answers`)."""
    if not first:
        return None
    ratings = stats.Ratings(
        units=tuple(first),
        raters=tuple(f"answer {n + 1}" for n in range(policy.start)),
        labels=tuple(first.values()),
    )
    return stats.agreement(
        ratings, categories=categories, bootstrap=data.bootstrap, seed=data.seed
    ).fleiss_kappa


def adaptive_overlap_section(data: ReportData) -> Section | None:
    """What the project's adaptive overlap did: the items it escalated, the answers and
    annotator-hours it used against fixed overlap m, and Fleiss' kappa on the first k
    answers of every item (every item has k of them, so kappa is unbiased by which items
    got more; alpha and AC1 on all answers are in the agreement section)."""
    policy = AdaptiveOverlap.objects.filter(project=data.project).first()
    if policy is None:
        return None
    under = {i: a for i, a in _assigned(data, policy).items() if len(a) >= policy.start}
    if not under:
        return None
    escalated = sorted(i for i, a in under.items() if len(a) > policy.start)
    answers = sum(1 for a in under.values() for _, status in a if status == Assignment.SUBMITTED)
    # hours saved over finished items only: an unfinished item may still get up to m answers
    finished = _finished_items(policy, under)
    seconds = median_seconds(data).get(policy.kind)
    saved = (
        None
        if seconds is None
        else sum(policy.up_to - len(under[i]) for i in finished) * seconds / 3600
    )

    # a field set in the admin may not be categorical: no answers to compare, no kappa
    categories = kinds.get(policy.kind).categorical(data.project).get(policy.field, [])
    first, outside = _first_answers(data, policy, under, set(categories))
    kappa = _first_kappa(data, policy, first, categories)
    waiting = OverlapWait.objects.filter(item__project=data.project, item__kind=policy.kind).count()
    row: Row = {
        "task": policy.kind,
        "field": policy.field,
        "start k": policy.start,
        "up to m": policy.up_to,
        "items": len(under),
        "items escalated": len(escalated),
        "answers": answers,
        "answers at fixed m": len(under) * policy.up_to,
        "items finished": len(finished),
        "annotator-hours saved": saved,
        "units with k answers": len(first),
        "Fleiss' kappa, first k answers": None if kappa is None else kappa.value,
        "kappa CI low": None if kappa is None else kappa.ci_low,
        "kappa CI high": None if kappa is None else kappa.ci_high,
        "items waiting for an annotator": waiting,
    }
    summary = _table("adaptive-overlap", "Adaptive overlap", [row])
    items = Table(
        "adaptive-overlap-items",
        "Items given more than k annotators",
        ("item", "annotators"),
        tuple((i, len(under[i])) for i in escalated),
    )
    notes = _overlap_notes(policy)
    if outside:
        notes += (
            f"{outside} of the first k answers were outside the field's labels "
            f"({', '.join(categories)}): their units are left out of the kappa.",
        )
    return Section("adaptive-overlap", "Adaptive overlap", notes, (summary, items))


def _overlap_notes(policy: AdaptiveOverlap) -> tuple[str, ...]:
    """How adaptive overlap works and how the section counts."""
    return (
        f"Items of the {policy.kind} kind given {policy.start} annotators get one more while "
        f"their answers to {policy.field} disagree, up to {policy.up_to}. Items given fewer "
        "(outside the overlap fraction) are not counted.",
        "Answers at fixed m: every item answered by m annotators. Hours saved: on the "
        "finished items (every answer submitted and no more to come: m answers, or answers "
        "that agree), the answers fixed overlap would have asked more, at the median active "
        "time per item.",
        "Fleiss' kappa here uses the first k answers of every item, so the items that got "
        "more (those that disagreed) do not weigh more; the agreement section's figures "
        "use every answer.",
        "Items, answers and hours are the whole project's (the report's filters do not "
        "apply to them); the kappa uses the filtered answers.",
        "Items waiting for an annotator: they disagree but nobody who can still work was "
        "free when they were widened (completed, screened-out, returned and paused hires, "
        "and hires at their quota, get no more items); the next person who can takes them.",
    )
