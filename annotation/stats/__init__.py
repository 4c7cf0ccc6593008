"""Agreement and validation statistics on plain data. No Django imports.

Point estimates come from the libraries that already compute them (statsmodels for
Fleiss' kappa and McNemar, scikit-learn for Cohen's kappa and the classification
scores, `krippendorff` for alpha, scipy for binomial tests and Kendall's tau). Gwet's
AC1 has no mainstream Python library and is written from Gwet (2014).

Bootstrap confidence intervals resample units. Every coefficient here depends on a
unit only through its per-category count vector, so units are grouped by count
vector and a bootstrap resample is a multinomial draw over those groups; the
coefficients are then computed for all resamples at once with numpy.
`agreement()` checks that this vectorised formula reproduces the library value on
the data it was given before it trusts the resamples.

A coefficient that cannot be computed has `value=None` and says why in
`undefined_reason`; nothing here returns NaN or a conventional 1.0.

The package: `ratings` (data in: one constructor per layout, labels any hashable, None
and NaN missing), `gwet` (each coefficient's p_o, p_e and asymptotic standard error,
Gwet 2014), `two_raters` (Cohen's kappa, weighted or not, and Scott's pi), and
`classification` (predictions against references for any label set). This module:
agreement across raters, majority votes, verifier scores on our verdict labels, McNemar,
preferences and Kendall's tau. Import everything from here: `from annotation import stats`.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats
from sklearn import metrics
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import fleiss_kappa

from . import gwet

# Re-exported: `from annotation import stats` is the one import callers need.
from .classification import (  # noqa: F401
    VERISCORE_BINARY,
    ClassificationReport,
    ClassScores,
    Disagreement,
    ScoreAverages,
    classification_scores,
)
from .coefficient import Coefficient as Coefficient  # re-exported
from .ratings import (  # noqa: F401
    Label,
    Ratings,
    RatingsInput,
    as_number,
    as_ratings,
    is_missing,
    label_distribution,
    label_set,
    order_categories,
)
from .two_raters import (  # noqa: F401
    TwoRaterKappa,
    WeightsOver,
    cohen_kappa,
    cohen_kappa_from_table,
    contingency_table,
    scott_pi,
    scott_pi_from_table,
)

Level = Literal["nominal", "ordinal", "interval", "ratio"]
Mode = Literal["binary", "ternary"]
FloatArray = npt.NDArray[np.float64]

LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
TIE = "tie"
SUPPORTED = "supported"
UNSUPPORTED = "unsupported"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
IRRELEVANT = "irrelevant"
BINARY_LABELS: tuple[str, ...] = (SUPPORTED, UNSUPPORTED)
TERNARY_LABELS: tuple[str, ...] = (SUPPORTED, CONTRADICTED, INCONCLUSIVE)

# Below this many discordant pairs McNemar's chi-square approximation is poor, so the
# exact binomial version is used (the rule of thumb in the statsmodels docs).
MCNEMAR_EXACT_BELOW = 25


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CategoryKappa:
    """Fleiss' (1971) kappa for one category against all the others."""

    category: Label
    kappa: Coefficient


@dataclass(frozen=True)
class ExcludedUnit:
    unit: Hashable
    reason: str


@dataclass(frozen=True)
class PairwiseKappa:
    rater_a: Hashable
    rater_b: Hashable
    n_units: int
    kappa: Coefficient


@dataclass(frozen=True)
class RaterAgreement:
    """How one rater agrees with the others on the units they share."""

    rater: Hashable
    n_units: int
    n_pairs: int
    percent_agreement: float | None
    mean_kappa: float | None
    undefined_reason: str | None = None


@dataclass(frozen=True)
class AgreementReport:
    categories: tuple[Label, ...]
    level: str
    raters: tuple[Hashable, ...]
    n_units_total: int
    n_units_used: int
    n_ratings: int
    raters_per_unit: dict[int, int]
    min_raters: int
    max_raters: int
    mean_raters: float
    excluded: tuple[ExcludedUnit, ...]
    label_distribution: dict[Label, int]
    percent_agreement: Coefficient
    full_agreement: Coefficient
    fleiss_kappa: Coefficient
    krippendorff_alpha: Coefficient
    gwet_ac1: Coefficient
    pairwise: tuple[PairwiseKappa, ...]
    per_rater: tuple[RaterAgreement, ...]
    bootstrap: int
    confidence: float
    seed: int
    conger_kappa: Coefficient = Coefficient("Conger's kappa", None, undefined_reason="not computed")
    brennan_prediger: Coefficient = Coefficient(
        "Brennan-Prediger", None, undefined_reason="not computed"
    )
    per_category: tuple[CategoryKappa, ...] = ()

    @property
    def coefficients(self) -> tuple[Coefficient, ...]:
        return (
            self.percent_agreement,
            self.full_agreement,
            self.fleiss_kappa,
            self.conger_kappa,
            self.krippendorff_alpha,
            self.gwet_ac1,
            self.brennan_prediger,
        )

    def kappa_matrix(self) -> tuple[tuple[float | None, ...], ...]:
        """Pairwise Cohen's kappa as a square matrix in `raters` order (1.0 on the diagonal)."""
        index = {rater: i for i, rater in enumerate(self.raters)}
        size = len(self.raters)
        rows: list[list[float | None]] = [
            [1.0 if i == j else None for j in range(size)] for i in range(size)
        ]
        for pair in self.pairwise:
            i, j = index[pair.rater_a], index[pair.rater_b]
            rows[i][j] = rows[j][i] = pair.kappa.value
        return tuple(tuple(row) for row in rows)


# --------------------------------------------------------------------------- agreement


def agreement(
    ratings: RatingsInput,
    *,
    categories: Sequence[Label] | None = None,
    level: Level = "nominal",
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AgreementReport:
    """Inter-rater agreement for one categorical field.

    `ratings` is a `Ratings` (build one with the constructor that names your layout:
    `Ratings.from_units_by_raters`, `from_raters_by_units`, `from_counts`, `from_table`,
    `from_long`), a {unit: {rater: label}} mapping, or a units x raters matrix (refused
    when it has more columns than rows). Labels are any hashable values; None and NaN
    are missing ratings. `categories` is the label set in order; without it the labels
    seen are used, in numeric order when they are all numbers ("2" before "10").

    Units with fewer than two ratings carry no agreement information and are listed
    in `excluded`; Gwet's AC1 and Fleiss' kappa still count single ratings in the
    category prevalence, as Gwet (2014) does. When every rated unit has the same
    number of ratings, Fleiss' kappa is statsmodels' value; otherwise it is Gwet's
    (2014) generalisation to unequal counts (irrCAC's `fleiss.kappa.raw`), and the
    coefficient's note says so. `label_distribution` counts every rating given,
    including those on excluded units. `level` applies to Krippendorff's
    alpha; the other coefficients are nominal. For ordinal alpha the order of
    `categories` is the order (a warning says so when numeric categories are declared
    out of numeric order); interval and ratio alpha use the categories as numbers
    when they all parse as numbers, otherwise their positions 0, 1, 2, ...

    Each coefficient carries its parts: p_o and p_e (d_o and d_e for alpha), the
    asymptotic standard error of Gwet (2014) with its Wald interval (t with n - 1
    degrees of freedom, as irrCAC prints it), and a bootstrap percentile interval:
    `bootstrap` resamples of the rated units, with replacement, from
    `np.random.default_rng(seed)`. Pairwise kappas resample the units the two raters
    share. `bootstrap=0` gives no bootstrap intervals.
    """
    data = as_ratings(ratings)
    categories = _categories(data, categories, level)
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if bootstrap < 0:
        raise ValueError("bootstrap must be 0 (no intervals) or a positive count")

    codes = _encode(data, categories)
    counts = _count_matrix(codes, len(categories))
    per_unit = counts.sum(axis=1)
    used = per_unit >= 2
    excluded = tuple(
        ExcludedUnit(unit, "no ratings" if n == 0 else "only one rating")
        for unit, n in zip(data.units, per_unit.tolist(), strict=True)
        if n < 2
    )
    histogram = dict(sorted(Counter(per_unit.tolist()).items()))
    used_counts = per_unit[used]
    all_labels = [label for row in data.labels for label in row]

    population = counts[per_unit >= 1]
    if population.shape[0]:
        patterns, freq = np.unique(population, axis=0, return_counts=True)
    else:
        patterns, freq = np.zeros((0, len(categories)), dtype=np.int64), np.zeros(0, np.int64)
    delta = _delta_fn(level, categories)

    observed = _coefficients_from_patterns(
        patterns, freq[np.newaxis, :].astype(np.float64), delta=delta
    )
    resampled: dict[str, FloatArray] = {}
    if bootstrap and population.shape[0]:
        rng = np.random.default_rng(seed)
        weights = rng.multinomial(population.shape[0], freq / freq.sum(), size=bootstrap)
        resampled = _coefficients_from_patterns(patterns, weights.astype(np.float64), delta=delta)
        if not data.anonymous_raters:
            rows, row_freq = _conger_patterns(codes)
            draws = rng.multinomial(row_freq.sum(), row_freq / row_freq.sum(), size=bootstrap)
            resampled["conger"] = _conger_from_weights(
                rows, draws.astype(np.float64), len(categories)
            )
            observed["conger"] = _conger_from_weights(
                rows, row_freq[np.newaxis, :].astype(np.float64), len(categories)
            )

    def ci(key: str) -> tuple[float | None, float | None, str | None]:
        return _percentile_ci(resampled.get(key), confidence)

    n_used = int(used.sum())
    estimates = _point_estimates(
        counts=counts,
        codes=None if data.anonymous_raters else codes,
        used=used,
        categories=categories,
        level=level,
        observed=observed,
        ci=ci,
        confidence=confidence,
    )
    pairwise = (
        ()
        if data.anonymous_raters
        else _pairwise_kappas(
            codes, data.raters, categories, bootstrap=bootstrap, seed=seed, confidence=confidence
        )
    )
    return AgreementReport(
        categories=categories,
        level=level,
        raters=() if data.anonymous_raters else data.raters,
        n_units_total=len(data.units),
        n_units_used=n_used,
        n_ratings=int(per_unit.sum()),
        raters_per_unit=histogram,
        min_raters=int(np.min(used_counts)) if n_used else 0,
        max_raters=int(np.max(used_counts)) if n_used else 0,
        mean_raters=float(used_counts.mean()) if n_used else 0.0,
        excluded=excluded,
        label_distribution=label_distribution(all_labels),
        percent_agreement=estimates["percent"],
        full_agreement=estimates["full"],
        fleiss_kappa=estimates["fleiss"],
        krippendorff_alpha=estimates["alpha"],
        gwet_ac1=estimates["ac1"],
        conger_kappa=estimates["conger"],
        brennan_prediger=estimates["bp"],
        per_category=_per_category(counts, categories, confidence) if n_used else (),
        pairwise=pairwise,
        per_rater=() if data.anonymous_raters else _per_rater(codes, data.raters, pairwise),
        bootstrap=bootstrap,
        confidence=confidence,
        seed=seed,
    )


def _categories(data: Ratings, declared: Sequence[Label] | None, level: str) -> tuple[Label, ...]:
    categories = label_set(declared, data.categories_seen())
    numeric = all(as_number(c) is not None for c in categories)
    if declared is None and level == "ordinal" and not numeric:
        raise ValueError(
            "ordinal alpha needs the order of the categories: pass categories=[...] in order "
            f"(the labels seen, {', '.join(map(repr, categories))}, are not all numbers)"
        )
    if level == "ordinal" and numeric and order_categories(categories) != categories:
        warnings.warn(
            f"the categories {list(categories)} are numbers but not in numeric order; "
            "ordinal alpha uses the order given. Pass them in numeric order if that is the "
            "scale (as text, '10' sorts before '2').",
            UserWarning,
            stacklevel=3,
        )
    return categories


def _encode(data: Ratings, categories: tuple[Label, ...]) -> npt.NDArray[np.int64]:
    index = {label: i for i, label in enumerate(categories)}
    codes = np.full((len(data.units), len(data.raters)), -1, dtype=np.int64)
    for u, (unit, row) in enumerate(zip(data.units, data.labels, strict=True)):
        for r, label in enumerate(row):
            if label is None:
                continue
            try:
                codes[u, r] = index[label]
            except KeyError:
                raise ValueError(
                    f"label {label!r} of rater {data.raters[r]!r} on unit {unit!r} "
                    f"is not one of the declared categories {categories}"
                ) from None
    return codes


def _count_matrix(codes: npt.NDArray[np.int64], n_categories: int) -> npt.NDArray[np.int64]:
    """units x categories: how many raters gave each category to each unit."""
    n_units = codes.shape[0]
    unit_index, rater_index = np.nonzero(codes >= 0)
    flat = unit_index * n_categories + codes[unit_index, rater_index]
    return np.bincount(flat, minlength=n_units * n_categories).reshape(n_units, n_categories)


_NAMES = {
    "percent": "Percent agreement",
    "full": "Full agreement",
    "fleiss": "Fleiss' kappa",
    "conger": "Conger's kappa",
    "ac1": "Gwet's AC1",
    "bp": "Brennan-Prediger",
}


def _point_estimates(
    *,
    counts: npt.NDArray[np.int64],
    codes: npt.NDArray[np.int64] | None,
    used: npt.NDArray[np.bool_],
    categories: tuple[Label, ...],
    level: str,
    observed: dict[str, FloatArray],
    ci: Callable[[str], tuple[float | None, float | None, str | None]],
    confidence: float,
) -> dict[str, Coefficient]:
    n_used = int(used.sum())
    names = {**_NAMES, "alpha": f"Krippendorff's alpha ({level})"}
    if n_used == 0:
        reason = "no unit has two or more ratings, so there is nothing to compare"
        return {
            key: Coefficient(name, None, undefined_reason=reason) for key, name in names.items()
        }

    used_counts = counts[used]
    pairable_labels = used_counts.sum(axis=0)
    single_category = int((pairable_labels > 0).sum()) == 1
    only = categories[int(np.argmax(pairable_labels))]
    one_category_reason = (
        f"every rating on the {n_used} units with two or more ratings is {only!r}: "
        "expected agreement is 1, so a chance-corrected coefficient is 0/0"
    )
    one_category_note = (
        f"every rating is {only!r}: the coefficient is 1 by its formula, but the data "
        "cannot show that the raters tell the categories apart"
    )

    def make(
        key: str,
        value: float | None,
        *,
        undefined_reason: str | None = None,
        note: str | None = None,
        parts: gwet.Parts | None = None,
        check: float | None = None,
        d_o: float | None = None,
        d_e: float | None = None,
    ) -> Coefficient:
        if value is None:
            return Coefficient(names[key], None, undefined_reason=undefined_reason, n_units=n_used)
        low, high, ci_note = ci(key)
        if check is not None and not math.isclose(value, check, rel_tol=1e-9, abs_tol=1e-9):
            # The bootstrap trusts the vectorised formula; withhold intervals built on a
            # formula that does not reproduce the library's value on this very data, and
            # say so, rather than lose the coefficient (or the report).
            low = high = None
            ci_note = (
                f"no bootstrap interval: the resampling formula gives {check!r}, the library "
                f"{value!r}; please report this"
            )
        wald_low, wald_high = (
            gwet.wald_interval(parts.value, parts.se, parts.n, confidence)
            if parts
            else (None, None)
        )
        return Coefficient(
            names[key],
            value,
            low,
            high,
            note="; ".join(n for n in (note, ci_note) if n) or None,
            n_units=n_used,
            p_o=parts.p_o if parts else None,
            p_e=parts.p_e if parts else None,
            se=parts.se if parts else None,
            wald_low=wald_low,
            wald_high=wald_high,
            d_o=d_o,
            d_e=d_e,
        )

    result: dict[str, Coefficient] = {}
    percent_parts = gwet.percent_agreement(counts)
    result["percent"] = make(
        "percent", float(observed["percent"][0]), parts=percent_parts, check=percent_parts.value
    )
    result["full"] = make(
        "full", float(observed["full"][0]), note="share of units on which every rating is the same"
    )

    rated_counts = counts[counts.sum(axis=1) >= 1]
    sizes = sorted(set(rated_counts.sum(axis=1).tolist()))
    if single_category:
        result["fleiss"] = make("fleiss", None, undefined_reason=one_category_reason)
    elif len(sizes) == 1:
        value = float(fleiss_kappa(rated_counts, method="fleiss"))
        result["fleiss"] = make(
            "fleiss", value, parts=gwet.fleiss_kappa(counts), check=float(observed["fleiss"][0])
        )
    else:
        result["fleiss"] = make(
            "fleiss",
            float(observed["fleiss"][0]),
            parts=gwet.fleiss_kappa(counts),
            note=f"units have {sizes[0]} to {sizes[-1]} ratings: Fleiss' kappa generalised to "
            "unequal counts as in Gwet (2014) (irrCAC fleiss.kappa.raw); chance agreement "
            "uses every rated unit",
        )

    if codes is None:
        result["conger"] = make(
            "conger",
            None,
            undefined_reason="the raters are anonymous (counts per category), and Conger's "
            "kappa needs each rater's own category shares",
        )
    elif single_category:
        result["conger"] = make("conger", None, undefined_reason=one_category_reason)
    else:
        parts = gwet.conger_kappa(codes, len(categories))
        vectorised = observed.get("conger")
        result["conger"] = make(
            "conger",
            parts.value,
            parts=parts,
            check=None if vectorised is None else float(vectorised[0]),
        )

    if single_category:
        result["alpha"] = make("alpha", None, undefined_reason=one_category_reason)
    else:
        value = float(
            krippendorff.alpha(
                value_counts=used_counts,
                value_domain=_value_domain(level, categories),
                level_of_measurement=level,  # type: ignore[arg-type]
            )
        )
        result["alpha"] = make(
            "alpha",
            value,
            check=float(observed["alpha"][0]),
            parts=gwet.krippendorff_alpha_se(counts) if level == "nominal" else None,
            note=None
            if level == "nominal"
            else f"no asymptotic standard error for {level} alpha here; use the bootstrap interval",
            d_o=float(observed["d_o"][0]),
            d_e=float(observed["d_e"][0]),
        )
        if level == "nominal":
            # p_o and p_e in Gwet's form of alpha are not Krippendorff's; keep d_o, d_e only.
            result["alpha"] = replace(result["alpha"], p_o=None, p_e=None)

    if len(categories) < 2:
        reason = "only one category is declared; chance agreement divides by (categories - 1)"
        result["ac1"] = make("ac1", None, undefined_reason=reason)
        result["bp"] = make("bp", None, undefined_reason=reason)
    else:
        note = one_category_note if single_category else None
        ac1_parts = gwet.gwet_ac1(counts)
        result["ac1"] = make(
            "ac1",
            gwet_ac1_from_counts(counts, n_categories=len(categories)),
            note=note,
            parts=ac1_parts,
            check=float(observed["ac1"][0]),
        )
        bp_parts = gwet.brennan_prediger(counts)
        result["bp"] = make(
            "bp", bp_parts.value, note=note, parts=bp_parts, check=float(observed["bp"][0])
        )
    return result


def _per_category(
    counts: npt.NDArray[np.int64], categories: tuple[Label, ...], confidence: float
) -> tuple[CategoryKappa, ...]:
    """Fleiss' (1971) kappa of each category against the rest (Gwet's form, missing data)."""
    rated = counts[counts.sum(axis=1) >= 1]
    total = rated.sum(axis=1)
    result = []
    for j, category in enumerate(categories):
        binary = np.column_stack([rated[:, j], total - rated[:, j]])
        name = f"kappa for {category!r}"
        if not binary[:, 0].any() or not binary[:, 1].any():
            which = "never given" if not binary[:, 0].any() else "the only label given"
            kappa = Coefficient(
                name, None, undefined_reason=f"{category!r} is {which}: expected agreement is 1"
            )
        else:
            parts = gwet.fleiss_kappa(binary)
            low, high = gwet.wald_interval(parts.value, parts.se, parts.n, confidence)
            kappa = Coefficient(
                name,
                parts.value,
                n_units=int((total >= 2).sum()),
                p_o=parts.p_o,
                p_e=parts.p_e,
                se=parts.se,
                wald_low=low,
                wald_high=high,
            )
        result.append(CategoryKappa(category, kappa))
    return tuple(result)


def _conger_patterns(
    codes: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct rows of codes (who said what on a unit) and how many units have each.

    Conger's chance agreement needs each rater's category shares, which the count
    patterns behind the other intervals do not keep, so its resamples draw whole rows.
    """
    rated = codes[(codes >= 0).any(axis=1)]
    if not len(rated):
        return rated, np.zeros(0, dtype=np.int64)
    return np.unique(rated, axis=0, return_counts=True)


def _conger_from_weights(rows: npt.NDArray[np.int64], weights: FloatArray, q: int) -> FloatArray:
    """Conger's kappa for B weightings (B, P) of the distinct rows of codes (P, R)."""
    onehot = (rows[:, :, np.newaxis] == np.arange(q)).astype(np.float64)  # (P, R, q)
    table = onehot.sum(axis=1)
    r = table.sum(axis=1)
    pairable = (r >= 2).astype(np.float64)
    agree = np.where(pairable > 0, (table * (table - 1)).sum(1) / np.maximum(r * (r - 1), 1), 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pa = (weights @ agree) / (weights @ pairable)
        shares = np.einsum("bp,prq->brq", weights, onehot)
        shares /= shares.sum(axis=2, keepdims=True)  # a rater with no rating gives NaN
        present = np.isfinite(shares).all(axis=2)  # (B, R)
        shares = np.where(present[:, :, np.newaxis], shares, 0.0)
        raters = present.sum(axis=1).astype(np.float64)
        mean = shares.sum(axis=1) / raters[:, np.newaxis]
        cross = np.einsum("brk,brk->b", shares, shares)
        s2_trace = (cross - raters * (mean**2).sum(axis=1)) / (raters - 1)
        pe = (mean**2).sum(axis=1) - s2_trace / raters
        kappa: FloatArray = (pa - pe) / (1 - pe)
    return kappa


def gwet_ac1_from_counts(counts: npt.ArrayLike, *, n_categories: int | None = None) -> float:
    """Gwet's AC1 from a units x categories count matrix (Gwet 2014, ch. 2 and 5).

    pa = mean over units with r_i >= 2 of sum_k r_ik (r_ik - 1) / (r_i (r_i - 1));
    pi_k = mean over units with r_i >= 1 of r_ik / r_i;
    pe = sum_k pi_k (1 - pi_k) / (q - 1);  AC1 = (pa - pe) / (1 - pe).
    `n_categories` (q) defaults to the number of columns.
    """
    table = np.asarray(counts, dtype=np.float64)
    q = n_categories if n_categories is not None else table.shape[1]
    if q < 2:
        raise ValueError("AC1 needs at least two categories")
    r = table.sum(axis=1)
    rated, pairable = r >= 1, r >= 2
    if not pairable.any():
        raise ValueError("AC1 needs at least one unit with two or more ratings")
    rp = r[pairable]
    pa = float(((table[pairable] * (table[pairable] - 1)).sum(axis=1) / (rp * (rp - 1))).mean())
    pi = (table[rated] / r[rated, np.newaxis]).mean(axis=0)
    pe = float((pi * (1 - pi)).sum() / (q - 1))
    return (pa - pe) / (1 - pe)


def _value_domain(level: str, categories: tuple[Label, ...]) -> FloatArray:
    if level in ("interval", "ratio"):
        try:
            return np.array([float(c) for c in categories], dtype=np.float64)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    return np.arange(len(categories), dtype=np.float64)


DeltaFn = Callable[[FloatArray], FloatArray]


def _delta_fn(level: str, categories: tuple[Label, ...]) -> DeltaFn:
    """Squared difference function for alpha: (B, q) pairable value totals -> (B, q, q)."""
    q = len(categories)
    values = _value_domain(level, categories)
    i, j = np.meshgrid(np.arange(q), np.arange(q), indexing="ij")
    if level == "nominal":
        fixed = (i != j).astype(np.float64)
    elif level == "interval":
        fixed = (values[i] - values[j]) ** 2
    elif level == "ratio":
        total = values[i] + values[j]
        diff = values[i] - values[j]
        fixed = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
    else:
        lo, hi = np.minimum(i, j), np.maximum(i, j)

        def ordinal(n_c: FloatArray) -> FloatArray:
            # Krippendorff's ordinal metric depends on the value totals of each resample.
            cum = np.cumsum(n_c, axis=1)
            between = cum[:, hi] - cum[:, lo] + n_c[:, lo]
            return (between - (n_c[:, lo] + n_c[:, hi]) / 2) ** 2

        return ordinal
    return lambda n_c: np.broadcast_to(fixed, (n_c.shape[0], q, q))


def _coefficients_from_patterns(
    patterns: npt.NDArray[np.int64],
    weights: FloatArray,
    *,
    delta: DeltaFn,
) -> dict[str, FloatArray]:
    """All multi-rater coefficients for B weightings of the distinct count vectors.

    `patterns` (P, q) are the distinct per-unit count vectors, `weights` (B, P) how
    many units carry each one (the observed frequencies, or a bootstrap resample).
    Returns arrays of length B; NaN marks a resample where a coefficient is 0/0.
    """
    p = patterns.astype(np.float64)
    q = p.shape[1]
    r = p.sum(axis=1)
    pairable = r >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        agree = np.where(pairable, (p * (p - 1)).sum(axis=1) / (r * (r - 1)), 0.0)
        full = np.where(pairable, p.max(axis=1, initial=0) == r, False).astype(np.float64)
        n_pairable = weights @ pairable.astype(np.float64)
        percent = (weights @ agree) / n_pairable

        # Category prevalence over every rated unit (Gwet 2014). With equal counts per
        # unit this is Fleiss' p_j, so the kappa below is exactly Fleiss' kappa.
        share = p / r[:, np.newaxis]
        pi = (weights @ share) / weights.sum(axis=1)[:, np.newaxis]
        fleiss_pe = (pi**2).sum(axis=1)
        fleiss = (percent - fleiss_pe) / (1 - fleiss_pe)
        pe = (pi * (1 - pi)).sum(axis=1) / (q - 1) if q > 1 else np.full(len(weights), np.nan)
        ac1 = (percent - pe) / (1 - pe)
        bp = (percent - 1 / q) / (1 - 1 / q) if q > 1 else np.full(len(weights), np.nan)

        # Krippendorff's alpha from the coincidence matrix.
        within = p[:, :, np.newaxis] * p[:, np.newaxis, :] - np.einsum("pk,kl->pkl", p, np.eye(q))
        within = np.where(pairable[:, np.newaxis, np.newaxis], within, 0.0)
        within /= np.where(pairable, r - 1, 1.0)[:, np.newaxis, np.newaxis]
        coincidences = (weights @ within.reshape(len(p), q * q)).reshape(-1, q, q)
        n_c = coincidences.sum(axis=2)
        n = n_c.sum(axis=1)
        d = delta(n_c)
        observed = (coincidences * d).sum(axis=(1, 2))
        expected = (n_c[:, :, np.newaxis] * n_c[:, np.newaxis, :] * d).sum(axis=(1, 2)) / (n - 1)
        alpha = 1 - observed / expected
        full_share = (weights @ full) / n_pairable
        # Krippendorff's D_o and D_e (alpha = 1 - D_o / D_e), per pairable value.
        d_o, d_e = observed / n, expected / n
    return {
        "percent": percent,
        "full": full_share,
        "fleiss": fleiss,
        "ac1": ac1,
        "bp": bp,
        "alpha": alpha,
        "d_o": d_o,
        "d_e": d_e,
    }


def _percentile_ci(
    values: FloatArray | None, confidence: float
) -> tuple[float | None, float | None, str | None]:
    if values is None or not len(values):
        return None, None, None
    finite = values[np.isfinite(values)]
    dropped = len(values) - len(finite)
    if not len(finite):
        return None, None, "no bootstrap resample gave a defined value, so there is no interval"
    tail = (1 - confidence) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    note = (
        f"{dropped} of {len(values)} bootstrap resamples were undefined and left out"
        if dropped
        else None
    )
    return float(low), float(high), note


# --------------------------------------------------------------------------- pairs


def _pairwise_kappas(
    codes: npt.NDArray[np.int64],
    raters: tuple[Hashable, ...],
    categories: tuple[Label, ...],
    *,
    bootstrap: int,
    seed: int,
    confidence: float,
) -> tuple[PairwiseKappa, ...]:
    q = len(categories)
    rng = np.random.default_rng(seed)
    pairs = []
    for i in range(len(raters)):
        for j in range(i + 1, len(raters)):
            both = (codes[:, i] >= 0) & (codes[:, j] >= 0)
            a, b = codes[both, i], codes[both, j]
            pairs.append(
                PairwiseKappa(
                    raters[i],
                    raters[j],
                    int(both.sum()),
                    _pair_kappa(
                        a, b, raters[i], raters[j], categories, q, rng, bootstrap, confidence
                    ),
                )
            )
    return tuple(pairs)


def _pair_kappa(
    a: npt.NDArray[np.int64],
    b: npt.NDArray[np.int64],
    rater_a: Hashable,
    rater_b: Hashable,
    categories: tuple[Label, ...],
    q: int,
    rng: np.random.Generator,
    bootstrap: int,
    confidence: float,
) -> Coefficient:
    name = "Cohen's kappa"
    n = len(a)
    if n == 0:
        return Coefficient(
            name, None, undefined_reason=f"{rater_a!r} and {rater_b!r} rated no unit in common"
        )
    if len(set(a.tolist()) | set(b.tolist())) == 1:
        return Coefficient(
            name,
            None,
            undefined_reason=f"both raters gave {categories[int(a[0])]!r} to all {n} shared "
            "units: expected agreement is 1, so kappa is 0/0",
            n_units=n,
        )
    value = float(metrics.cohen_kappa_score(a, b, labels=list(range(q))))
    if not bootstrap:
        return Coefficient(name, value, n_units=n)
    table = np.bincount(a * q + b, minlength=q * q).astype(np.float64)
    draws = rng.multinomial(n, table / n, size=bootstrap).reshape(-1, q, q).astype(np.float64)
    low, high, note = _percentile_ci(_kappa_from_tables(draws), confidence)
    return Coefficient(name, value, low, high, note=note, n_units=n)


def _kappa_from_tables(tables: FloatArray) -> FloatArray:
    """Cohen's kappa for a stack of (B, q, q) contingency tables."""
    n = tables.sum(axis=(1, 2))
    observed = np.trace(tables, axis1=1, axis2=2) / n
    expected = (tables.sum(axis=2) * tables.sum(axis=1)).sum(axis=1) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa: FloatArray = (observed - expected) / (1 - expected)
    return kappa


def _per_rater(
    codes: npt.NDArray[np.int64],
    raters: tuple[Hashable, ...],
    pairwise: tuple[PairwiseKappa, ...],
) -> tuple[RaterAgreement, ...]:
    result = []
    for i, rater in enumerate(raters):
        mine = codes[:, i]
        others = np.delete(codes, i, axis=1)
        present = (mine[:, np.newaxis] >= 0) & (others >= 0)
        n_pairs = int(present.sum())
        n_units = int(present.any(axis=1).sum())
        kappas = [
            p.kappa.value
            for p in pairwise
            if rater in (p.rater_a, p.rater_b) and p.kappa.value is not None
        ]
        if not n_pairs:
            result.append(
                RaterAgreement(rater, 0, 0, None, None, "shares no unit with another rater")
            )
            continue
        agree = int(((mine[:, np.newaxis] == others) & present).sum())
        result.append(
            RaterAgreement(
                rater,
                n_units,
                n_pairs,
                agree / n_pairs,
                float(np.mean(kappas)) if kappas else None,
                None if kappas else "no pairwise kappa with this rater is defined",
            )
        )
    return tuple(result)


# --------------------------------------------------------------------------- majority


@dataclass(frozen=True)
class Majority:
    """Plurality vote. `label` is None when there are no votes, the tie value on a tie."""

    label: Label | None
    is_tie: bool
    n_votes: int
    distribution: dict[Label, int]


def majority(labels: Iterable[Label | None], *, tie: Label = TIE) -> Majority:
    """Most frequent label; a tie for first place gives `tie` (e.g. "inconclusive")."""
    distribution = label_distribution(labels)
    n_votes = sum(distribution.values())
    if not distribution:
        return Majority(None, False, 0, distribution)
    ranked = list(distribution.items())
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return Majority(tie, True, n_votes, distribution)
    return Majority(ranked[0][0], False, n_votes, distribution)


# --------------------------------------------------------------------------- verifier


_VERDICT_SPELLINGS = {
    "supported": SUPPORTED,
    "s": SUPPORTED,
    "unsupported": UNSUPPORTED,
    "not supported": UNSUPPORTED,
    "ns": UNSUPPORTED,
    "contradicted": CONTRADICTED,
    "inconclusive": INCONCLUSIVE,
    "inconclusive-not-enough": INCONCLUSIVE,
    "inconclusive-conflicting": INCONCLUSIVE,
    "ir": IRRELEVANT,
    "irrelevant": IRRELEVANT,
}
_NO_VERDICT = {"", "unparsed", "error"}


def normalise_verdict(label: str | None, *, mode: Mode | None = None) -> str | None:
    """One canonical spelling for a verdict label, or None when there is no usable label.

    Accepts our labels (supported, contradicted, inconclusive, inconclusive-not-enough,
    inconclusive-conflicting, unsupported), VeriScore's "Supported." / "Unsupported." /
    "Contradicted." / "Inconclusive." and FActScore's S / NS / IR, in any case.
    "unparsed", "error" and empty strings give None. IR gives "irrelevant" in every
    mode. With mode="binary", contradicted and inconclusive become unsupported; with
    mode="ternary", a bare "unsupported" is an error because it does not say which.
    """
    if label is None:
        return None
    key = label.strip().lower().rstrip(".").strip()
    if key in _NO_VERDICT:
        return None
    try:
        canonical = _VERDICT_SPELLINGS[key]
    except KeyError:
        raise ValueError(f"unknown verdict label {label!r}") from None
    if mode == "binary" and canonical in (CONTRADICTED, INCONCLUSIVE):
        return UNSUPPORTED
    if mode == "ternary" and canonical == UNSUPPORTED:
        raise ValueError(
            f"{label!r} is a binary label: it does not say contradicted or inconclusive; "
            "use mode='binary'"
        )
    return canonical


VerifierReport = ClassificationReport


def verifier_vs_reference(
    *args: object,
    y_true: Sequence[Label | None] | None = None,
    y_pred: Sequence[Label | None] | None = None,
    mode: Mode | None = None,
    labels: Sequence[Label] | None = None,
    collapse: Mapping[Label, Label] | None = None,
    exclude: Collection[Label] | None = None,
    beta: float = 1.0,
    units: Sequence[Hashable] | None = None,
) -> VerifierReport:
    """A verifier's labels (`y_pred`) scored against reference labels (`y_true`).

    Precision, recall, F1 and F-beta per class and averaged (macro, weighted, micro),
    accuracy, balanced accuracy, Cohen's kappa, MCC and the confusion matrix.

    Without `labels`, the labels are our verdicts in any of their spellings (see
    `normalise_verdict`), and `mode` picks the collapse rule: "binary" (the default,
    VeriScore's Table 11: contradicted and inconclusive count as unsupported) or
    "ternary". With `labels`, any label set is scored as given (binary, FELM's
    true/false, a dataset's own), after the optional `collapse` mapping; a `collapse`
    mapping also replaces `mode`'s rule for our verdicts. Units without a usable label
    (missing, NaN, "unparsed", "error") or with a label in `exclude` (default: IR,
    "irrelevant") are left out and counted in `excluded`.
    """
    if args:
        raise TypeError(
            "verifier_vs_reference takes its labels by name: y_true= (the reference, e.g. "
            "human labels) and y_pred= (the verifier), as scikit-learn names them"
        )
    if y_true is None or y_pred is None:
        raise TypeError("verifier_vs_reference needs y_true= and y_pred=")
    if labels is not None:
        if mode is not None:
            raise ValueError("mode names a rule for our verdict labels; with labels= use collapse=")
        return classification_scores(
            y_true=y_true,
            y_pred=y_pred,
            labels=labels,
            collapse=collapse,
            exclude=() if exclude is None else exclude,
            beta=beta,
            units=units,
            name="custom" if collapse else "as labelled",
        )
    if mode not in (None, "binary", "ternary"):
        raise ValueError(f"mode must be 'binary' or 'ternary', not {mode!r}")
    name: str
    if collapse is None:
        rule: Mapping[Label, Label] = VERISCORE_BINARY if mode in (None, "binary") else {}
        name = mode or "binary"
    else:
        rule, name = collapse, mode or "custom"
    kinds = [SUPPORTED, UNSUPPORTED, CONTRADICTED, INCONCLUSIVE]
    image = [rule.get(k, k) for k in kinds if k != UNSUPPORTED or k in rule.values()]
    verdict_labels = tuple(dict.fromkeys(image))
    true = [_verdict(x, rule, verdict_labels) for x in y_true]
    pred = [_verdict(x, rule, verdict_labels) for x in y_pred]
    return classification_scores(
        y_true=true,
        y_pred=pred,
        labels=verdict_labels,
        exclude=(IRRELEVANT,) if exclude is None else exclude,
        beta=beta,
        units=units,
        name=name,
    )


def _verdict(
    label: Label | None, rule: Mapping[Label, Label], labels: tuple[Label, ...]
) -> Label | None:
    if is_missing(label):
        return None
    try:
        canonical = normalise_verdict(label if isinstance(label, str) else str(label))
    except ValueError as error:
        raise ValueError(
            f"{error}; to score another label set, pass it as labels=[...] (and a collapse= "
            "mapping if some labels count as others)"
        ) from None
    if canonical is None or canonical == IRRELEVANT:
        return canonical
    value = rule.get(canonical, canonical)
    if value not in labels:
        raise ValueError(
            f"{label!r} is a binary label: it does not say contradicted or inconclusive; "
            "use mode='binary'"
            if canonical == UNSUPPORTED
            else f"{label!r} is not one of the labels {list(labels)}"
        )
    return value


def response_labels(
    segment_labels: Sequence[str | None], response_ids: Sequence[Hashable], *, mode: Mode = "binary"
) -> dict[Hashable, str | None]:
    """Response-level labels from segment labels, as FELM scores responses.

    A response is unsupported when any of its segments is; supported when every
    segment is; None (no usable label) otherwise. Binary mode only: a response with
    one contradicted and one inconclusive segment has no single ternary label.
    """
    if mode != "binary":
        raise ValueError("response-level labels are binary: a response is right or has an error")
    if len(segment_labels) != len(response_ids):
        raise ValueError(f"{len(segment_labels)} labels for {len(response_ids)} response ids")
    grouped: dict[Hashable, list[str | None]] = {}
    for label, response in zip(segment_labels, response_ids, strict=True):
        grouped.setdefault(response, []).append(normalise_verdict(label, mode="binary"))
    result: dict[Hashable, str | None] = {}
    for response, labels in grouped.items():
        scored = [label for label in labels if label != IRRELEVANT]
        if UNSUPPORTED in scored:
            result[response] = UNSUPPORTED
        elif scored and all(label == SUPPORTED for label in scored):
            result[response] = SUPPORTED
        else:
            result[response] = None
    return result


# --------------------------------------------------------------------------- McNemar


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test between two verifiers scored against the same reference.

    `only_a_correct` and `only_b_correct` are the discordant pairs. `method` is
    "exact" (binomial, used below 25 discordant pairs) or "chi-square" (without
    continuity correction unless asked).
    """

    n: int
    both_correct: int
    only_a_correct: int
    only_b_correct: int
    both_wrong: int
    excluded: int
    method: str | None
    statistic: float | None
    p_value: float | None
    undefined_reason: str | None = None


def mcnemar_test(
    pred_a: Sequence[str | None],
    pred_b: Sequence[str | None],
    ref: Sequence[str | None],
    *,
    mode: Mode = "binary",
    exact: bool | None = None,
    correction: bool = False,
    collapse: Mapping[Label, Label] | None = None,
) -> McNemarResult:
    """`collapse`, when given, replaces `mode`'s rule (as in `verifier_vs_reference`)."""
    if not len(pred_a) == len(pred_b) == len(ref):
        raise ValueError("pred_a, pred_b and ref must have the same length")
    table = np.zeros((2, 2), dtype=np.int64)
    excluded = 0

    def verdict(label: str | None) -> Label | None:
        if collapse is None:
            return normalise_verdict(label, mode=mode)
        canonical = normalise_verdict(label)
        return None if canonical is None else collapse.get(canonical, canonical)

    for a_raw, b_raw, r_raw in zip(pred_a, pred_b, ref, strict=True):
        a, b, r = (verdict(x) for x in (a_raw, b_raw, r_raw))
        if a is None or b is None or r is None or IRRELEVANT in (a, b, r):
            excluded += 1
            continue
        table[int(a != r), int(b != r)] += 1
    n = int(table.sum())

    def result(
        method: str | None, statistic: float | None, p_value: float | None, reason: str | None
    ) -> McNemarResult:
        return McNemarResult(
            n=n,
            both_correct=int(table[0, 0]),
            only_a_correct=int(table[0, 1]),
            only_b_correct=int(table[1, 0]),
            both_wrong=int(table[1, 1]),
            excluded=excluded,
            method=method,
            statistic=statistic,
            p_value=p_value,
            undefined_reason=reason,
        )

    if not n:
        return result(
            None, None, None, "no unit has usable labels from both verifiers and the reference"
        )
    discordant = int(table[0, 1] + table[1, 0])
    use_exact = discordant < MCNEMAR_EXACT_BELOW if exact is None else exact
    if not use_exact and not discordant:
        return result(
            "chi-square",
            None,
            None,
            "no discordant pairs: the chi-square statistic is 0/0 (use the exact test)",
        )
    test = mcnemar(table, exact=use_exact, correction=correction)
    return result(
        "exact" if use_exact else "chi-square", float(test.statistic), float(test.pvalue), None
    )


# --------------------------------------------------------------------------- preference


class PreferenceRow(NamedTuple):
    domain: str
    winner: str
    loser: str
    hard: bool
    winner_position: int


@dataclass(frozen=True)
class PreferenceCell:
    """How often each of two systems was preferred, in one domain or (domain None) all.

    Strong = the annotator did not find it hard to decide; slight = hard to decide.
    `p_value` is the two-sided exact binomial test of a_wins out of n against 0.5.
    """

    system_a: str
    system_b: str
    domain: str | None
    n: int
    a_wins: int
    b_wins: int
    a_strong: int
    a_slight: int
    b_strong: int
    b_slight: int
    a_rate: float
    b_rate: float
    p_value: float


@dataclass(frozen=True)
class PositionBias:
    """How often the system shown as List 1 won, tested against 0.5 (two-sided)."""

    domain: str | None
    n: int
    list1_wins: int
    rate: float
    p_value: float


@dataclass(frozen=True)
class PreferenceReport:
    cells: tuple[PreferenceCell, ...]
    position_bias: tuple[PositionBias, ...]

    def cell(self, system_a: str, system_b: str, domain: str | None = None) -> PreferenceCell:
        for cell in self.cells:
            if {cell.system_a, cell.system_b} == {system_a, system_b} and cell.domain == domain:
                return cell
        raise KeyError((system_a, system_b, domain))


def preference(rows: Iterable[tuple[str, str, str, bool, int]]) -> PreferenceReport:
    """Pairwise preferences from (domain, winner, loser, hard, winner_position) rows."""
    parsed = [PreferenceRow(*row) for row in rows]
    for row in parsed:
        if row.winner == row.loser:
            raise ValueError(f"a system cannot be preferred over itself: {row}")
        if not isinstance(row.hard, bool):
            raise ValueError(f"hard must be True or False, not {row.hard!r}")
        if row.winner_position not in (1, 2):
            raise ValueError(f"winner_position must be 1 or 2, not {row.winner_position!r}")
    domains = sorted({row.domain for row in parsed})
    pairs = sorted({tuple(sorted((row.winner, row.loser))) for row in parsed})
    cells = []
    for system_a, system_b in pairs:
        in_pair = [row for row in parsed if {row.winner, row.loser} == {system_a, system_b}]
        for domain in [None, *domains]:
            subset = [row for row in in_pair if domain is None or row.domain == domain]
            if subset:
                cells.append(_preference_cell(system_a, system_b, domain, subset))
    bias = []
    for domain in [None, *domains]:
        subset = [row for row in parsed if domain is None or row.domain == domain]
        if subset:
            wins = sum(row.winner_position == 1 for row in subset)
            bias.append(
                PositionBias(
                    domain,
                    len(subset),
                    wins,
                    wins / len(subset),
                    float(scipy_stats.binomtest(wins, len(subset), 0.5).pvalue),
                )
            )
    return PreferenceReport(tuple(cells), tuple(bias))


def _preference_cell(
    system_a: str, system_b: str, domain: str | None, rows: list[PreferenceRow]
) -> PreferenceCell:
    def count(system: str, hard: bool) -> int:
        return sum(row.winner == system and row.hard == hard for row in rows)

    n = len(rows)
    a_wins = sum(row.winner == system_a for row in rows)
    return PreferenceCell(
        system_a=system_a,
        system_b=system_b,
        domain=domain,
        n=n,
        a_wins=a_wins,
        b_wins=n - a_wins,
        a_strong=count(system_a, False),
        a_slight=count(system_a, True),
        b_strong=count(system_b, False),
        b_slight=count(system_b, True),
        a_rate=a_wins / n,
        b_rate=(n - a_wins) / n,
        p_value=float(scipy_stats.binomtest(a_wins, n, 0.5).pvalue),
    )


# --------------------------------------------------------------------------- ranking


@dataclass(frozen=True)
class KendallTau:
    tau: float | None
    p_value: float | None
    n: int
    undefined_reason: str | None = None


def kendall_tau(
    a: Sequence[float] | Mapping[Hashable, float], b: Sequence[float] | Mapping[Hashable, float]
) -> KendallTau:
    """Kendall's tau-b (scipy) between two scorings; mappings are matched on shared keys."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = [key for key in a if key in b]
        x, y = [a[k] for k in keys], [b[k] for k in keys]
    elif isinstance(a, Mapping) or isinstance(b, Mapping):
        raise TypeError("pass two mappings or two sequences")
    else:
        if len(a) != len(b):
            raise ValueError(f"{len(a)} scores against {len(b)}")
        x, y = list(a), list(b)
    n = len(x)
    if n < 2:
        return KendallTau(None, None, n, f"{n} item(s) in common; a ranking needs at least 2")
    if len(set(x)) == 1 or len(set(y)) == 1:
        return KendallTau(None, None, n, "one of the scorings gives every item the same value")
    result = scipy_stats.kendalltau(x, y)
    return KendallTau(float(result.statistic), float(result.pvalue), n)
