"""Study planning (annotation/stats/planning.py) against published values and simulation.

Published values:
- one-sample proportion, normal approximation, p0 0.5, p1 0.6, alpha 0.05 two-sided,
  power 0.8: 194 comparisons (e.g. Chow, Shao & Wang, Sample Size Calculations in
  Clinical Research, one-sample proportion; ((1.96*0.5 + 0.8416*sqrt(0.24)) / 0.1)^2 =
  193.9);
- kappaSize (Rotondi & Donner 2012, R package, version 1.1): the cell probabilities of
  CIBinary (2-6 raters) and CI3Cats (3 and 4 raters) are transcribed from its source
  (R/CIBinary.R, R/CI3Cats.R) and compared with ours to 1e-12; the documented examples
  `CIBinary(kappa0=0.4, kappaL=0.3, kappaU=0.5, props=0.30)` and
  `CI3Cats(kappa0=0.4, kappaL=0.3, kappaU=0.6, props=c(0.30, 0.2, 0.5), raters=3)`
  print no value in the documentation, so their n is computed with the package's own
  stopping rule (ported in `kappasize_ci`) and our bootstrap planner is compared
  with it within 30 % (different interval methods: goodness-of-fit vs percentile);
- kappaSize's printed n for other inputs, exactly (tolerance 0), from the jamovi module
  that wraps it (sbalci/ClinicoPathJamoviModule, tests/testthat/test-kappasizeci-release-
  review.R at commit dfb5190f4f63 and tests/testthat/test-kappasizeci.R at commit
  1c7ffd500c69; its wrapper returns `kappaSize::CIBinary(...)$n` / `CI3Cats` / `CI5Cats`
  unchanged, the release review's first test compares the two): 17 designs listed in
  PUBLISHED below, two categories with 2, 5 and 6 raters (one of them one-sided), three
  categories with 2 raters, five categories with 2 raters. No printed CI3Cats n with 3 or
  more raters was found: the module's rendered article
  docs/articles/meddecide-07-kappasizeci-comprehensive.html (commit fb2b72e3a5e0) is built
  with `knitr::opts_chunk$set(eval = FALSE)` and prints no kappaSize output at all.
"""

from __future__ import annotations

import numpy as np
import pytest

from annotation import stats
from annotation.stats import planning


def test_one_sample_proportion_is_194():
    assert planning.preference_comparisons(0.6, 0.5, alpha=0.05, power=0.8) == 194


def test_preference_refuses_absurd_values():
    for share, null in ((0.5, 0.5), (1.2, 0.5), (0.6, 0.0)):
        with pytest.raises(ValueError):
            planning.preference_comparisons(share, null)


def _binary_cells_kappasize(r: float, p: float, raters: int) -> list[float]:
    """P0..Pm of kappaSize's CIBinary.R, term by term (p is the trait prevalence)."""
    if raters == 2:
        return [(1 - p) ** 2 + r * p * (1 - p), 2 * (1 - r) * p * (1 - p), p**2 + r * p * (1 - p)]
    if raters == 3:
        return [
            (1 - p) ** 3 + p * r * ((1 - p) ** 2 + (1 - p)),
            3 * p * (1 - r) * (1 - p) ** 2,
            3 * p**2 * (1 - p) * (1 - r),
            p**3 + r * p * (1 - p**2),
        ]
    if raters == 4:
        return [
            p**4
            - r * p**4
            - 4 * p**3
            + 4 * r * p**3
            + 6 * p**2
            - 6 * r * p**2
            - 4 * p
            + 3 * r * p
            + 1,
            (4 * (1 - 3 * p - r + 3 * r * p + 3 * p**2 - 3 * r * p**2 - p**3 + r * p**3)) * p,
            -(6 * (-1 + r + 2 * p - 2 * r * p - p**2 + r * p**2)) * p**2,
            (4 * (1 - r - p + r * p)) * p**3,
            -(-(p**3) - r + r * p**3) * p,
        ]
    assert raters == 6
    return [
        p**6
        - r * p**6
        + 6 * r * p**5
        - 6 * p**5
        - 15 * r * p**4
        + 15 * p**4
        + 20 * r * p**3
        - 20 * p**3
        - 15 * r * p**2
        + 15 * p**2
        + 5 * r * p
        - 6 * p
        + 1,
        (
            6
            * (
                1
                - 5 * p
                - r
                + 5 * r * p
                + 10 * p**2
                - 10 * r * p**2
                - 10 * p**3
                + 10 * r * p**3
                + 5 * p**4
                - 5 * r * p**4
                - p**5
                + r * p**5
            )
        )
        * p,
        -(
            15
            * (
                -1
                + r
                + 4 * p
                - 4 * r * p
                - 6 * p**2
                + 6 * r * p**2
                + 4 * p**3
                - 4 * r * p**3
                - p**4
                + r * p**4
            )
        )
        * p**2,
        (20 * (1 - r - 3 * p + 3 * r * p + 3 * p**2 - 3 * r * p**2 - p**3 + r * p**3)) * p**3,
        -(15 * (-1 + r + 2 * p - 2 * r * p - p**2 + r * p**2)) * p**4,
        (6 * (1 - r - p + r * p)) * p**5,
        -(-(p**5) - r + r * p**5) * p,
    ]


def _three_cat_together_kappasize(k: float, p: float, raters: int) -> float:
    """P1 (all raters chose the category of share p) of kappaSize's CI3Cats.R."""
    if raters == 3:
        num = p**2 + 3 * k * p - 2 * k * p**2 + 2 * k**2 - 3 * k**2 * p + k**2 * p**2
        return p**3 * (num / p**2) / (1 + k)
    assert raters == 4
    return (
        -p
        * (
            -(p**3)
            - 6 * k * p**2
            + 3 * k * p**3
            - 11 * k**2 * p
            + 12 * k**2 * p**2
            - 3 * k**2 * p**3
            - 6 * k**3
            + 11 * k**3 * p
            - 6 * k**3 * p**2
            + k**3 * p**3
        )
        / ((1 + k) * (1 + 2 * k))
    )


@pytest.mark.parametrize("raters", [2, 3, 4, 6])
@pytest.mark.parametrize("kappa", [0.0, 0.3, 0.75])
def test_binary_cells_are_kappasize_cibinary(raters, kappa):
    p = 0.3
    # kappaSize's P_k counts the trait (share p): our cells count the first category.
    ours = planning.rotondi_donner_cells(kappa, [p, 1 - p], raters)
    assert ours == pytest.approx(_binary_cells_kappasize(kappa, p, raters), abs=1e-12)


@pytest.mark.parametrize("raters", [3, 4])
def test_three_category_cells_are_kappasize_ci3cats(raters):
    shares = [0.3, 0.2, 0.5]
    ours = planning.rotondi_donner_cells(0.4, shares, raters)
    theirs = [_three_cat_together_kappasize(0.4, s, raters) for s in shares]
    assert ours[:3] == pytest.approx(theirs, abs=1e-12)
    assert ours.sum() == pytest.approx(1.0)


def test_documented_kappasize_examples():
    assert planning.kappasize_ci(0.4, 0.3, 0.5, [0.7, 0.3], raters=2) == 397
    assert planning.kappasize_ci(0.4, 0.3, 0.6, [0.3, 0.2, 0.5], raters=3) == 125


# kappaSize's printed n as the jamovi module that wraps it reports it, from
# sbalci/ClinicoPathJamoviModule: "review" is tests/testthat/test-kappasizeci-release-review.R
# at commit dfb5190f4f63875c2936d9682ed6c00cff9f09dc (the test named after each row),
# "basic" is tests/testthat/test-kappasizeci.R at commit
# 1c7ffd500c6942b05382c28431618e53aa51c72d. The wrapper hands kappaSize the proportions
# renormalised and, for two categories, the smaller first; our cells do not depend on the
# order (the last two rows of 5 and 6 raters are also run reversed below). Exact: both
# search the smallest n from 11 up, so no rounding rule is involved (the wrapper's ceiling()
# of an integer is the integer). High None is kappaSize's one-sided kappaU = NA.
PUBLISHED = [
    # (kappa0, low, high, shares, raters, n)  source: test
    (0.6, 0.55, 0.65, [0.2, 0.8], 2, 1625),  # review: the guard does not block ...
    (0.6, 0.55, 0.80, [0.2, 0.8], 2, 1625),  # review: ... interval width ...
    (0.6, 0.55, 0.99, [0.2, 0.8], 2, 1625),  # (the nearer limit decides)
    (0.6, 0.58, 0.62, [0.2, 0.8], 2, 9707),  # review: the guard does not block ...
    (0.6, 0.59, 0.61, [0.2, 0.8], 2, 38203),  # review: the guard does not block ...
    (0.6, 0.40, 0.80, [0.2, 0.8], 2, 118),  # review: the menu description ...
    (0.6, 0.595, 0.605, [0.2, 0.8], 2, 151533),  # review: a comment (1/distance^2)
    (0.6, 0.40, 0.80, [0.01, 0.04, 0.15, 0.30, 0.50], 2, 53),  # review: sparse-cell caveat
    (0.75, 0.60, 0.85, [0.2, 0.8], 2, 167),  # review: the limit that GOVERNS n
    (0.75, 0.60, 0.95, [0.2, 0.8], 2, 167),  # review: the limit that GOVERNS n
    (0.75, 0.70, 0.85, [0.2, 0.8], 2, 1212),  # review: the limit that GOVERNS n (comment)
    (0.6, 0.30, 0.80, [0.05, 0.95], 2, 181),  # review: the sparse notice quotes ...
    (0.6, 0.40, 0.80, [0.3, 0.7], 2, 94),  # basic: one-sided CI requires fewer subjects
    (0.6, 0.40, None, [0.3, 0.7], 2, 66),  # basic: one-sided CI requires fewer subjects
    # three categories (CI3Cats): props 0.9997/0.0002/0.0002 renormalised (their sum is
    # 1.0001), review: proportions are renormalised ... (the figure is in its comment)
    (0.9, 0.50, 0.95, [0.9997 / 1.0001, 0.0002 / 1.0001, 0.0002 / 1.0001], 2, 93636),
    # five and six raters (CIBinary), review: the proportion ORDER ... / the design that
    # used to hang ...
    (0.6, 0.40, 0.80, [0.0001, 0.9999], 5, 88673),
    (0.7, 0.60, 0.80, [0.001, 0.999], 6, 23073),
]


@pytest.mark.parametrize(("kappa0", "low", "high", "shares", "raters", "published"), PUBLISHED)
def test_published_kappasize_outputs(kappa0, low, high, shares, raters, published):
    """kappaSize's printed n, exactly (tolerance 0); sources in the comments above."""
    assert planning.kappasize_ci(kappa0, low, high, shares, raters) == published
    assert planning.kappasize_ci(kappa0, low, high, shares[::-1], raters) == published


def test_kappasize_unnormalised_shares_are_refused():
    """kappaSize accepts shares summing to 1 within 0.001 and uses them verbatim: for
    0.9997/0.0002/0.0002 (sum 1.0001) its lumped cell goes negative and it prints 215974
    where the valid design needs 93636 (review: proportions are renormalised ...). We refuse
    such shares with a clear error instead of reproducing that number."""
    with pytest.raises(ValueError, match="summing to 1"):
        planning.kappasize_ci(0.9, 0.5, 0.95, [0.9997, 0.0002, 0.0002], raters=2)


def test_model_has_the_kappa_it_was_given():
    for raters in (2, 3, 5):
        model = planning.UnitModel.common_correlation(0.6, [0.3, 0.7], raters)
        values = stats.nominal_coefficients(model.patterns, model.probs * 10_000)
        assert values["fleiss"][0] == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("shares", "raters"),
    [([0.7, 0.3], 2), ([0.7, 0.3], 3), ([0.7, 0.3], 4), ([0.7, 0.3], 6), ([0.3, 0.4, 0.3], 2)],
)
@pytest.mark.parametrize("bootstrap", [0, 200])
def test_bootstrap_planner_agrees_with_rotondi_donner(shares, raters, bootstrap):
    """Same model, same target (kappa 0.6, limits 0.4 and 0.8): n within 30 %, with the
    jackknife (the default) and with the percentile bootstrap."""
    published = planning.kappasize_ci(0.6, 0.4, 0.8, shares, raters)
    model = planning.UnitModel.common_correlation(0.6, shares, raters)
    ours = planning.units_needed(model, 0.2, assurance=0.5, studies=100, bootstrap=bootstrap)
    assert ours["fleiss"].units == pytest.approx(published, rel=0.3)


@pytest.mark.parametrize(
    ("shares", "raters"), [([0.7, 0.3], 3), ([0.3, 0.3, 0.2, 0.2], 3), ([0.5, 0.5], 2)]
)
def test_jackknife_sizes_are_within_8_percent_of_the_bootstrap_sizes(shares, raters):
    """The default interval of a simulated study (1.96 jackknife standard errors) against
    the report's own (percentile bootstrap, 300 resamples): measured 2-7 % fewer units."""
    model = planning.UnitModel.common_correlation(0.6, shares, raters)
    jackknife = planning.units_needed(model, 0.1, studies=100)
    bootstrap = planning.units_needed(model, 0.1, studies=100, bootstrap=300)
    for key in planning.COEFFICIENTS:
        assert jackknife[key].units == pytest.approx(bootstrap[key].units, rel=0.08)


def test_planned_study_reaches_the_target_in_90_percent_of_runs():
    """Studies of the size planned by default (the jackknife interval), simulated and
    analysed by the report's own `stats.agreement` (2,000 bootstrap resamples each), reach
    the target half-width (97 of 100 when measured)."""
    target = 0.15
    model = planning.UnitModel.common_correlation(0.55, [0.6, 0.4], 3)
    planned = planning.units_needed(model, target, seed=1)["fleiss"].units
    assert planned is not None
    rng = np.random.default_rng(12345)
    runs, reached = 100, 0
    for run in range(runs):
        draw = rng.multinomial(planned, model.probs)
        labels = []
        for pattern, count in zip(model.patterns, draw, strict=True):
            unit = [c for c, times in enumerate(pattern) for _ in range(times)]
            labels += [tuple(unit)] * int(count)
        ratings = stats.Ratings(
            units=tuple(range(len(labels))), raters=("a", "b", "c"), labels=tuple(labels)
        )
        result = stats.agreement(ratings, categories=[0, 1], bootstrap=2000, seed=run)
        kappa = result.fleiss_kappa
        assert kappa.ci_low is not None and kappa.ci_high is not None
        reached += (kappa.ci_high - kappa.ci_low) / 2 <= target
    assert reached >= 0.9 * runs


def test_pilot_units_are_resampled_as_they_are():
    counts = [[3, 0], [0, 3], [2, 1], [3, 0], [1, 2], [0, 3], [3, 0], [1, 1], [0, 1]]
    model = planning.UnitModel.observed(counts)
    assert model.probs.sum() == pytest.approx(1.0)
    assert [0, 1] not in model.patterns.tolist()  # a single answer cannot agree
    assert len(model.patterns) == 5
    with pytest.raises(ValueError, match="two or more"):
        planning.UnitModel.observed([[1, 0], [0, 1]])


def test_budget_adds_checks_and_training():
    plan = planning.budget(
        100, 3, seconds_per_item=60, hourly_rate=12.0, check_rate=0.1, training_items=5
    )
    assert (plan.answers, plan.check_answers, plan.training_answers) == (300, 34, 15)
    assert plan.hours == pytest.approx(349 / 60)
    assert plan.cost == pytest.approx(349 / 60 * 12)
    assert planning.budget(1, 2, seconds_per_item=1, hourly_rate=None).cost is None
    with pytest.raises(ValueError):
        planning.budget(1, 2, seconds_per_item=1, hourly_rate=1, check_rate=1.0)


def test_absurd_model_values_are_refused():
    with pytest.raises(ValueError, match="shares"):
        planning.UnitModel.common_correlation(0.5, [0.5, 0.6], 3)
    with pytest.raises(ValueError, match="kappa"):
        planning.UnitModel.common_correlation(1.0, [0.5, 0.5], 3)
    with pytest.raises(ValueError, match="target"):
        planning.units_needed(planning.UnitModel.common_correlation(0.5, [0.5, 0.5], 2), 0)


def test_a_pilot_where_everyone_agrees_on_one_label_reaches_no_size():
    """Kappa and alpha are undefined on one category: no size is claimed to reach the
    target; AC1 is defined (1, every interval of width 0)."""
    model = planning.UnitModel.observed([[3, 0]] * 10)
    needed = planning.units_needed(model, 0.1, studies=20, bootstrap=20)
    for key in ("fleiss", "alpha"):
        assert needed[key].units is None and needed[key].halfwidth is None
    assert needed["ac1"].halfwidth == 0


# --------------------------------------------------------------------------- kappaSize families
#
# kappaSize's printed outputs for the power and fixed-n families (R package kappaSize 1.2;
# documentation of PowerBinary, FixedNBinary, FixedN4Cats ... at
# rdocumentation.org/packages/kappaSize/versions/1.2: fixed n is "the expected lower bound of
# a one-sided confidence interval", n must exceed 10, 2 to 6 raters), as public files print
# them (found with the code index's find_string; their repository is not named by it, so
# each is cited by its stored file id and its own words):
# - file 70073128952 (a sample-size guide): "kappaSize::PowerBinary(kappa0 = 0.4, kappa1 =
#   0.7, props = 0.5, raters = 2, alpha = 0.05, power = 0.8), kappaSize 1.2 -> N = 73.26";
#   "pi 0.20 -> 107"; the non-centrality "7.849 at alpha 0.05, 80 %"; the same figures in
#   file 70288143363 ("Check: 0.70 vs 0.40, prevalence 0.50 -> 74; prevalence 0.20 -> 107").
# - file 6743292287 (an R script, "How many clinical reviewers do we need?"):
#   FixedNBinary(kappa0 = 0.70, n = 144, props = 0.50, alpha = 0.05) prints "a lower limit
#   for kappa of" 0.589 (2 raters), 0.617 (3), 0.626 (4), 0.63 (5).
# - file 70170815975 (the R source of a jamovi module's kappaSizeFixedN), "measured on
#   kappaSize::FixedNBinary, kappa0 = 0.30, props 0.30/0.70, 2 raters, alpha 0.05: 0.062 at
#   n = 50, 0.130 at n = 100, 0.224 at n = 500, 0.262 at n = 2000, 0.288 at n = 20000, 0.296
#   at n = 200000". The exact limits are 0.06297 and 0.13069: kappaSize reports the limit
#   on a grid of 0.001, the largest grid value at or below it (0.589 from 0.58925).
# No printed output of Power3Cats..Power5Cats or FixedN3Cats..FixedN5Cats was found: those
# are checked against the formulas to 1e-12 below.


@pytest.mark.parametrize(
    ("props", "n_exact", "n"), [([0.5, 0.5], 73.26, 74), ([0.2, 0.8], None, 107)]
)
def test_kappasize_power_binary_printed(props, n_exact, n):
    result = planning.kappasize_power(0.4, 0.7, props, raters=2, alpha=0.05, power=0.8)
    assert result.n == n
    if n_exact is not None:
        assert round(result.n_exact, 2) == n_exact
    assert round(result.noncentrality, 3) == 7.849


@pytest.mark.parametrize(("raters", "printed"), [(2, 0.589), (3, 0.617), (4, 0.626), (5, 0.63)])
def test_kappasize_fixed_n_binary_printed_by_raters(raters, printed):
    result = planning.kappasize_fixed_n(0.70, 144, [0.5, 0.5], raters, alpha=0.05)
    assert result.kappa_low == printed


@pytest.mark.parametrize(
    ("n", "printed"),
    [(50, 0.062), (100, 0.130), (500, 0.224), (2000, 0.262), (20000, 0.288), (200000, 0.296)],
)
def test_kappasize_fixed_n_binary_printed_by_n(n, printed):
    result = planning.kappasize_fixed_n(0.30, n, [0.3, 0.7], 2, alpha=0.05)
    assert result.kappa_low == printed
    assert result.kappa_low_exact is not None and printed <= result.kappa_low_exact < printed + 1e-3


def _cells_by_formula(kappa: float, shares: list[float], raters: int) -> list[float]:
    """Rotondi & Donner (2012): with three or more categories, P(all raters chose j) under
    the Dirichlet-multinomial with intraclass correlation kappa, prod_{s<m} (p_j (1 - k) +
    s k) / (1 - k + s k), and one cell for every other outcome."""
    together = []
    for p in shares:
        value = 1.0
        for s in range(raters):
            value *= (p * (1 - kappa) + s * kappa) / (1 - kappa + s * kappa)
        together.append(value)
    return [*together, 1 - sum(together)]


@pytest.mark.parametrize(
    "shares", [[0.2, 0.3, 0.5], [0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.2, 0.25, 0.25]]
)
@pytest.mark.parametrize("raters", [2, 3, 6])
def test_kappasize_power_and_fixed_n_multicategory_formulas(shares, raters):
    """Power3Cats..Power5Cats and FixedN3Cats..FixedN5Cats against the formulas, to 1e-12."""
    from scipy import stats as scipy_stats

    p0 = np.array(_cells_by_formula(0.4, shares, raters))
    p1 = np.array(_cells_by_formula(0.6, shares, raters))
    x2 = float(np.sum((p1 - p0) ** 2 / p0))
    crit = scipy_stats.chi2.ppf(0.95, 1)
    power = planning.kappasize_power(0.4, 0.6, shares, raters, alpha=0.05, power=0.8)
    # lambda: the non-central chi-square (1 df) exceeds crit with probability 0.8
    assert scipy_stats.ncx2.sf(crit, 1, power.noncentrality) == pytest.approx(0.8, abs=1e-12)
    assert power.n_exact == pytest.approx(power.noncentrality / x2, rel=1e-12)
    assert power.n == int(np.ceil(power.n_exact))
    fixed = planning.kappasize_fixed_n(0.6, 200, shares, raters, alpha=0.05)
    assert fixed.kappa_low_exact is not None
    pl = np.array(_cells_by_formula(fixed.kappa_low_exact, shares, raters))
    p6 = np.array(_cells_by_formula(0.6, shares, raters))
    one_sided = scipy_stats.chi2.ppf(0.90, 1)
    assert 200 * np.sum((p6 - pl) ** 2 / pl) == pytest.approx(one_sided, abs=1e-9)
    assert fixed.kappa_low == np.floor(fixed.kappa_low_exact * 1000) / 1000


def test_kappasize_one_sided_power_and_two_sided_fixed_n():
    two = planning.kappasize_power(0.4, 0.6, [0.3, 0.7], 2)
    one = planning.kappasize_power(0.4, 0.6, [0.3, 0.7], 2, sided=1)
    assert one.n < two.n
    wide = planning.kappasize_fixed_n(0.6, 100, [0.3, 0.7], 2, sided=2)
    narrow = planning.kappasize_fixed_n(0.6, 100, [0.3, 0.7], 2, sided=1)
    assert wide.kappa_low_exact < narrow.kappa_low_exact


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: planning.kappasize_power(0.4, 0.6, [0.3, 0.7], 7), "2 to 6 raters"),
        (lambda: planning.kappasize_power(0.4, 0.6, [0.2] * 5 + [0.0], 2), "positive"),
        (lambda: planning.kappasize_power(0.4, 0.6, [1 / 6] * 6, 2), "2 to 5 categories"),
        (lambda: planning.kappasize_power(0.4, 0.4, [0.3, 0.7], 2), "differ"),
        (lambda: planning.kappasize_power(0.4, 1.0, [0.3, 0.7], 2), r"\(0, 1\)"),
        (lambda: planning.kappasize_fixed_n(0.6, 10, [0.3, 0.7], 2), "more than 10"),
        (lambda: planning.kappasize_fixed_n(0.6, 50, [0.3, 0.7], 2, alpha=0.6), "alpha"),
        (lambda: planning.kappasize_ci(0.6, 0.7, 0.8, [0.3, 0.7], 2), "kappaL < kappa0"),
    ],
)
def test_kappasize_refuses_designs_outside_its_range(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_kappasize_fixed_n_below_zero_is_none():
    assert planning.kappasize_fixed_n(0.05, 11, [0.5, 0.5], 2).kappa_low is None


def test_kappasize_names():
    assert planning.kappasize_name("ci", 2) == "CIBinary"
    assert planning.kappasize_name("power", 4) == "Power4Cats"
    assert planning.kappasize_name("fixedn", 5) == "FixedN5Cats"


def test_the_manuals_kappasize_examples_are_what_the_code_gives():
    """Every Python call in the tables of docs/researchers/kappasize.md gives the output
    printed beside it (the manual lists every kappaSize function with an example)."""
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "researchers" / "kappasize.md"
    calls = 0
    for line in page.read_text().splitlines():
        match = re.match(r"\| `[A-Za-z0-9]+\(.*?\)` \| `(kappasize_\w+\(.*\))` \| (.+?) \|$", line)
        if not match:
            continue
        call, printed = match.groups()
        result = eval(call, {}, vars(planning))  # noqa: S307 - the manual's own examples
        numbers = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", printed)]
        if call.startswith("kappasize_ci"):
            assert result == numbers[0], line
        elif call.startswith("kappasize_power"):
            assert (result.n, round(result.n_exact, 2)) == (numbers[0], numbers[1]), line
        else:
            assert result.kappa_low == numbers[0], line
            if len(numbers) > 1:
                digits = len(printed.split("exact ")[1].rstrip(")").split(".")[1])
                assert round(result.kappa_low_exact, digits) == numbers[1], line
        calls += 1
    assert calls == 16
    names = re.findall(r"\b(CI|Power|FixedN)(Binary|[345]Cats)\(", page.read_text())
    assert {a + b for a, b in names} >= {
        planning.kappasize_name(f, q) for f in planning.KAPPASIZE_FAMILIES for q in (2, 3, 4, 5)
    }
