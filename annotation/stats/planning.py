"""Planning a study (docs/researchers/planning.md, kappasize.md): units needed for a target
95 % interval half-width of Fleiss' kappa, Krippendorff's alpha and Gwet's AC1, the R
package kappaSize's closed forms, comparisons for a preference test, and the budget. No
Django.

Units are count vectors ("patterns") with a probability each: the pilot's own units, or the
common-correlation model (Rotondi & Donner 2012, kappaSize's model for two categories): with
probability kappa every annotator gives the same category, drawn from the shares, else each
draws one from the shares independently; its Fleiss' kappa is kappa for any number of
annotators (exchangeable annotators, agreement not changing with their number).
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import optimize
from scipy import stats as scipy_stats
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import proportion_effectsize

from .inter_rater import nominal_coefficients

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

COEFFICIENTS = {"fleiss": "Fleiss' kappa", "alpha": "Krippendorff's alpha", "ac1": "Gwet's AC1"}
MAX_UNITS = 100_000


@dataclass(frozen=True)
class UnitModel:
    """Per-unit count vectors (P, q) and the probability of each (P,)."""

    patterns: IntArray
    probs: FloatArray

    @classmethod
    def observed(cls, counts: Sequence[Sequence[int]]) -> UnitModel:
        """The pilot's units as they are: each distinct count vector at its frequency."""
        rows = [tuple(int(c) for c in row) for row in counts if sum(row) >= 2]
        if not rows:
            raise ValueError("the pilot has no unit with two or more answers")
        distinct = sorted(set(rows))
        freq = np.array([rows.count(r) for r in distinct], dtype=np.float64)
        return cls(np.array(distinct, dtype=np.int64), freq / freq.sum())

    @classmethod
    def common_correlation(cls, kappa: float, shares: Sequence[float], raters: int) -> UnitModel:
        shares_ = _check_shares(shares)
        if not 0 <= kappa < 1:
            raise ValueError(f"the model needs 0 <= kappa < 1, got {kappa}")
        if raters < 2:
            raise ValueError(f"at least 2 annotators per unit, got {raters}")
        patterns = np.array(_compositions(raters, len(shares_)), dtype=np.int64)
        independent = scipy_stats.multinomial.pmf(patterns, raters, shares_)
        together = np.array(
            [shares_[int(np.argmax(p))] if p.max() == raters else 0.0 for p in patterns]
        )
        return cls(patterns, (1 - kappa) * independent + kappa * together)


def _check_shares(shares: Sequence[float]) -> FloatArray:
    arr = np.asarray(shares, dtype=np.float64)
    if len(arr) < 2 or (arr <= 0).any() or abs(arr.sum() - 1) > 1e-6:
        raise ValueError(
            f"category shares must be 2 or more positive numbers summing to 1: {shares}"
        )
    return np.asarray(arr / arr.sum(), dtype=np.float64)


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    return [c for c in itertools.product(range(total + 1), repeat=parts) if sum(c) == total]


def category_shares(counts: Sequence[Sequence[int]]) -> list[float]:
    """Each category's share of all answers (every category kept, a small floor for 0)."""
    totals = np.asarray(counts, dtype=np.float64).sum(axis=0)
    totals = np.maximum(totals, 1e-3 * max(totals.sum(), 1.0))
    return [float(t) for t in totals / totals.sum()]


# --------------------------------------------------------------------------- CI widths


def study_halfwidths(
    model: UnitModel,
    n: int,
    *,
    studies: int = 200,
    bootstrap: int = 0,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> dict[str, FloatArray]:
    """Half-widths of the intervals of `studies` simulated studies of n units (inf where
    undefined): with `bootstrap` resamples, the percentile interval of a bootstrap of each
    study's units, as the report computes it; with 0, z times the jackknife standard error
    of each study's units (`_jackknife_halfwidths`)."""
    draws = rng.multinomial(n, model.probs, size=studies)  # (S, P)
    if not bootstrap:
        return _jackknife_halfwidths(model, draws, confidence)
    inner = rng.multinomial(n, draws / n, size=(bootstrap, studies))  # (B, S, P)
    values = nominal_coefficients(
        model.patterns, inner.transpose(1, 0, 2).reshape(-1, len(draws[0]))
    )
    tail = (1 - confidence) / 2
    out = {}
    for key in COEFFICIENTS:
        v = values[key].reshape(studies, bootstrap)
        if np.isnan(v).any():
            with warnings.catch_warnings():  # a study whose resamples are all undefined
                warnings.simplefilter("ignore", RuntimeWarning)
                lo, hi = np.nanquantile(v, [tail, 1 - tail], axis=1)
        else:
            lo, hi = np.quantile(v, [tail, 1 - tail], axis=1)
        out[key] = np.where(np.isfinite(hi - lo), (hi - lo) / 2, np.inf)
    return out


def _jackknife_halfwidths(
    model: UnitModel, draws: IntArray, confidence: float
) -> dict[str, FloatArray]:
    """z x the jackknife standard error of each study (a row of pattern counts w, n units):
    the coefficient with one unit of pattern p left out, theta_p, for every p at once (one
    row per pattern), and var = (n-1)/n sum_p w_p (theta_p - mean)^2 (Efron & Stein 1981;
    the delete-one jackknife over units)."""
    studies, patterns = draws.shape
    n = draws.sum(axis=1)
    left_out = draws[:, np.newaxis, :] - np.eye(patterns, dtype=np.int64)  # (S, P, P)
    values = nominal_coefficients(model.patterns, left_out.reshape(-1, patterns))
    z = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
    weights = draws.astype(np.float64)
    out = {}
    with np.errstate(invalid="ignore"):
        for key in COEFFICIENTS:
            theta = np.where(draws > 0, values[key].reshape(studies, patterns), 0.0)
            mean = (weights * theta).sum(axis=1) / n
            var = (n - 1) / n * (weights * (theta - mean[:, np.newaxis]) ** 2).sum(axis=1)
            width = z * np.sqrt(var)
            out[key] = np.where(np.isfinite(width), width, np.inf)
    return out


@dataclass(frozen=True)
class UnitsNeeded:
    units: int | None  # None: not reachable below MAX_UNITS
    halfwidth: float | None  # the half-width the required share of studies reach at `units`


def units_needed(
    model: UnitModel,
    target: float,
    *,
    assurance: float = 0.9,
    studies: int = 200,
    bootstrap: int = 0,
    seed: int = 0,
    start: int = 100,
) -> dict[str, UnitsNeeded]:
    """Smallest n (to about 2 %) whose studies reach half-width <= target in at least
    `assurance` of runs (with 95 % confidence over the simulated studies), per coefficient.
    Half-widths shrink like 1/sqrt(n): guess from that, check each guess by simulation and
    step up until it holds, then come down: to just under the size the 1/sqrt(n) law
    predicts from the last size that held, bisecting once a guess fails. Each size is
    simulated once (the three coefficients share it)."""
    if not 0 < target < 1:
        raise ValueError(f"the target half-width must lie in (0, 1), got {target}")

    # How many of the simulated studies must reach the target: enough that the share of
    # all studies reaching it is >= assurance with 95 % confidence (Clopper-Pearson).
    k = np.arange(1, studies + 1)
    confident = scipy_stats.beta.ppf(0.05, k, studies - k + 1) >= assurance
    reaching = int(k[confident][0]) if confident.any() else studies
    cache: dict[int, dict[str, float]] = {}

    def quantile_at(n: int) -> dict[str, float]:
        if n not in cache:
            rng = np.random.default_rng(seed)
            widths = study_halfwidths(model, n, studies=studies, bootstrap=bootstrap, rng=rng)
            cache[n] = {k: float(np.sort(w)[reaching - 1]) for k, w in widths.items()}
        return cache[n]

    def near(probe: int, low: int, high: int) -> int:
        """A size already simulated within 2 % of `probe` in (low, high), else `probe`."""
        known = [m for m in cache if low < m < high and abs(m - probe) <= 0.02 * probe]
        return min(known, key=lambda m: abs(m - probe)) if known else probe

    result = {}
    quantile_at(start)
    for key in COEFFICIENTS:
        # start from what the other coefficients' searches simulated: the smallest size
        # that held, and the largest one below it that did not
        held = [m for m, w in cache.items() if w[key] <= target]
        n = min(held) if held else max(cache)
        width = cache[n][key]
        fails = max([m for m in cache if m < n and cache[m][key] > target], default=9)
        while width > target:
            fails = n
            grown = n * (width / target) ** 2 * 1.02 if math.isfinite(width) else n * 4
            n = max(n + 1, math.ceil(grown))
            if n > MAX_UNITS:
                break
            width = quantile_at(n)[key]
        if width > target:
            result[key] = UnitsNeeded(None, None)
            continue
        law = True  # the next guess from the 1/sqrt(n) law (after a size that held)
        while n - fails > max(1, 0.02 * n):  # down to about 2 %
            mid = (fails + n) // 2
            if law:
                guess = math.floor(n * (width / target) ** 2 * 0.99)
                mid = guess if fails < guess < n else mid
            mid = near(mid, fails, n)
            if quantile_at(mid)[key] <= target:
                n, width, law = mid, quantile_at(mid)[key], True
            else:
                fails, law = mid, False
        result[key] = UnitsNeeded(n, width)
    return result


# --------------------------------------------------------------------------- kappaSize
# The R package kappaSize's three families (Rotondi & Donner 2012; Donner & Eliasziw 1992):
# each compares the cells of `rotondi_donner_cells` at two values of kappa by the
# goodness-of-fit chi-square with 1 degree of freedom (`goodness_of_fit`).


def rotondi_donner_cells(kappa: float, shares: Sequence[float], raters: int) -> FloatArray:
    """The cell probabilities kappaSize uses: with two categories the count of the first
    category (0..raters) under the common-correlation model (CIBinary); with three or
    more, "all annotators chose category j" for each j under the Dirichlet-multinomial
    model with intraclass correlation kappa, and one cell for the rest (CI3Cats...)."""
    shares_ = _check_shares(shares)
    if len(shares_) == 2:
        model = UnitModel.common_correlation(kappa, list(shares_), raters)
        cells = np.zeros(raters + 1)
        for pattern, prob in zip(model.patterns, model.probs, strict=True):
            cells[pattern[0]] += prob
        return cells
    steps = np.arange(raters)
    together = np.array(
        [np.prod((p * (1 - kappa) + steps * kappa) / (1 - kappa + steps * kappa)) for p in shares_]
    )
    return np.append(together, 1 - together.sum())


def goodness_of_fit(
    kappa_at: float, kappa_of: float, shares: Sequence[float], raters: int
) -> float:
    """sum_l (P_l(kappa_of) - P_l(kappa_at))^2 / P_l(kappa_at): the chi-square per subject
    between the cells at two values of kappa, the denominator at `kappa_at`."""
    at = rotondi_donner_cells(kappa_at, shares, raters)
    of = rotondi_donner_cells(kappa_of, shares, raters)
    return float(np.sum((of - at) ** 2 / at))


KAPPASIZE_RATERS = (2, 3, 4, 5, 6)
KAPPASIZE_CATEGORIES = (2, 3, 4, 5)
KAPPASIZE_FAMILIES = ("ci", "power", "fixedn")


def kappasize_name(family: str, categories: int) -> str:
    """kappaSize's function for a family and a number of categories: CIBinary, Power3Cats..."""
    stem = {"ci": "CI", "power": "Power", "fixedn": "FixedN"}[family]
    return stem + ("Binary" if categories == 2 else f"{categories}Cats")


def _kappasize_design(shares: Sequence[float], raters: int, **kappas: float | None) -> None:
    categories = len(_check_shares(shares))
    if categories not in KAPPASIZE_CATEGORIES:
        raise ValueError(f"kappaSize plans for 2 to 5 categories; {categories} shares were given")
    if raters not in KAPPASIZE_RATERS:
        raise ValueError(f"kappaSize plans for 2 to 6 raters, not {raters}")
    for name, value in kappas.items():
        if value is not None and not 0 < value < 1:
            raise ValueError(f"{name} must lie in (0, 1), got {value}")


def _critical(alpha: float, sided: int) -> float:
    """chi2(1 - alpha, 1) two-sided, chi2(1 - 2 alpha, 1) one-sided."""
    if sided not in (1, 2):
        raise ValueError(f"sided must be 1 or 2, not {sided}")
    if not 0 < alpha < (0.5 if sided == 1 else 1):
        raise ValueError(f"alpha must lie in (0, {0.5 if sided == 1 else 1}), got {alpha}")
    return float(scipy_stats.chi2.ppf(1 - alpha if sided == 2 else 1 - 2 * alpha, 1))


def kappasize_ci(
    kappa0: float,
    kappa_low: float,
    kappa_high: float | None,
    shares: Sequence[float],
    raters: int,
    alpha: float = 0.05,
) -> int:
    """kappaSize's CIBinary / CI3Cats / CI4Cats / CI5Cats(kappa0, kappaL, kappaU, props,
    raters, alpha): Rotondi & Donner's (2012) goodness-of-fit sample size for the expected
    interval, the smallest n from 11 at which n `goodness_of_fit(limit, kappa0)` reaches
    the critical value at each limit; `kappa_high` None is the one-sided kappaU = NA."""
    _kappasize_design(shares, raters, kappa0=kappa0, kappaL=kappa_low, kappaU=kappa_high)
    if not kappa_low < kappa0 or (kappa_high is not None and not kappa0 < kappa_high):
        raise ValueError(f"need kappaL < kappa0 < kappaU, got {kappa_low}, {kappa0}, {kappa_high}")
    crit = _critical(alpha, 1 if kappa_high is None else 2)
    needed = [
        (crit + 0.001) / goodness_of_fit(limit, kappa0, shares, raters)
        for limit in (kappa_low, kappa_high)
        if limit is not None
    ]
    return max(11, math.ceil(max(needed) - 1e-9))


@dataclass(frozen=True)
class KappaSizePower:
    n: int  # subjects: ceil(n_exact), the integer a study enrols
    n_exact: float  # kappaSize's N (e.g. 73.26)
    noncentrality: float  # lambda (7.8489 for alpha 0.05 two-sided, power 0.8)


def kappasize_power(
    kappa0: float,
    kappa1: float,
    shares: Sequence[float],
    raters: int,
    alpha: float = 0.05,
    power: float = 0.8,
    sided: int = 2,
) -> KappaSizePower:
    """kappaSize's PowerBinary / Power3Cats / Power4Cats / Power5Cats(kappa0, kappa1, props,
    raters, alpha, power): subjects needed to reject kappa = kappa0 with `power` when kappa
    is kappa1 (Donner & Eliasziw 1992): n = lambda / `goodness_of_fit(kappa0, kappa1)`,
    lambda the non-centrality at which a non-central chi-square (1 df) exceeds the critical
    value with probability `power` (kappaSize's test is two-sided, `sided=2`)."""
    _kappasize_design(shares, raters, kappa0=kappa0, kappa1=kappa1)
    if kappa0 == kappa1:
        raise ValueError("kappa1 must differ from kappa0")
    if not 0 < power < 1:
        raise ValueError(f"power must lie in (0, 1), got {power}")
    crit = _critical(alpha, sided)
    high = 1.0  # P(chi2_1(lambda) > crit) grows with lambda
    while scipy_stats.ncx2.sf(crit, 1, high) < power:
        high *= 2
    lam = float(
        optimize.brentq(
            lambda x: scipy_stats.ncx2.sf(crit, 1, x) - power, 0.0, high, xtol=1e-13, rtol=1e-15
        )
    )
    exact = lam / goodness_of_fit(kappa0, kappa1, shares, raters)
    return KappaSizePower(math.ceil(exact - 1e-9), exact, lam)


@dataclass(frozen=True)
class KappaSizeFixedN:
    kappa_low: float | None  # kappaSize's kappaL: the exact limit floored to 0.001
    kappa_low_exact: float | None  # None: the limit lies at or below 0


def kappasize_fixed_n(
    kappa0: float,
    n: int,
    shares: Sequence[float],
    raters: int,
    alpha: float = 0.05,
    sided: int = 1,
) -> KappaSizeFixedN:
    """kappaSize's FixedNBinary / FixedN3Cats / FixedN4Cats / FixedN5Cats(kappa0, n, props,
    raters, alpha): the expected lower limit of a one-sided 100(1 - alpha) % interval for
    kappa from n subjects (`sided=2`: two-sided, not a kappaSize option), the kappaL at
    which n `goodness_of_fit(kappaL, kappa0)` reaches the critical value, floored to 0.001
    as kappaSize prints it (0.0629668 -> 0.062). kappaSize needs n > 10."""
    _kappasize_design(shares, raters, kappa0=kappa0)
    if n <= 10:
        raise ValueError(f"kappaSize needs more than 10 subjects, got {n}")
    crit = _critical(alpha, sided)

    def excess(limit: float) -> float:
        return n * goodness_of_fit(limit, kappa0, shares, raters) - crit

    floor = 1e-12
    if excess(floor) < 0:
        return KappaSizeFixedN(None, None)
    exact = float(optimize.brentq(excess, floor, kappa0, xtol=1e-15, rtol=1e-15))
    return KappaSizeFixedN(math.floor(exact * 1000 + 1e-9) / 1000, exact)


# --------------------------------------------------------------------------- preference


def preference_comparisons(
    share: float = 0.6, null: float = 0.5, *, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Comparisons needed for a two-sided one-sample test that the preference share is
    `null`, to detect `share` with `power` (normal approximation on Cohen's h, statsmodels'
    NormalIndPower with ratio 0, its one-sample case)."""
    if not (0 < share < 1 and 0 < null < 1) or share == null:
        raise ValueError(f"need 0 < share, null < 1 and share != null, got {share}, {null}")
    effect = proportion_effectsize(share, null)
    n = NormalIndPower().solve_power(
        effect_size=abs(effect), alpha=alpha, power=power, ratio=0, alternative="two-sided"
    )
    return math.ceil(float(n))


# --------------------------------------------------------------------------- budget


@dataclass(frozen=True)
class Budget:
    answers: int  # regular answers: units x annotators
    check_answers: int  # known-answer checks mixed into the queues
    training_answers: int  # training items, once per annotator
    hours: float
    cost: float | None  # None without a rate


def budget(
    units: int,
    annotators: int,
    *,
    seconds_per_item: float,
    hourly_rate: float | None,
    check_rate: float = 0.0,
    training_items: int = 0,
    per_item_rate: float = 0.0,
) -> Budget:
    """units x annotators answers at the pilot's median active time, plus the checks
    (check_rate is their share of a queue) and each annotator's training items."""
    if not 0 <= check_rate < 1:
        raise ValueError(f"check rate must lie in [0, 1), got {check_rate}")
    answers = units * annotators
    checks = math.ceil(answers * check_rate / (1 - check_rate))
    training = training_items * annotators
    total = answers + checks + training
    hours = total * seconds_per_item / 3600
    cost = None if hourly_rate is None else hours * hourly_rate + total * per_item_rate
    return Budget(answers, checks, training, hours, cost)
