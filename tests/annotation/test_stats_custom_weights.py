"""Custom agreement weights and distances, and each coefficient's parts, against published
worked examples.

- Artstein & Poesio (2008), "Inter-coder agreement for computational linguistics",
  Computational Linguistics 34(4), p. 568: two coders, 100 utterances, STAT / IReq / Chck,
  with the distance 0.5 between Chck and the others. Transcribed in dkpro/dkpro-statistics,
  dkpro-statistics-agreement/src/test/java/org/dkpro/statistics/agreement/coding/
  ArtsteinPoesio2008Test.java (commit 1c3ef18bee2435d63604df16e965daaf07590701),
  testWeightedAgreement: weighted kappa 0.8163 with D_o 0.090 and D_e 0.490; alpha
  0.8156 with D_o 0.090 and D_e 0.4879; unweighted kappa 0.8013 (D_o 0.120, D_e 0.604),
  nominal alpha 0.800 (D_o 0.120, D_e 0.601). Tolerance 0.001, as the test's.
- Fleiss' kappa's P_i and p_j: the worked example of Wikipedia's "Fleiss' kappa" article
  (14 raters, 10 subjects, 5 categories; test_stats.WIKIPEDIA_FLEISS): p_j 0.143 0.200
  0.279 0.150 0.229; P_i 1.000 0.253 0.308 0.440 0.330 0.462 0.242 0.176 0.286 0.286;
  P-bar 0.378, P_e 0.213, kappa 0.210.
- Krippendorff's alpha's parts: the reliability data of Krippendorff (2011), "Computing
  Krippendorff's alpha-reliability" (4 observers, 12 units, values 1-5, missing values;
  test_stats.KRIPPENDORFF_C): n = 40 pairable values, n_c 9 13 10 5 3, nominal alpha
  0.743; the coincidence matrix compared with the `krippendorff` library's own.
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from krippendorff.krippendorff import _coincidences

from annotation import stats

from .test_stats import KRIPPENDORFF_C, ONE_TO_FIVE, WIKIPEDIA_FLEISS

AP_LABELS = ["STAT", "IReq", "Chck"]
AP_CELLS = [  # (count, coder A, coder B): Artstein & Poesio (2008), p. 568
    (46, "STAT", "STAT"),
    (6, "IReq", "STAT"),
    (32, "IReq", "IReq"),
    (6, "IReq", "Chck"),
    (10, "Chck", "Chck"),
]
AP_WEIGHTS = [[1, 0, 0.5], [0, 1, 0.5], [0.5, 0.5, 1]]  # agreement: 1 - distance
AP_DISTANCE = [[0, 1, 0.5], [1, 0, 0.5], [0.5, 0.5, 0]]


def _ap_labels() -> tuple[list[str], list[str]]:
    a: list[str] = []
    b: list[str] = []
    for count, x, y in AP_CELLS:
        a += [x] * count
        b += [y] * count
    return a, b


def _ap_units() -> dict[int, dict[str, str]]:
    a, b = _ap_labels()
    return {i: {"A": x, "B": y} for i, (x, y) in enumerate(zip(a, b, strict=True))}


def test_artstein_poesio_weighted_kappa_is_08163():
    a, b = _ap_labels()
    result = stats.cohen_kappa(a, b, labels=AP_LABELS, weights=AP_WEIGHTS)
    assert result.name == "Cohen's weighted kappa (custom)"
    assert result.value == pytest.approx(0.8163, abs=0.001)
    assert result.d_o == pytest.approx(0.090, abs=0.001)
    assert result.d_e == pytest.approx(0.490, abs=0.001)
    assert result.value == pytest.approx(1 - result.d_o / result.d_e, abs=1e-12)
    plain = stats.cohen_kappa(a, b, labels=AP_LABELS)
    assert (plain.value, plain.d_o, plain.d_e) == pytest.approx((0.8013, 0.120, 0.604), abs=0.001)


def test_identity_matrix_is_unweighted_and_linear_matrix_is_linear():
    a, b = _ap_labels()
    identity = stats.cohen_kappa(a, b, labels=AP_LABELS, weights=np.eye(3))
    assert identity.value == pytest.approx(stats.cohen_kappa(a, b, labels=AP_LABELS).value)
    linear = [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]
    mine = stats.cohen_kappa(a, b, labels=AP_LABELS, weights=linear)
    theirs = stats.cohen_kappa(a, b, labels=AP_LABELS, weights="linear")
    assert (mine.value, mine.se, mine.p_e) == pytest.approx((theirs.value, theirs.se, theirs.p_e))


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([[1, 0], [0, 1]], "categories are 3"),
        ([[1, 0, 0], [0, 1, 0]], "square"),
        ([[0.9, 0, 0], [0, 1, 0], [0, 0, 1]], "1 on the diagonal"),
        ([[1, 2, 0], [0, 1, 0], [0, 0, 1]], "between 0 and 1"),
        ([[1, float("nan"), 0], [0, 1, 0], [0, 0, 1]], "finite"),
    ],
)
def test_bad_weight_matrices_are_refused(weights, message):
    a, b = _ap_labels()
    with pytest.raises(ValueError, match=message):
        stats.cohen_kappa(a, b, labels=AP_LABELS, weights=weights)


def test_weight_matrix_needs_the_categories_order():
    a, b = _ap_labels()
    with pytest.raises(ValueError, match="labels"):
        stats.cohen_kappa(a, b, weights=AP_WEIGHTS)


def test_artstein_poesio_alpha_with_a_distance_matrix():
    report = stats.agreement(_ap_units(), categories=AP_LABELS, distance=AP_DISTANCE, bootstrap=100)
    alpha = report.krippendorff_alpha
    assert alpha.name == "Krippendorff's alpha (custom distance)"
    assert (alpha.value, alpha.d_o, alpha.d_e) == pytest.approx((0.8156, 0.090, 0.4879), abs=0.001)
    assert alpha.ci_low is not None  # the resampling formula reproduced the library's value
    assert report.distance == tuple(tuple(float(x) for x in row) for row in AP_DISTANCE)
    nominal = stats.agreement(_ap_units(), categories=AP_LABELS, bootstrap=0)
    a = nominal.krippendorff_alpha
    assert (a.value, a.d_o, a.d_e) == pytest.approx((0.800, 0.120, 0.601), abs=0.001)


def test_alpha_with_a_distance_equals_the_krippendorff_library():
    """A matrix and the same distance as a callable, against krippendorff.alpha given
    that callable, on units with missing values and three raters."""
    rng = np.random.default_rng(3)
    categories = ["low", "mid", "high", "n/a"]
    matrix = np.array([[0, 1, 4, 2], [1, 0, 1, 2], [4, 1, 0, 2], [2, 2, 2, 0]], dtype=float)
    units = {}
    for u in range(60):
        labels = {r: categories[int(rng.integers(4))] for r in "ABC" if rng.random() < 0.85}
        units[u] = labels

    def metric(v1, v2, i1, i2, n_v, dtype=np.float64):
        return matrix[i1, i2]

    by_matrix = stats.agreement(units, categories=categories, distance=matrix, bootstrap=0)
    by_callable = stats.agreement(units, categories=categories, distance=metric, bootstrap=0)
    codes = np.array(
        [[categories.index(units[u][r]) if r in units[u] else np.nan for u in units] for r in "ABC"]
    )
    library = krippendorff.alpha(
        reliability_data=codes, value_domain=[0, 1, 2, 3], level_of_measurement=metric
    )
    assert by_matrix.krippendorff_alpha.value == pytest.approx(library, abs=1e-12)
    assert by_callable.krippendorff_alpha.value == pytest.approx(library, abs=1e-12)


def test_a_callable_distance_may_read_the_pairable_values():
    """Krippendorff's ordinal metric written as a callable (it reads n_v) gives the
    library's ordinal alpha, here and in every bootstrap resample's check."""

    def ordinal(v1, v2, i1, i2, n_v, dtype=np.float64):
        cum = np.cumsum(n_v)
        lo, hi = np.minimum(i1, i2), np.maximum(i1, i2)
        return (cum[hi] - cum[lo] + n_v[lo] - (n_v[lo] + n_v[hi]) / 2) ** 2

    units = {u: {"A": a, "B": b} for u, (a, b) in enumerate(zip(*_ap_labels(), strict=True))}
    custom = stats.agreement(units, categories=AP_LABELS, distance=ordinal, bootstrap=50)
    level = stats.agreement(units, categories=AP_LABELS, level="ordinal", bootstrap=50)
    assert custom.krippendorff_alpha.value == pytest.approx(level.krippendorff_alpha.value)
    assert custom.krippendorff_alpha.ci_low == pytest.approx(level.krippendorff_alpha.ci_low)


@pytest.mark.parametrize(
    ("distance", "message"),
    [
        ([[0, 1], [1, 0]], "categories are 3"),
        ([[0, 1, 1], [1, 0, 1]], "square"),
        ([[1, 1, 1], [1, 0, 1], [1, 1, 0]], "0 on the diagonal"),
        ([[0, 1, 2], [1, 0, 1], [1, 1, 0]], "symmetric"),
        ([[0, -1, 1], [-1, 0, 1], [1, 1, 0]], ">= 0"),
    ],
)
def test_bad_distances_are_refused(distance, message):
    with pytest.raises(ValueError, match=message):
        stats.agreement(_ap_units(), categories=AP_LABELS, distance=distance, bootstrap=0)


def test_distance_needs_categories_and_no_level():
    with pytest.raises(ValueError, match="categories"):
        stats.agreement(_ap_units(), distance=AP_DISTANCE, bootstrap=0)
    with pytest.raises(ValueError, match="not both"):
        stats.agreement(
            _ap_units(), categories=AP_LABELS, distance=AP_DISTANCE, level="ordinal", bootstrap=0
        )
    with pytest.raises(ValueError, match="squared differences"):
        stats.agreement(
            _ap_units(),
            categories=AP_LABELS,
            distance=lambda v1, v2, i1, i2, n_v, dtype=None: np.ones((3, 3)),
            bootstrap=0,
        )


def test_fleiss_parts_are_the_worked_example():
    ratings = stats.Ratings.from_counts(WIKIPEDIA_FLEISS, categories=[1, 2, 3, 4, 5])
    report = stats.agreement(ratings, categories=[1, 2, 3, 4, 5], bootstrap=0)
    parts = report.fleiss_parts
    assert parts is not None
    assert list(parts.p_j.values()) == pytest.approx([0.143, 0.200, 0.279, 0.150, 0.229], abs=5e-4)
    assert parts.p_i == pytest.approx(
        [1.000, 0.253, 0.308, 0.440, 0.330, 0.462, 0.242, 0.176, 0.286, 0.286], abs=5e-4
    )
    assert (parts.p_bar, parts.p_e) == pytest.approx((0.378, 0.213), abs=5e-4)
    assert report.fleiss_kappa.value == pytest.approx(0.210, abs=5e-4)
    assert report.fleiss_kappa.p_o == pytest.approx(parts.p_bar, abs=1e-12)
    assert report.fleiss_kappa.p_e == pytest.approx(parts.p_e, abs=1e-12)
    assert len(parts.units) == 10


def test_alpha_parts_are_krippendorffs_example():
    report = stats.agreement(KRIPPENDORFF_C, categories=ONE_TO_FIVE, bootstrap=0)
    parts = report.alpha_parts
    assert parts is not None
    assert parts.pairable == pytest.approx(40)
    assert list(parts.n_c.values()) == pytest.approx([9, 13, 10, 5, 3])
    assert report.krippendorff_alpha.value == pytest.approx(0.743, abs=5e-4)
    # the coincidence matrix the library builds from the same value counts
    counts = np.array([[row.count(c) for c in ONE_TO_FIVE] for row in KRIPPENDORFF_C])
    pairable = counts[counts.sum(axis=1) >= 2]
    assert np.array(parts.coincidences) == pytest.approx(_coincidences(pairable), abs=1e-12)
    assert np.array(parts.coincidences)[0] == pytest.approx([7, 4 / 3, 1 / 3, 1 / 3, 0])
    # alpha from the parts: 1 - D_o / D_e
    o, d = np.array(parts.coincidences), np.array(parts.distances)
    n_c = np.array(list(parts.n_c.values()))
    d_o = (o * d).sum() / parts.pairable
    d_e = (np.outer(n_c, n_c) * d).sum() / (parts.pairable * (parts.pairable - 1))
    assert 1 - d_o / d_e == pytest.approx(report.krippendorff_alpha.value, abs=1e-12)


def test_alpha_with_a_distance_of_zero_between_the_categories_used_is_undefined():
    # Krippendorff (2011): alpha = 1 - D_o / D_e. A distance that puts the two categories
    # used at 0 makes D_e 0: alpha is 0/0, undefined with its reason, not NaN as a value
    # (found by the property test against stats/reference.py)
    report = stats.agreement(
        [["a", "b"], ["a", "a"]], categories=["a", "b"], distance=[[0, 0], [0, 0]], bootstrap=50
    )
    alpha = report.krippendorff_alpha
    assert alpha.value is None and alpha.ci_low is None
    assert "D_e is 0" in (alpha.undefined_reason or "")


def test_weighted_kappa_with_full_agreement_weights_between_the_categories_used_is_undefined():
    # Cohen (1968): kappa_w = (p_o - p_e) / (1 - p_e) with p_e = sum w_ij p_i. p_.j. Weights
    # that count rater A's "b" against rater B's "a" as full agreement make p_e 1 here:
    # kappa is 0/0, undefined with its reason, not NaN as a value (found by the property
    # test against stats/reference.py)
    result = stats.cohen_kappa(["b"], ["a"], labels=["a", "b"], weights=[[1, 0], [1, 1]])
    assert result.value is None and result.se is None
    assert "expected agreement is 1" in (result.undefined_reason or "")
    still = stats.cohen_kappa(["b", "a"], ["a", "a"], labels=["a", "b"], weights=[[1, 0], [1, 1]])
    assert still.value is None  # p_e: rows (.5, .5), columns (1, 0): 1 x .5 + 1 x .5 = 1
