"""Multi-rater coefficients and their parts against published worked examples. No database.

Sources:
- irrCAC README (github.com/kgwet/irrCAC, Gwet 2014): `cac.raw4raters` (= Krippendorff 2011
  section C) and `distrib.6raters`, with p_a, p_e, coefficient, standard error and
  95 % interval for percent agreement, Fleiss, Conger, Krippendorff, AC1, Brennan-Prediger.
- Fleiss (1971), "Measuring nominal scale agreement among many raters", Psychological
  Bulletin 76: 30 patients, 6 psychiatrists, 5 diagnoses (R irr's `diagnoses`): kappa
  0.430 and the kappa of each category 0.245, 0.245, 0.520, 0.471, 0.566.
- Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section A: two
  observers, binary data: o_01 = 4, n_0 = 14, n_1 = 6, n = 20, alpha = 0.095.
"""

from __future__ import annotations

import numpy as np
import pytest

from annotation import stats
from annotation.stats import inter_rater
from tests.annotation.test_stats import DISTRIB_6RATERS, KRIPPENDORFF_C, ONE_TO_FIVE, approx

DIAGNOSES_1971 = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]  # fmt: skip


def raw4raters() -> stats.AgreementReport:
    ratings = stats.Ratings.from_units_by_raters(KRIPPENDORFF_C)
    return stats.agreement(ratings, categories=ONE_TO_FIVE, bootstrap=0)


def test_raw4raters_parts_standard_errors_and_intervals_match_irrcac() -> None:
    # irrCAC README, *.raw(cac.raw4raters): (pa, pe, coefficient, se, 95 % interval).
    report = raw4raters()
    published = {
        "percent_agreement": (0.8181818, 0.0, 0.8181818, 0.12561, 0.542, 1.0),
        "gwet_ac1": (0.8181818, 0.1903212, 0.77544, 0.14295, 0.461, 1.0),
        "fleiss_kappa": (0.8181818, 0.2387153, 0.76117, 0.15302, 0.424, 1.0),
        "conger_kappa": (0.8181818, 0.2334252, 0.76282, 0.14917, 0.435, 1.0),
        "brennan_prediger": (0.8181818, 0.2, 0.77273, 0.14472, 0.454, 1.0),
    }
    for attribute, (pa, pe, value, se, low, high) in published.items():
        c: stats.Coefficient = getattr(report, attribute)
        assert c.p_o == approx(pa, 7), attribute
        assert c.p_e == approx(pe, 7), attribute
        assert c.value == approx(value, 5), attribute
        assert c.se == approx(se, 5), attribute
        assert c.wald_low == approx(low, 3), attribute
        assert c.wald_high == approx(high, 3), attribute


def test_raw4raters_alpha_standard_error_matches_irrcac() -> None:
    # irrCAC README, krippen.alpha.raw(cac.raw4raters): 0.74342, se 0.14548, (0.423, 1).
    alpha = raw4raters().krippendorff_alpha
    assert alpha.value == approx(0.74342, 5)
    assert alpha.se == approx(0.14548, 5)
    assert (alpha.wald_low, alpha.wald_high) == (approx(0.423, 3), 1.0)


def test_distrib_6raters_standard_errors_match_irrcac() -> None:
    # irrCAC README, *.dist(distrib.6raters): AC1 0.4448007 se 0.08418757 (0.264, 0.625),
    # pe 0.1914815; Fleiss 0.4139265 se 0.08119291 (0.24, 0.588), pe 0.2340741;
    # Brennan-Prediger 0.4388889 se 0.08312142 (0.261, 0.617), pe 0.2.
    ratings = stats.Ratings.from_counts(DISTRIB_6RATERS, categories=list("abcde"))
    report = stats.agreement(ratings, bootstrap=0)
    ac1, fleiss, bp = report.gwet_ac1, report.fleiss_kappa, report.brennan_prediger
    assert (ac1.p_e, ac1.se) == (approx(0.1914815, 7), approx(0.08418757, 8))
    assert (ac1.wald_low, ac1.wald_high) == (approx(0.264, 3), approx(0.625, 3))
    assert (fleiss.p_e, fleiss.se) == (approx(0.2340741, 7), approx(0.08119291, 8))
    assert (fleiss.wald_low, fleiss.wald_high) == (approx(0.24, 2), approx(0.588, 3))
    assert (bp.value, bp.se) == (approx(0.4388889, 7), approx(0.08312142, 8))
    assert (bp.wald_low, bp.wald_high) == (approx(0.261, 3), approx(0.617, 3))
    # A counts table does not say who rated what: Conger's kappa and pairs are undefined.
    assert report.conger_kappa.value is None
    assert "anonymous" in report.conger_kappa.undefined_reason
    assert report.pairwise == () and report.per_rater == ()


def test_fleiss_1971_kappa_and_kappa_per_category() -> None:
    # Fleiss (1971): overall 0.430 (R irr kappam.fleiss(diagnoses): 0.4302445), and per
    # category (Fleiss 1971; irr kappam.fleiss(diagnoses, detail=TRUE)):
    # 0.245, 0.245, 0.520, 0.471, 0.566.
    ratings = stats.Ratings.from_units_by_raters(DIAGNOSES_1971)
    report = stats.agreement(ratings, bootstrap=0)
    assert report.categories == (1, 2, 3, 4, 5)
    assert report.fleiss_kappa.value == approx(0.4302445, 7)
    per_category = [c.kappa.value for c in report.per_category]
    assert per_category == [approx(v, 3) for v in (0.245, 0.245, 0.520, 0.471, 0.566)]
    assert [c.category for c in report.per_category] == [1, 2, 3, 4, 5]


def test_krippendorff_2011_binary_example_observed_and_expected_disagreement() -> None:
    # Krippendorff (2011), section A: alpha = 1 - (n - 1) o_01 / (n_0 n_1) with o_01 = 4,
    # n_0 = 14, n_1 = 6, n = 20. As disagreements per pairable value: D_o = 2 o_01 / n,
    # D_e = 2 n_0 n_1 / (n (n - 1)).
    a = "0 1 0 0 0 0 0 0 1 0".split()
    b = "1 1 1 0 0 1 0 0 0 0".split()
    ratings = stats.Ratings.from_raters_by_units([a, b])
    alpha = stats.agreement(ratings, categories=["0", "1"], bootstrap=0).krippendorff_alpha
    assert alpha.d_o == pytest.approx(2 * 4 / 20)
    assert alpha.d_e == pytest.approx(2 * 14 * 6 / (20 * 19))
    assert alpha.value == approx(0.095, 3)
    assert alpha.value == pytest.approx(1 - alpha.d_o / alpha.d_e)


def test_every_chance_corrected_coefficient_is_consistent_with_its_parts() -> None:
    report = raw4raters()
    for c in (report.fleiss_kappa, report.conger_kappa, report.gwet_ac1, report.brennan_prediger):
        assert c.value == pytest.approx((c.p_o - c.p_e) / (1 - c.p_e)), c.name


def test_conger_and_brennan_prediger_have_bootstrap_intervals() -> None:
    report = stats.agreement(
        stats.Ratings.from_units_by_raters(DIAGNOSES_1971), bootstrap=300, seed=4
    )
    for c in (report.conger_kappa, report.brennan_prediger):
        assert c.ci_low is not None and c.ci_low <= c.value <= c.ci_high, c.name
    # Wald and bootstrap intervals describe the same uncertainty: similar widths.
    c = report.conger_kappa
    assert 0.5 < (c.ci_high - c.ci_low) / (c.wald_high - c.wald_low) < 2


def test_two_raters_conger_is_cohen_and_fleiss_is_scott() -> None:
    # Conger (1980) reduces to Cohen's kappa and Fleiss (1971) to Scott's pi for two
    # raters; irrCAC README, cont3x3abstractors: Cohen 0.7964094, Scott 0.7962397.
    table = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
    ratings = stats.Ratings.from_table(table, categories=["Ectopic", "AIU", "NIU"])
    report = stats.agreement(ratings, bootstrap=0)
    assert report.conger_kappa.value == approx(0.7964094, 7)
    assert report.fleiss_kappa.value == approx(0.7962397, 7)


def test_a_failing_consistency_check_withholds_only_that_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Force the vectorised bootstrap formula to disagree with the library on alpha: alpha
    # keeps the library's value and says why it has no interval; nothing else is lost.
    real = inter_rater._coefficients_from_patterns

    def off_by_a_bit(*args: object, **kwargs: object) -> dict[str, np.ndarray]:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        return {**result, "alpha": result["alpha"] + 0.01}

    monkeypatch.setattr(inter_rater, "_coefficients_from_patterns", off_by_a_bit)
    report = stats.agreement(
        stats.Ratings.from_units_by_raters(KRIPPENDORFF_C), categories=ONE_TO_FIVE, bootstrap=100
    )
    alpha = report.krippendorff_alpha
    assert alpha.value == approx(0.743, 3)
    assert alpha.ci_low is None and "please report this" in alpha.note
    assert report.gwet_ac1.ci_low is not None
    assert report.fleiss_kappa.value == approx(0.76117, 5)


def test_conger_resampling_formula_equals_conger_on_explicit_resamples() -> None:
    # The bootstrap weighs distinct rows of codes; expanding a weighting back into units
    # must give the same Conger's kappa as computing it on those units directly.
    rng = np.random.default_rng(11)
    codes = np.array(DIAGNOSES_1971) - 1
    codes[rng.random(codes.shape) < 0.2] = -1  # missing ratings too
    rows, freq = inter_rater._conger_patterns(codes, np.ones(len(codes), dtype=np.int64))
    for _ in range(5):
        weights = rng.multinomial(freq.sum(), freq / freq.sum())
        explicit = np.repeat(rows, weights, axis=0)
        fast = inter_rater._conger_from_weights(rows, weights[np.newaxis, :].astype(float), 5)
        assert fast[0] == pytest.approx(stats.gwet.conger_kappa(explicit, 5).value, abs=1e-12)


def test_gwet_parts_from_distinct_rows_and_their_counts_equal_the_parts_unit_by_unit() -> None:
    """agreement() hands gwet the distinct count patterns (and code rows) with how many
    units have each: every part equals the one computed over the units themselves."""
    from annotation.stats import gwet

    rng = np.random.default_rng(3)
    codes = rng.integers(-1, 3, size=(400, 4))  # -1: a missing rating, so unequal counts
    codes[:5] = -1  # units nobody rated
    counts = np.stack([(codes == k).sum(axis=1) for k in range(3)], axis=1)
    patterns, freq = np.unique(counts, axis=0, return_counts=True)
    rows, row_freq = np.unique(codes, axis=0, return_counts=True)
    assert len(patterns) < len(counts) / 4  # the test compares few rows with many
    pairs = [
        (gwet.percent_agreement(counts), gwet.percent_agreement(patterns, freq)),
        (gwet.fleiss_kappa(counts), gwet.fleiss_kappa(patterns, freq)),
        (gwet.gwet_ac1(counts), gwet.gwet_ac1(patterns, freq)),
        (gwet.brennan_prediger(counts), gwet.brennan_prediger(patterns, freq)),
        (gwet.krippendorff_alpha_se(counts), gwet.krippendorff_alpha_se(patterns, freq)),
        (gwet.conger_kappa(codes, 3), gwet.conger_kappa(rows, 3, row_freq)),
    ]
    for whole, weighted in pairs:
        assert whole.n == weighted.n
        for a, b in zip(
            (whole.p_o, whole.p_e, whole.value, whole.se),
            (weighted.p_o, weighted.p_e, weighted.value, weighted.se),
            strict=True,
        ):
            assert b == pytest.approx(a, rel=1e-12, abs=1e-14)
    with pytest.raises(ValueError, match="one non-negative count per row"):
        gwet.fleiss_kappa(patterns, freq[:-1])
