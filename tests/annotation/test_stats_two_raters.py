"""Two-rater kappa (weighted and not) and Scott's pi against published examples. No database.

Sources:
- R package irr, `anxiety` data (20 subjects rated 1-6 by 3 raters) and `kappa2`,
  as recorded in statsmodels' test suite (statsmodels/stats/tests/test_inter_rater.py):
  kappa2(anxiety[,2:3]) -0.006289308, "equal" (linear) 0.1459075, "squared" 0.2520325.
  irr builds its table from the categories that occur (5 of the 1-6 scale is unused by
  raters 2 and 3), i.e. weights over the observed categories.
- SAS PROC FREQ agreement example (as recorded in statsmodels' tests), table
  [[0, 4, 1], [0, 8, 0], [0, 1, 5]]: simple kappa 0.4842, ASE 0.1380, 95 % (0.2137, 0.7547);
  weighted kappa (Cicchetti-Allison = linear weights) 0.4701, ASE 0.1457, (0.1845, 0.7558).
- irrCAC README, `cont3x3abstractors`: Cohen 0.7964094 se 0.05891072 (0.68, 0.913);
  Scott's pi 0.7962397 se 0.05905473 (0.679, 0.913).
- Wikipedia "Cohen's kappa", first example: 20/5/10/15: p_o 0.7, p_e 0.5, kappa 0.4.
"""

from __future__ import annotations

import pytest

from annotation import stats
from tests.annotation.test_stats import approx

# irr `anxiety`, raters 2 and 3 (columns rater2, rater3).
ANXIETY_2 = [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4]
ANXIETY_3 = [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2]
SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]


@pytest.mark.parametrize(
    ("weights", "published"),
    [(None, -0.006289308), ("linear", 0.1459075), ("quadratic", 0.2520325)],
)
def test_weighted_kappa_over_observed_categories_matches_r_irr_kappa2(
    weights: stats.two_raters.Weights, published: float
) -> None:
    kappa = stats.cohen_kappa(
        ANXIETY_2, ANXIETY_3, labels=range(1, 7), weights=weights, weights_over="observed"
    )
    assert kappa.value == approx(published, 7)


def test_declared_and_observed_weights_differ_when_a_category_is_unused() -> None:
    # Category 5 of the 1-6 scale is never used by these two raters. Over the declared
    # scale, 4 and 6 are two steps apart; over the observed categories, one step.
    declared = stats.cohen_kappa(ANXIETY_2, ANXIETY_3, labels=range(1, 7), weights="linear")
    observed = stats.cohen_kappa(
        ANXIETY_2, ANXIETY_3, labels=range(1, 7), weights="linear", weights_over="observed"
    )
    assert observed.value == approx(0.1459075, 7)
    assert declared.value != pytest.approx(observed.value, abs=1e-3)
    assert "never used: [5]" in observed.note
    # Unweighted kappa does not depend on unused categories.
    assert stats.cohen_kappa(ANXIETY_2, ANXIETY_3, labels=range(1, 7)).value == approx(
        -0.006289308, 7
    )


def test_kappa_and_weighted_kappa_with_asymptotic_errors_match_sas() -> None:
    simple = stats.cohen_kappa_from_table(SAS_TABLE)
    assert (simple.value, simple.se) == (approx(0.4842, 4), approx(0.1380, 4))
    assert (simple.wald_low, simple.wald_high) == (approx(0.2137, 4), approx(0.7547, 4))
    weighted = stats.cohen_kappa_from_table(SAS_TABLE, weights="linear")
    assert (weighted.value, weighted.se) == (approx(0.4701, 4), approx(0.1457, 4))
    assert (weighted.wald_low, weighted.wald_high) == (approx(0.1845, 4), approx(0.7558, 4))
    assert weighted.name == "Cohen's weighted kappa (linear)"


def test_cohen_kappa_and_scott_pi_on_irrcac_abstractors() -> None:
    cohen = stats.cohen_kappa_from_table(ABSTRACTORS)
    assert (cohen.value, cohen.se) == (approx(0.7964094, 7), approx(0.05891072, 8))
    # irrCAC prints value -/+ t(99) se = (0.68, 0.913); Cohen's interval here is SAS's
    # value -/+ z se, as in the SAS example above.
    assert (cohen.wald_low, cohen.wald_high) == (
        pytest.approx(0.7964094 - 1.959964 * 0.05891072, abs=1e-6),
        pytest.approx(0.7964094 + 1.959964 * 0.05891072, abs=1e-6),
    )
    scott = stats.scott_pi_from_table(ABSTRACTORS)
    assert scott.name == "Scott's pi"
    assert (scott.value, scott.se) == (approx(0.7962397, 7), approx(0.05905473, 8))
    assert (scott.wald_low, scott.wald_high) == (approx(0.679, 3), approx(0.913, 3))
    assert scott.p_o == pytest.approx(0.89)


def test_cohen_kappa_parts_on_the_wikipedia_example() -> None:
    yes_no = stats.Ratings.from_table([[20, 5], [10, 15]], categories=["yes", "no"])
    a, b = zip(*yes_no.labels, strict=True)
    kappa = stats.cohen_kappa(a, b)
    assert (kappa.p_o, kappa.p_e, kappa.value) == (
        pytest.approx(0.7),
        pytest.approx(0.5),
        pytest.approx(0.4),
    )
    # Scott's chance agreement pools the raters: yes (25 + 30) / 100, no 0.45.
    assert stats.scott_pi(a, b).value == pytest.approx((0.7 - 0.505) / (1 - 0.505))


def test_missing_ratings_leave_the_pair_out_and_say_so() -> None:
    kappa = stats.cohen_kappa(["a", "b", None, "a"], ["a", "b", "b", float("nan")])
    assert kappa.n_units == 2 and kappa.value == 1.0
    assert "2 unit(s) without labels from both raters" in kappa.note


def test_bad_two_rater_input_says_what_and_where() -> None:
    with pytest.raises(ValueError, match="rater 2's label 'c' at position 1"):
        stats.cohen_kappa(["a", "b"], ["a", "c"], labels=["a", "b"])
    with pytest.raises(ValueError, match="must be square"):
        stats.cohen_kappa_from_table([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError, match="rater 1 has 2 labels, rater 2 has 3"):
        stats.cohen_kappa(["a", "b"], ["a", "b", "a"])
    with pytest.raises(ValueError, match="weights_over"):
        stats.cohen_kappa(["a", "b"], ["a", "b"], weights="linear", weights_over="used")  # type: ignore[arg-type]
    one = stats.cohen_kappa(["a", "a"], ["a", "a"])
    assert one.value is None and "expected agreement is 1" in one.undefined_reason


def test_kappa_standard_error_of_zero_is_zero_not_nan() -> None:
    # Fleiss, Cohen & Everitt (1969): var = [sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2
    # + (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2 - (k - p_e (1 - k))^2] / (n (1 - p_e)^2).
    # Rater A: a a b, rater B: a a a: k = 0, p_e = 2/3, and the bracket is
    # 8/27 + 4/27 - 4/9 = 0. statsmodels' sum rounds below 0 and its square root was
    # reported as a NaN standard error (and NaN Wald bounds).
    result = stats.cohen_kappa(["a", "a", "b"], ["a", "a", "a"], labels=["a", "b"])
    assert result.value == pytest.approx(0.0, abs=1e-12)
    assert result.se == pytest.approx(0.0, abs=1e-7)
    assert result.wald_low == pytest.approx(0.0, abs=1e-6)
    assert result.wald_high == pytest.approx(0.0, abs=1e-6)
