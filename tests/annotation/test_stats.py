"""annotation.stats against published worked examples, plus edge cases. No database.

Each expected value names its source. Tolerances follow the precision the source
prints (0.743 -> abs 5e-4, 0.7754407 -> abs 5e-6 and so on).
"""

from __future__ import annotations

import ast
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

from annotation import stats
from annotation.stats import inter_rater


def approx(value: float, places: int) -> object:
    """Equal to `value` as printed with `places` decimals."""
    return pytest.approx(value, abs=0.5 * 10**-places)


def from_count_table(table: list[list[int]], categories: list[str]) -> stats.Ratings:
    """Units x categories counts (raters anonymous)."""
    return stats.Ratings.from_counts(table, categories=categories)


def from_contingency(table: list[list[int]], categories: list[str]) -> stats.Ratings:
    """Two-rater contingency table (rows rater A, columns rater B)."""
    return stats.Ratings.from_table(table, categories=categories, raters=(0, 1))


# Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability", section C: 4 observers,
# 12 units, values 1-5, missing data. The same data is irrCAC's `cac.raw4raters`.
# Rows are units here (the paper prints observers as rows).
KRIPPENDORFF_C = [
    ["1", "1", None, "1"],
    ["2", "2", "3", "2"],
    ["3", "3", "3", "3"],
    ["3", "3", "3", "3"],
    ["2", "2", "2", "2"],
    ["1", "2", "3", "4"],
    ["4", "4", "4", "4"],
    ["1", "1", "2", "1"],
    ["2", "2", "2", "2"],
    [None, "5", "5", "5"],
    [None, None, "1", "1"],
    [None, None, "3", None],
]
ONE_TO_FIVE = ["1", "2", "3", "4", "5"]

# irrCAC `distrib.6raters`: 15 patients, 6 psychiatrists, 5 diagnoses (README of
# github.com/kgwet/irrCAC, from Gwet 2014).
DISTRIB_6RATERS = [
    [0, 0, 0, 6, 0],
    [0, 3, 0, 0, 3],
    [0, 1, 4, 0, 1],
    [0, 0, 0, 0, 6],
    [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0],
    [0, 0, 4, 0, 2],
    [2, 0, 3, 1, 0],
    [2, 0, 0, 4, 0],
    [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0],
    [1, 1, 0, 4, 0],
    [0, 3, 3, 0, 0],
    [1, 0, 0, 5, 0],
    [0, 2, 0, 3, 1],
]
DIAGNOSES = ["Depression", "Personality Disorder", "Schizophrenia", "Neurosis", "Other"]

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories.
WIKIPEDIA_FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]

# irrCAC `cont3x3abstractors`: 2 abstractors, 100 pregnancies (README of kgwet/irrCAC).
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
PREGNANCY = ["Ectopic", "AIU", "NIU"]


# --------------------------------------------------------------------------- published


def test_krippendorff_2011_nominal_example_with_missing_data() -> None:
    # Krippendorff (2011), section C: nominal alpha = 0.743.
    report = stats.agreement(KRIPPENDORFF_C, categories=ONE_TO_FIVE, bootstrap=0)
    assert report.krippendorff_alpha.value == approx(0.743, 3)
    # The unit rated by one observer only carries no agreement information.
    assert report.n_units_used == 11
    assert report.excluded == (stats.ExcludedUnit(11, "only one rating"),)
    assert report.raters_per_unit == {1: 1, 2: 1, 3: 2, 4: 8}


@pytest.mark.parametrize(
    ("level", "published"),
    # Krippendorff (2011), section C, and the `krippendorff` package's docstring/tests:
    # ordinal 0.815, interval 0.849, ratio 0.797.
    [("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_other_levels(level: stats.Level, published: float) -> None:
    report = stats.agreement(KRIPPENDORFF_C, categories=ONE_TO_FIVE, level=level, bootstrap=0)
    assert report.krippendorff_alpha.value == approx(published, 3)
    assert report.krippendorff_alpha.name == f"Krippendorff's alpha ({level})"


def test_ordinal_alpha_follows_declared_category_order_not_spelling() -> None:
    # `krippendorff` package tests: the section C data spelled as words with the
    # ordered domain very low < low < mid < high < very high gives ordinal 0.815.
    words = ["very low", "low", "mid", "high", "very high"]
    spelled = [[None if v is None else words[int(v) - 1] for v in row] for row in KRIPPENDORFF_C]
    report = stats.agreement(spelled, categories=words, level="ordinal", bootstrap=0)
    assert report.krippendorff_alpha.value == approx(0.815, 3)


def test_krippendorff_2011_binary_two_observers() -> None:
    # Krippendorff (2011), section A: binary data, two observers, 10 units, alpha = 0.095.
    a = "0 1 0 0 0 0 0 0 1 0".split()
    b = "1 1 1 0 0 1 0 0 0 0".split()
    report = stats.agreement(list(zip(a, b, strict=True)), categories=["0", "1"], bootstrap=0)
    assert report.krippendorff_alpha.value == approx(0.095, 3)


def test_krippendorff_2011_nominal_two_observers() -> None:
    # Krippendorff (2011), section B: nominal data, two observers, 12 units, alpha = 0.692.
    a = "a a b b d c c c e d d a".split()
    b = "b a b b b c c c e d d d".split()
    report = stats.agreement(list(zip(a, b, strict=True)), categories=list("abcde"), bootstrap=0)
    assert report.krippendorff_alpha.value == approx(0.692, 3)


def test_gwet_ac1_and_percent_agreement_on_irrcac_raw4raters() -> None:
    # irrCAC README, gwet.ac1.raw(cac.raw4raters): pa 0.8181818, pe 0.1903212, AC1 0.77544;
    # pa.coeff.raw: 0.8181818.
    report = stats.agreement(KRIPPENDORFF_C, categories=ONE_TO_FIVE, bootstrap=0)
    assert report.gwet_ac1.value == approx(0.77544, 5)
    assert report.percent_agreement.value == approx(0.8181818, 7)
    pa, pe = 0.8181818, 0.1903212
    assert (pa - pe) / (1 - pe) == approx(report.gwet_ac1.value, 5)


def test_fleiss_kappa_with_unequal_counts_matches_irrcac() -> None:
    # irrCAC README, fleiss.kappa.raw(cac.raw4raters): 0.76117 (Gwet's generalisation of
    # Fleiss' kappa to units with different numbers of ratings).
    report = stats.agreement(KRIPPENDORFF_C, categories=ONE_TO_FIVE, bootstrap=0)
    assert report.fleiss_kappa.value == approx(0.76117, 5)
    assert "unequal counts" in (report.fleiss_kappa.note or "")


def test_fleiss_kappa_wikipedia_example() -> None:
    # Wikipedia "Fleiss' kappa" worked example: P-bar 0.378, P-bar-e 0.213, kappa 0.210.
    matrix = from_count_table(WIKIPEDIA_FLEISS, list("abcde"))
    report = stats.agreement(matrix, categories=list("abcde"), bootstrap=0)
    assert report.fleiss_kappa.value == approx(0.210, 3)
    assert report.percent_agreement.value == approx(0.378, 3)
    assert report.fleiss_kappa.note is None  # 14 ratings on every unit: plain Fleiss


def test_all_coefficients_on_irrcac_distrib_6raters() -> None:
    # irrCAC README: gwet.ac1.dist 0.4448007 (pa 0.5511111), fleiss.kappa.dist 0.4139265,
    # krippen.alpha.dist 0.4204384.
    matrix = from_count_table(DISTRIB_6RATERS, DIAGNOSES)
    report = stats.agreement(matrix, categories=DIAGNOSES, bootstrap=0)
    assert report.gwet_ac1.value == approx(0.4448007, 7)
    assert report.percent_agreement.value == approx(0.5511111, 7)
    assert report.fleiss_kappa.value == approx(0.4139265, 7)
    assert report.krippendorff_alpha.value == approx(0.4204384, 7)


def test_two_raters_on_irrcac_abstractors_table() -> None:
    # irrCAC README, cont3x3abstractors: Cohen's kappa 0.7964094, Scott's pi 0.7962397,
    # Gwet's AC1 0.8493305, Krippendorff's alpha 0.7972585, percent agreement 0.89.
    # Fleiss' kappa with two raters is Scott's pi (Fleiss 1971 generalises Scott).
    matrix = from_contingency(ABSTRACTORS, PREGNANCY)
    report = stats.agreement(matrix, categories=PREGNANCY, bootstrap=0)
    assert report.n_units_used == 100
    (pair,) = report.pairwise
    assert pair.n_units == 100
    assert pair.kappa.value == approx(0.7964094, 7)
    assert report.fleiss_kappa.value == approx(0.7962397, 7)
    assert report.gwet_ac1.value == approx(0.8493305, 7)
    assert report.krippendorff_alpha.value == approx(0.7972585, 7)
    assert report.percent_agreement.value == pytest.approx(0.89)


def test_cohen_kappa_wikipedia_example() -> None:
    # Wikipedia "Cohen's kappa", first example: 50 grant proposals, yes/yes 20, yes/no 5,
    # no/yes 10, no/no 15: p_o 0.7, p_e 0.5, kappa 0.4.
    matrix = from_contingency([[20, 5], [10, 15]], ["yes", "no"])
    report = stats.agreement(matrix, categories=["yes", "no"], bootstrap=0)
    assert report.pairwise[0].kappa.value == pytest.approx(0.4)
    assert report.kappa_matrix() == ((1.0, pytest.approx(0.4)), (pytest.approx(0.4), 1.0))


# --------------------------------------------------------------------------- bootstrap


def _resampled_counts(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return counts[rng.integers(0, len(counts), size=len(counts))]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_vectorised_bootstrap_formula_equals_the_libraries_on_explicit_resamples(
    level: stats.Level,
) -> None:
    # The bootstrap computes coefficients from resampled pattern weights. Resample units
    # the slow way and check the libraries agree with the fast formula on each resample.
    rng = np.random.default_rng(7)
    counts = np.array([[int(x) for x in row] for row in DISTRIB_6RATERS])
    delta = inter_rater._delta_fn(level, tuple(DIAGNOSES))
    for _ in range(5):
        sample = _resampled_counts(counts, rng)
        patterns, freq = np.unique(sample, axis=0, return_counts=True)
        fast = inter_rater._coefficients_from_patterns(
            patterns, freq[np.newaxis, :].astype(float), delta=delta
        )
        assert fast["fleiss"][0] == pytest.approx(fleiss_kappa(sample), abs=1e-12)
        assert fast["alpha"][0] == pytest.approx(
            krippendorff.alpha(value_counts=sample, level_of_measurement=level), abs=1e-12
        )
        assert fast["ac1"][0] == pytest.approx(stats.gwet.gwet_ac1(sample).value, abs=1e-12)


def test_vectorised_formula_equals_libraries_on_data_with_missing_ratings() -> None:
    rng = np.random.default_rng(3)
    labels = rng.choice(["s", "c", "i"], size=(500, 4), p=[0.6, 0.3, 0.1]).astype(object)
    labels[rng.random((500, 4)) < 0.3] = None
    matrix = labels.tolist()
    # agreement() itself raises if the fast formula and the library disagree.
    report = stats.agreement(matrix, categories=["s", "c", "i"], bootstrap=50)
    counts = np.array([[row.count(c) for c in ["s", "c", "i"]] for row in matrix])
    pairable = counts[counts.sum(axis=1) >= 2]
    assert report.krippendorff_alpha.value == pytest.approx(
        krippendorff.alpha(value_counts=pairable, level_of_measurement="nominal"), abs=1e-12
    )


def test_bootstrap_interval_is_seeded_and_contains_the_estimate() -> None:
    matrix = from_count_table(DISTRIB_6RATERS, DIAGNOSES)
    first = stats.agreement(matrix, categories=DIAGNOSES, bootstrap=300, seed=1)
    again = stats.agreement(matrix, categories=DIAGNOSES, bootstrap=300, seed=1)
    other = stats.agreement(matrix, categories=DIAGNOSES, bootstrap=300, seed=2)
    assert first == again
    assert first.gwet_ac1.ci_low != other.gwet_ac1.ci_low
    for coefficient in first.coefficients:
        if coefficient.value is None:  # Conger's kappa: the raters of a counts table are anonymous
            continue
        assert coefficient.ci_low is not None and coefficient.ci_high is not None
        assert coefficient.ci_low <= coefficient.value <= coefficient.ci_high
        assert coefficient.ci_low < coefficient.ci_high


def test_bootstrap_interval_is_near_irrcac_standard_error() -> None:
    # irrCAC README, gwet.ac1.dist(distrib.6raters): AC1 0.4448007, standard error
    # 0.08418757, 95% CI (0.264, 0.625). A units bootstrap should give a similar width.
    matrix = from_count_table(DISTRIB_6RATERS, DIAGNOSES)
    report = stats.agreement(matrix, categories=DIAGNOSES, bootstrap=4000, seed=0)
    width = report.gwet_ac1.ci_high - report.gwet_ac1.ci_low
    assert 0.6 * (0.625 - 0.264) < width < 1.4 * (0.625 - 0.264)


def test_no_bootstrap_means_no_interval() -> None:
    report = stats.agreement(KRIPPENDORFF_C, categories=ONE_TO_FIVE, bootstrap=0)
    assert report.gwet_ac1.ci_low is None and report.gwet_ac1.ci_high is None


def test_confidence_level_widens_the_interval() -> None:
    matrix = from_count_table(DISTRIB_6RATERS, DIAGNOSES)
    narrow = stats.agreement(matrix, categories=DIAGNOSES, bootstrap=500, confidence=0.5)
    wide = stats.agreement(matrix, categories=DIAGNOSES, bootstrap=500, confidence=0.99)
    assert wide.fleiss_kappa.ci_low < narrow.fleiss_kappa.ci_low
    assert wide.fleiss_kappa.ci_high > narrow.fleiss_kappa.ci_high


def test_pairwise_kappa_interval_comes_from_the_pair_units() -> None:
    matrix = from_contingency(ABSTRACTORS, PREGNANCY)
    report = stats.agreement(matrix, categories=PREGNANCY, bootstrap=2000)
    kappa = report.pairwise[0].kappa
    # irrCAC README: Cohen's kappa 0.7964094, 95% CI (0.68, 0.913) from its standard error.
    assert kappa.ci_low == pytest.approx(0.68, abs=0.05)
    assert kappa.ci_high == pytest.approx(0.913, abs=0.05)


# --------------------------------------------------------------------------- edge cases


def test_perfect_agreement_is_one_everywhere() -> None:
    matrix = [["a", "a", "a"], ["b", "b", "b"], ["c", "c", "c"], ["a", "a", None]]
    report = stats.agreement(matrix, categories=["a", "b", "c"], bootstrap=100)
    for coefficient in report.coefficients:
        assert coefficient.value == pytest.approx(1.0), coefficient.name
        assert coefficient.undefined_reason is None
    assert all(pair.kappa.value == pytest.approx(1.0) for pair in report.pairwise)


def test_one_category_only_is_undefined_in_words() -> None:
    matrix = [["supported"] * 3] * 5
    report = stats.agreement(
        matrix, categories=["supported", "contradicted", "inconclusive"], bootstrap=100
    )
    for coefficient in (report.fleiss_kappa, report.krippendorff_alpha):
        assert coefficient.value is None
        assert coefficient.ci_low is None
        assert "every rating" in coefficient.undefined_reason
        assert "'supported'" in coefficient.undefined_reason
    for pair in report.pairwise:
        assert pair.kappa.value is None
        assert "expected agreement is 1" in pair.kappa.undefined_reason
    # Raw agreement is genuinely 1; AC1 is 1 by its formula and says what that means.
    assert report.percent_agreement.value == 1.0
    assert report.gwet_ac1.value == 1.0
    assert "cannot show" in report.gwet_ac1.note
    assert report.label_distribution == {"supported": 15}


def test_a_single_declared_category_leaves_ac1_undefined() -> None:
    report = stats.agreement([["x", "x"], ["x", "x"]], categories=["x"], bootstrap=0)
    assert report.gwet_ac1.value is None
    assert "only one category is declared" in report.gwet_ac1.undefined_reason


def test_no_unit_with_two_ratings_is_undefined_and_units_are_listed() -> None:
    rows = [("u1", "ann", "a"), ("u2", "bob", "b"), ("u3", "ann", "b")]
    report = stats.agreement(stats.Ratings.from_long(rows), categories=["a", "b"], bootstrap=100)
    assert report.n_units_used == 0
    assert [e.unit for e in report.excluded] == ["u1", "u2", "u3"]
    for coefficient in report.coefficients:
        assert coefficient.value is None
        assert "no unit has two or more ratings" in coefficient.undefined_reason
    (pair,) = report.pairwise
    assert pair.n_units == 0
    assert pair.kappa.undefined_reason == "'ann' and 'bob' rated no unit in common"


def test_raters_without_overlap_get_an_undefined_pair_but_others_still_count() -> None:
    rows = [
        ("u1", "ann", "a"), ("u1", "bob", "a"),
        ("u2", "ann", "b"), ("u2", "bob", "b"),
        ("u3", "ann", "a"), ("u3", "bob", "b"),
        ("u4", "cat", "a"), ("u4", "bob", "a"),
        ("u5", "cat", "b"), ("u5", "bob", "b"),
    ]  # fmt: skip
    report = stats.agreement(stats.Ratings.from_long(rows), categories=["a", "b"], bootstrap=0)
    by_pair = {(p.rater_a, p.rater_b): p for p in report.pairwise}
    assert by_pair["ann", "cat"].kappa.value is None
    assert "no unit in common" in by_pair["ann", "cat"].kappa.undefined_reason
    # ann/bob: 3 units, a/a b/b a/b: p_o 2/3, p_e = (2/3)(1/3) + (1/3)(2/3) = 4/9,
    # kappa = (2/3 - 4/9) / (5/9) = 0.4.
    assert by_pair["ann", "bob"].kappa.value == pytest.approx(0.4)
    assert by_pair["ann", "bob"].n_units == 3
    matrix = report.kappa_matrix()
    assert matrix[0][2] is None and matrix[2][0] is None
    per_rater = {r.rater: r for r in report.per_rater}
    assert per_rater["cat"].percent_agreement == 1.0
    assert per_rater["ann"].percent_agreement == pytest.approx(2 / 3)
    assert per_rater["bob"].n_pairs == 5


def test_rater_with_no_shared_units_says_so() -> None:
    rows = [("u1", "ann", "a"), ("u1", "bob", "b"), ("u2", "cat", "a")]
    report = stats.agreement(stats.Ratings.from_long(rows), categories=["a", "b"], bootstrap=0)
    cat = next(r for r in report.per_rater if r.rater == "cat")
    assert cat.percent_agreement is None
    assert cat.undefined_reason == "shares no unit with another rater"


def test_labels_outside_the_declared_set_are_rejected() -> None:
    with pytest.raises(ValueError, match="'maybe'.*not one of the declared categories"):
        stats.agreement(
            stats.Ratings.from_units_by_raters([["yes", "maybe"]]), categories=["yes", "no"]
        )


def test_label_distribution_counts_declared_categories_seen() -> None:
    report = stats.agreement(KRIPPENDORFF_C, categories=ONE_TO_FIVE, bootstrap=0)
    assert report.label_distribution == {"2": 13, "3": 11, "1": 9, "4": 5, "5": 3}
    assert report.n_ratings == 41
    assert (report.min_raters, report.max_raters) == (2, 4)
    assert report.mean_raters == pytest.approx(40 / 11)


def test_the_three_input_shapes_give_the_same_ratings() -> None:
    matrix = [["a", "b"], [None, "a"]]
    rows = [(0, 0, "a"), (0, 1, "b"), (1, 1, "a")]
    mapping = {0: {0: "a", 1: "b"}, 1: {1: "a"}}
    from_matrix = stats.as_ratings(matrix)
    assert stats.Ratings.from_long(rows) == from_matrix
    assert stats.as_ratings(mapping) == from_matrix
    assert from_matrix.labels == (("a", "b"), (None, "a"))


def test_long_rows_with_two_labels_from_one_rater_are_rejected() -> None:
    with pytest.raises(ValueError, match="more than one label"):
        stats.Ratings.from_long([("u1", "ann", "a"), ("u1", "ann", "b")])


def test_stats_module_imports_no_django() -> None:
    source = Path(stats.__file__).read_text()
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom)
    }
    assert "django" not in imported
    assert "rest_framework" not in imported


# --------------------------------------------------------------------------- majority


def test_majority_picks_the_most_frequent_label() -> None:
    result = stats.majority(["supported", "contradicted", "supported", None])
    assert result.label == "supported"
    assert not result.is_tie
    assert result.n_votes == 3
    assert result.distribution == {"supported": 2, "contradicted": 1}


def test_majority_tie_returns_the_marker_or_the_given_default() -> None:
    labels = ["supported", "contradicted", "inconclusive"]
    assert stats.majority(labels).label == stats.TIE
    result = stats.majority(labels, tie="inconclusive")
    assert result.label == "inconclusive"
    assert result.is_tie


def test_majority_of_nothing_is_none() -> None:
    result = stats.majority([None, None])
    assert result.label is None
    assert result.n_votes == 0


# --------------------------------------------------------------------------- verifier


@pytest.mark.parametrize(
    ("label", "binary", "ternary"),
    [
        ("supported", "supported", "supported"),
        ("Supported.", "supported", "supported"),
        ("S", "supported", "supported"),
        ("contradicted", "unsupported", "contradicted"),
        ("Contradicted.", "unsupported", "contradicted"),
        ("inconclusive", "unsupported", "inconclusive"),
        ("inconclusive-not-enough", "unsupported", "inconclusive"),
        ("inconclusive-conflicting", "unsupported", "inconclusive"),
        ("Inconclusive.", "unsupported", "inconclusive"),
        ("IR", "irrelevant", "irrelevant"),
        ("unparsed", None, None),
        ("error", None, None),
        (None, None, None),
    ],
)
def test_verdict_spellings_normalise(
    label: str | None, binary: str | None, ternary: str | None
) -> None:
    assert stats.normalise_verdict(label, mode="binary") == binary
    assert stats.normalise_verdict(label, mode="ternary") == ternary


@pytest.mark.parametrize("label", ["unsupported", "Unsupported.", "NS"])
def test_binary_only_labels_cannot_be_scored_as_ternary(label: str) -> None:
    assert stats.normalise_verdict(label, mode="binary") == "unsupported"
    with pytest.raises(ValueError, match="binary label"):
        stats.normalise_verdict(label, mode="ternary")


def test_unknown_verdict_label_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown verdict label 'maybe'"):
        stats.normalise_verdict("maybe")


def _dog_example() -> tuple[list[str], list[str]]:
    # Wikipedia "Precision and recall", introduction: a program finds 8 dogs in a photo of
    # 12 dogs and 10 cats; 5 of the 8 are dogs. Precision 5/8, recall 5/12.
    # Dogs are "supported", cats "unsupported".
    ref = ["supported"] * 12 + ["unsupported"] * 10
    pred = ["supported"] * 5 + ["unsupported"] * 7 + ["supported"] * 3 + ["unsupported"] * 7
    return pred, ref


def test_precision_recall_f1_on_the_wikipedia_dog_example() -> None:
    pred, ref = _dog_example()
    report = stats.verifier_vs_reference(y_true=ref, y_pred=pred)
    supported = report.scores("supported")
    assert supported.precision == pytest.approx(5 / 8)
    assert supported.recall == pytest.approx(5 / 12)
    assert report.supported_f1 == pytest.approx(0.5)  # 2PR/(P+R) = 0.5
    # The cat class, by hand from the same table: 7 of 14 "cat" answers right, 7 of 10 cats.
    assert report.scores("unsupported").precision == pytest.approx(0.5)
    assert report.scores("unsupported").recall == pytest.approx(0.7)
    assert report.unsupported_f1 == pytest.approx(7 / 12)
    assert report.macro_f1.value == pytest.approx((0.5 + 7 / 12) / 2)
    assert report.balanced_accuracy.value == pytest.approx((5 / 12 + 0.7) / 2)
    assert report.accuracy.value == pytest.approx(12 / 22)
    assert report.confusion == ((5, 7), (3, 7))
    assert report.labels == ("supported", "unsupported")
    assert report.n == 22


def test_balanced_accuracy_matches_scikit_learn_docs_example() -> None:
    # scikit-learn docs, balanced_accuracy_score: y_true [0,1,0,0,1,0], y_pred [0,1,0,0,0,1]
    # gives 0.625. 0 = supported, 1 = unsupported here.
    names = {0: "supported", 1: "unsupported"}
    ref = [names[x] for x in [0, 1, 0, 0, 1, 0]]
    pred = [names[x] for x in [0, 1, 0, 0, 0, 1]]
    report = stats.verifier_vs_reference(y_true=ref, y_pred=pred)
    assert report.balanced_accuracy.value == pytest.approx(0.625)


def test_verifier_kappa_matches_the_wikipedia_cohen_example() -> None:
    # Wikipedia "Cohen's kappa" (20 / 5 / 10 / 15 table): kappa 0.4.
    pairs = from_contingency([[20, 5], [10, 15]], ["supported", "unsupported"])
    ref, pred = zip(*pairs.labels, strict=True)
    report = stats.verifier_vs_reference(y_true=list(ref), y_pred=list(pred))
    assert report.kappa.value == pytest.approx(0.4)


def test_binary_collapse_and_exclusions_are_counted() -> None:
    ref = ["supported", "contradicted", "inconclusive", "S", "NS", "IR", None, "supported"]
    pred = [
        "Supported.", "inconclusive-conflicting", "supported", "unparsed", "Unsupported.",
        "S", "supported", None,
    ]  # fmt: skip
    report = stats.verifier_vs_reference(y_true=ref, y_pred=pred, units=list("abcdefgh"))
    assert report.n == 4
    assert report.excluded == {
        "no usable prediction (missing or unparsed)": 2,
        "marked irrelevant (IR)": 1,
        "no reference label": 1,
    }
    assert report.confusion == ((1, 0), (1, 2))
    assert report.disagreements == (stats.Disagreement("c", "unsupported", "supported"),)


def test_ternary_mode_keeps_three_classes_and_explains_missing_ones() -> None:
    ref = ["supported", "contradicted", "supported", "contradicted"]
    pred = ["supported", "contradicted", "contradicted", "supported"]
    report = stats.verifier_vs_reference(y_true=ref, y_pred=pred, mode="ternary")
    assert report.labels == ("supported", "contradicted", "inconclusive")
    inconclusive = report.scores("inconclusive")
    assert inconclusive.f1 is None
    assert "never predicted 'inconclusive'" in inconclusive.undefined_reason
    assert "no reference label is 'inconclusive'" in inconclusive.undefined_reason
    assert report.macro_f1.value == pytest.approx(0.5)
    assert "inconclusive never occurs" in report.macro_f1.note


def test_verifier_with_nothing_to_score_says_why() -> None:
    report = stats.verifier_vs_reference(y_true=["supported"], y_pred=["unparsed"])
    assert report.n == 0
    assert report.macro_f1.value is None
    assert "no unit has both" in report.kappa.undefined_reason


def test_verifier_agreeing_on_one_label_has_undefined_kappa() -> None:
    report = stats.verifier_vs_reference(y_true=["supported"] * 3, y_pred=["supported"] * 3)
    assert report.kappa.value is None
    assert "expected agreement is 1" in report.kappa.undefined_reason
    assert report.accuracy.value == 1.0


def test_response_level_balanced_accuracy_scores_whole_responses() -> None:
    # Two responses wrong in the reference, the verifier catches one of them and raises a
    # false alarm on a correct one: recall 1/2 on each class by hand, balanced accuracy 0.5.
    responses = ["r1", "r1", "r2", "r2", "r3", "r4"]
    ref = stats.response_labels(
        ["supported", "contradicted", "supported", "supported", "inconclusive", "supported"],
        responses,
    )
    pred = stats.response_labels(
        ["supported", "Unsupported.", "NS", "supported", "supported", "supported"], responses
    )
    keys = sorted(ref)
    report = stats.verifier_vs_reference(
        y_true=[ref[k] for k in keys], y_pred=[pred[k] for k in keys]
    )
    assert report.confusion == ((1, 1), (1, 1))
    assert report.balanced_accuracy.value == pytest.approx(0.5)


def test_felm_response_level_labels() -> None:
    # FELM scores a response as wrong when any of its segments is wrong.
    labels = ["supported", "contradicted", "supported", "supported", "unparsed", "supported"]
    responses = ["r1", "r1", "r2", "r2", "r3", "r3"]
    assert stats.response_labels(labels, responses) == {
        "r1": "unsupported",
        "r2": "supported",
        "r3": None,
    }


# --------------------------------------------------------------------------- McNemar


def _mcnemar_labels(
    both_right: int, only_a: int, only_b: int, both_wrong: int
) -> tuple[list[str], list[str], list[str]]:
    ref = ["supported"] * (both_right + only_a + only_b + both_wrong)
    a = (["supported"] * (both_right + only_a)) + (["unsupported"] * (only_b + both_wrong))
    b = (
        ["supported"] * both_right
        + ["unsupported"] * only_a
        + ["supported"] * only_b
        + ["unsupported"] * both_wrong
    )
    return a, b, ref


def test_mcnemar_exact_on_fagerland_2013_example() -> None:
    # Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91, Table 1: AHR before and
    # after stem cell transplantation in 21 children (1, 1 / 7, 12). Discordant pairs 1 and
    # 7: exact conditional p = 2 * binomcdf(1; 8, 0.5) = 0.070.
    a, b, ref = _mcnemar_labels(both_right=1, only_a=1, only_b=7, both_wrong=12)
    result = stats.mcnemar_test(a, b, ref)
    assert result.method == "exact"
    assert (result.only_a_correct, result.only_b_correct) == (1, 7)
    assert result.p_value == approx(0.070, 3)
    assert result.p_value == pytest.approx(18 / 256)


def test_mcnemar_chi_square_on_wikipedia_example() -> None:
    # Wikipedia "McNemar's test", first example: 101, 121 / 59, 33;
    # chi2 = (121 - 59)^2 / (121 + 59) = 21.35 (printed truncated; 3844 / 180 = 21.356).
    a, b, ref = _mcnemar_labels(both_right=101, only_a=121, only_b=59, both_wrong=33)
    result = stats.mcnemar_test(a, b, ref)
    assert result.method == "chi-square"
    assert 21.35 <= result.statistic < 21.36
    assert result.p_value < 0.001


def test_mcnemar_chi_square_on_agresti_presidential_approval() -> None:
    # Agresti, An Introduction to Categorical Data Analysis (2nd ed.), Table 8.1: approval
    # of the President in two surveys, 794, 150 / 86, 570: z^2 = 17.36.
    a, b, ref = _mcnemar_labels(both_right=794, only_a=150, only_b=86, both_wrong=570)
    assert stats.mcnemar_test(a, b, ref).statistic == approx(17.36, 2)


def test_mcnemar_without_usable_units_is_undefined() -> None:
    result = stats.mcnemar_test(["unparsed"], ["supported"], ["supported"])
    assert result.p_value is None
    assert result.excluded == 1
    assert "no unit" in result.undefined_reason


def test_mcnemar_with_identical_verifiers_has_p_one() -> None:
    a, b, ref = _mcnemar_labels(both_right=5, only_a=0, only_b=0, both_wrong=3)
    assert stats.mcnemar_test(a, b, ref).p_value == 1.0


# --------------------------------------------------------------------------- preference


def test_preference_counts_strong_and_slight_like_veriscore_figure_3() -> None:
    # VeriScore section 3.2: of 360 judgements SAFE was preferred 26 times, 19 of them
    # slight (hard to decide). Rebuild rows with that split and read it back.
    rows = (
        [("bio", "ours", "safe", False, 1)] * 300
        + [("bio", "ours", "safe", True, 2)] * 34
        + [("bio", "safe", "ours", True, 1)] * 19
        + [("bio", "safe", "ours", False, 2)] * 7
    )
    report = stats.preference(rows)
    cell = report.cell("ours", "safe")
    assert (cell.system_a, cell.system_b) == ("ours", "safe")
    assert cell.n == 360
    assert (cell.b_wins, cell.b_slight, cell.b_strong) == (26, 19, 7)
    assert (cell.a_wins, cell.a_strong, cell.a_slight) == (334, 300, 34)
    assert cell.b_rate == pytest.approx(26 / 360)
    assert cell.p_value < 1e-60
    assert report.cell("ours", "safe", "bio").n == 360


def test_preference_binomial_test_is_exact_and_two_sided() -> None:
    # 9 of 10 for one system: P(X <= 1) + P(X >= 9) with X ~ Bin(10, 0.5) = 22/1024.
    rows = [("news", "x", "y", False, 1)] * 9 + [("news", "y", "x", False, 2)]
    assert stats.preference(rows).cell("x", "y").p_value == pytest.approx(22 / 1024)


def test_position_bias_per_domain_and_overall() -> None:
    # List 1 wins 7 of 10 in one domain: two-sided p = 2 (120 + 45 + 10 + 1) / 1024.
    rows = [("a", "x", "y", False, 1)] * 7 + [("a", "x", "y", True, 2)] * 3
    rows += [("b", "y", "x", False, 2)] * 4
    report = stats.preference(rows)
    by_domain = {bias.domain: bias for bias in report.position_bias}
    assert by_domain["a"].list1_wins == 7
    assert by_domain["a"].p_value == pytest.approx(352 / 1024)
    assert by_domain[None].n == 14
    assert by_domain[None].rate == pytest.approx(7 / 14)
    assert report.cell("x", "y", "b").b_wins == 4


def test_preference_rejects_bad_rows() -> None:
    with pytest.raises(ValueError, match="winner_position"):
        stats.preference([("a", "x", "y", False, 3)])
    with pytest.raises(ValueError, match="hard must be True or False"):
        stats.preference([("a", "x", "y", "yes", 1)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="over itself"):
        stats.preference([("a", "x", "x", False, 1)])


# --------------------------------------------------------------------------- Kendall


def test_kendall_tau_matches_scipy_docs_example() -> None:
    # scipy.stats.kendalltau docs: x1 [12, 2, 1, 12, 2], x2 [1, 4, 7, 1, 0]:
    # tau -0.47140452079103173, p 0.2827454599327748.
    result = stats.kendall_tau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0])
    assert result.tau == pytest.approx(-0.47140452079103173)
    assert result.p_value == pytest.approx(0.2827454599327748)


def test_kendall_tau_on_mappings_uses_shared_keys() -> None:
    result = stats.kendall_tau({"a": 1, "b": 2, "c": 3, "z": 9}, {"c": 30, "b": 20, "a": 10})
    assert result.n == 3
    assert result.tau == pytest.approx(1.0)


def test_kendall_tau_undefined_cases_say_why() -> None:
    assert "at least 2" in stats.kendall_tau([1], [2]).undefined_reason
    assert "same value" in stats.kendall_tau([1, 1, 1], [1, 2, 3]).undefined_reason


def test_pairwise_matrix_pairs_the_right_columns() -> None:
    # Rater 1 is rater 0 shifted by one unit; rater 2 is a copy of rater 0. By hand for
    # (0, 1): 2 of 8 units agree, both raters say a on half the units, so p_e = 0.5 and
    # kappa = (0.25 - 0.5) / 0.5 = -0.5.
    base = ["a", "b", "a", "b", "a", "a", "b", "b"]
    shifted = base[1:] + base[:1]
    matrix = [list(t) for t in zip(base, shifted, base, strict=True)]
    report = stats.agreement(matrix, categories=["a", "b"], bootstrap=0)
    by_pair = {(p.rater_a, p.rater_b): p.kappa.value for p in report.pairwise}
    assert by_pair[0, 2] == pytest.approx(1.0)
    assert by_pair[0, 1] == pytest.approx(-0.5)
    assert by_pair[1, 2] == pytest.approx(-0.5)


def test_percentile_intervals_at_once_equal_each_alone() -> None:
    """agreement's bootstrap intervals of one field come from one np.quantile over the
    fully defined resamples: bit for bit each array's own percentile_ci, and arrays
    with undefined resamples or another length go their own way (with their note)."""
    from annotation.stats.inter_rater import percentile_ci, percentile_cis

    rng = np.random.default_rng(7)
    arrays = {f"k{i}": rng.normal(size=1000) for i in range(5)}
    arrays["short"] = rng.normal(size=10)
    arrays["nan"] = np.where(rng.random(1000) < 0.1, np.nan, rng.normal(size=1000))
    arrays["none"] = np.full(1000, np.nan)
    for confidence in (0.95, 0.9):
        at_once = percentile_cis(arrays, confidence)
        assert at_once == {k: percentile_ci(v, confidence) for k, v in arrays.items()}
    assert at_once["nan"][2] and at_once["k0"][2] is None


def test_fleiss_kappa_with_one_category_pairable_and_another_in_a_single_rating() -> None:
    # Gwet's (2014) generalisation (irrCAC fleiss.kappa.raw): P-bar over the units with two
    # ratings (here 1: the one pairable unit agrees), p_j over every rated unit (a: 1/2,
    # b: 1/2), P_e = 1/4 + 1/4 = 1/2, kappa = (1 - 1/2) / (1 - 1/2) = 1. It used to be
    # reported undefined ("expected agreement is 1"), which holds only when every rating of
    # every rated unit is one category (found by the property test against
    # stats/reference.py; gwet.fleiss_kappa, checked against irrCAC's printed values, agrees)
    from annotation.stats import gwet

    report = stats.agreement([["a", "a"], ["b", None]], categories=["a", "b"], bootstrap=20)
    assert report.fleiss_kappa.value == approx(1.0, 12)
    assert report.fleiss_kappa.p_e == approx(0.5, 12)
    assert gwet.fleiss_kappa([[2, 0], [0, 1]]).value == approx(1.0, 12)
    assert report.krippendorff_alpha.value is None  # alpha: only "a" is pairable, D_e 0
    every = stats.agreement([["a", "a"], ["a", None]], categories=["a", "b"], bootstrap=0)
    assert every.fleiss_kappa.value is None  # every rating "a": P_e is 1


def test_conger_kappa_with_one_category_pairable_and_another_in_a_single_rating() -> None:
    # Conger (1980) with Gwet's (2014) missing ratings: each rater's shares over the units
    # it rated (rater 0: a 1/2, b 1/2; rater 1: a 1), p_k their mean (3/4, 1/4),
    # s2_k = sum_g (p_gk - p_k)^2 / (R - 1) = (1/8, 1/8), P_e = sum_k p_k^2 - s2_k / R =
    # 10/16 - 2/16 = 1/2, P_a = 1: kappa 1. It used to be reported undefined ("expected
    # agreement is 1"); gwet.conger_kappa gave 1 all along
    report = stats.agreement([["a", "a"], ["b", None]], categories=["a", "b"], bootstrap=20)
    assert report.conger_kappa.value == approx(1.0, 12)
    assert report.conger_kappa.p_e == approx(0.5, 12)
    every = stats.agreement([["a", "a"], ["a", None]], categories=["a", "b"], bootstrap=0)
    assert every.conger_kappa.value is None  # every rating "a": P_e is 1
