"""Every fast path of the metric sections against stats/reference.py, its textbook form,
on random data (hypothesis): scores with many ties, responses one scoring left out,
constant scores, one unit, one cluster; and the references themselves against scipy and
numpy where those compute the same formula."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from annotation.stats import claim_lists, correlation, resampling
from annotation.stats import reference as ref
from annotation.stats.inter_rater import percentile_ci

CHECKS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# scores as the report has them: ratios of small counts, so many ties
score = st.builds(lambda k, d: k / d, st.integers(0, 6), st.sampled_from([1, 2, 3, 4, 6]))
TOL = 1e-9


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


# --------------------------------------------------------------------------- references


@CHECKS
@given(
    st.lists(st.one_of(score, st.just(math.nan)), max_size=40),
    st.sampled_from([0.9, 0.95, 0.99]),
)
def test_the_percentile_interval_is_numpys_quantile(values: list[float], confidence: float) -> None:
    low, high, dropped = ref.percentile_interval(values, confidence)
    array = np.array(values, dtype=np.float64)
    fast = percentile_ci(array, confidence)
    assert dropped == int(np.isnan(array).sum())
    if not values:
        assert fast == (None, None, None)
        return
    assert close(low, fast[0]) and close(high, fast[1])
    assert (fast[2] is not None) == bool(dropped)


@CHECKS
@given(st.lists(st.tuples(score, score), min_size=2, max_size=25))
def test_the_reference_coefficients_are_scipys(points: list[tuple[float, float]]) -> None:
    x, y = [p[0] for p in points], [p[1] for p in points]
    if len(set(x)) < 2 or len(set(y)) < 2:
        assert math.isnan(ref.pearson(x, y)) and math.isnan(ref.kendall_tau_b(x, y))
        return
    assert close(ref.pearson(x, y), scipy_stats.pearsonr(x, y).statistic)
    assert close(ref.spearman(x, y), scipy_stats.spearmanr(x, y).statistic)
    assert close(ref.kendall_tau_b(x, y), scipy_stats.kendalltau(x, y).statistic)
    assert ref.midranks(x) == scipy_stats.rankdata(x).tolist()


@CHECKS
@given(st.integers(1, 30), st.integers(1, 50), st.integers(0, 2**32 - 1))
def test_cluster_draws_are_the_fast_paths_counts(n: int, bootstrap: int, seed: int) -> None:
    counts = resampling.draw_counts(np.random.default_rng(seed), n, bootstrap)
    drawn = ref.cluster_draws(n, bootstrap, seed)
    assert counts.tolist() == [
        np.bincount(row, minlength=n).astype(float).tolist() for row in drawn
    ]


# --------------------------------------------------------------------------- correlations


points_and_weights = st.integers(1, 12).flatmap(
    lambda n: st.tuples(
        st.lists(st.tuples(score, score), min_size=n, max_size=n),
        st.lists(st.lists(st.integers(0, 4), min_size=n, max_size=n), min_size=1, max_size=6),
    )
)


@CHECKS
@given(points_and_weights)
@example(([(0.5, 0.5)], [[3]]))  # one point: every coefficient undefined
@example(([(0.0, 1.0), (1.0, 0.0)], [[0, 0], [1, 1], [2, 0]]))  # nothing drawn, constant
def test_the_resampled_coefficients_are_those_of_the_resamples_written_out(
    data: tuple[list[tuple[float, float]], list[list[int]]],
) -> None:
    """`_replicates` with points shared by every row (each point counted as often as a
    resample drew it: the example level) and with a row of points each (each counted
    once: the system level, `_system_replicates` of each scoring's parts)."""
    points, weights = data
    a = np.array([p[0] for p in points])
    b = np.array([p[1] for p in points])
    w = np.array(weights, dtype=np.float64)
    shared = correlation._replicates(w, a, b)
    rows = np.repeat(a[None, :], len(w), axis=0) + w  # a row of points each
    rows_b = np.repeat(b[None, :], len(w), axis=0) * (w % 2)
    each = correlation._system_replicates(
        correlation.system_parts(rows), correlation.system_parts(rows_b)
    )
    for name, formula in ref.COEFFICIENTS.items():
        for i, row in enumerate(weights):
            xs = [v for v, k in zip(a.tolist(), row, strict=True) for _ in range(k)]
            ys = [v for v, k in zip(b.tolist(), row, strict=True) for _ in range(k)]
            expected = formula(xs, ys) if len(xs) > 1 else math.nan
            assert close(float(shared[name][i]), expected), (name, i)
            assert close(float(each[name][i]), formula(rows[i].tolist(), rows_b[i].tolist()))


@CHECKS
@given(
    st.integers(1, 70).flatmap(
        lambda n: st.tuples(
            st.lists(st.tuples(score, score), min_size=n, max_size=n),  # repeated points too
            st.lists(st.lists(st.integers(0, 5), min_size=n, max_size=n), min_size=1, max_size=4),
        )
    )
)
@example(([(0.0, 1.0), (0.0, 1.0), (1.0, 0.0)], [[2, 1, 1], [0, 3, 0]]))  # a point twice
def test_weighted_kendall_is_scipys_on_the_draw_written_out(
    data: tuple[list[tuple[float, float]], list[list[int]]],
) -> None:
    """Knight's weighted tau-b per resample (`_kendall`, O(points log points)) is scipy's
    kendalltau of the resample written out, each point repeated as often as drawn: ties in
    x, in y and in both, points given twice, points not drawn; NaN where scipy's is."""
    points, weights = data
    a, b = np.array(points).T
    w = np.array(weights, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        got = correlation._kendall(w, a, b)
    for i, row in enumerate(weights):
        xs, ys = np.repeat(a, row), np.repeat(b, row)
        constant = len(set(xs.tolist())) < 2 or len(set(ys.tolist())) < 2
        expected = math.nan if constant else scipy_stats.kendalltau(xs, ys).statistic
        assert close(float(got[i]), float(expected)), i


def test_weighted_kendall_has_no_size_limit() -> None:
    """Above the 1,500 distinct points the quadratic form stopped at: an interval, from
    each resample's tau-b as scipy gives it on the draw written out."""
    rng = np.random.default_rng(5)
    n = 2_500
    x = {i: v for i, v in enumerate(rng.integers(0, 400, n) / 399)}
    y = {i: round(v + rng.normal(0, 0.2), 3) for i, v in x.items()}
    c = correlation.example_correlation(x, y, bootstrap=20, seed=1)
    assert c.kendall.ci_low is not None and c.kendall.note is None
    assert c.kendall.ci_low < c.kendall.value < c.kendall.ci_high  # type: ignore[operator]
    drawn = ref.example_draws(list(x.values()), list(y.values()), bootstrap=20, seed=1)
    taus = [scipy_stats.kendalltau(xs, ys).statistic for xs, ys in drawn]
    low, high, _ = ref.percentile_interval(taus)
    assert close(c.kendall.ci_low, low) and close(c.kendall.ci_high, high)


@CHECKS
@given(
    st.lists(st.tuples(st.one_of(st.none(), score), st.one_of(st.none(), score)), max_size=30),
    st.integers(0, 1000),
    st.sampled_from([1, 7, 60]),
)
@example([(0.5, 0.5)] * 3 + [(0.5, 1.0)], 0, 60)  # x constant: undefined
@example([(0.0, 0.0), (1.0, 1.0), (0.5, None), (None, 0.5), (1.0, 0.0)], 3, 60)
def test_example_correlations_are_the_textbook_ones(
    rows: list[tuple[float | None, float | None]], seed: int, bootstrap: int
) -> None:
    """Over the responses both scorings scored (None: not scored), each interval from
    resampling the responses; resamples that draw one value (NaN) are left out."""
    x = {i: v for i, (v, _) in enumerate(rows) if v is not None}
    y = {i: v for i, (_, v) in enumerate(rows) if v is not None}
    got = correlation.example_correlation(x, y, bootstrap=bootstrap, seed=seed)
    both = [k for k in x if k in y]
    xs, ys = [x[k] for k in both], [y[k] for k in both]
    if got.undefined_reason is not None:
        assert len(both) < correlation.MIN_POINTS or len(set(xs)) == 1 or len(set(ys)) == 1
        return
    for name in ref.COEFFICIENTS:
        value, (low, high, dropped) = ref.example_correlation(
            xs, ys, name, bootstrap=bootstrap, seed=seed
        )
        coefficient = getattr(got, name)
        assert close(coefficient.value, value), name
        assert close(coefficient.ci_low, low) and close(coefficient.ci_high, high), name
        assert (coefficient.note is not None) == bool(dropped) or low is None


scorings = st.lists(
    st.tuples(st.one_of(st.none(), score), st.one_of(st.none(), score), st.integers(0, 3)),
    min_size=1,
    max_size=40,
)


@CHECKS
@given(scorings, st.integers(0, 1000), st.sampled_from([1, 7, 60]))
def test_system_correlations_are_the_textbook_ones(
    rows: list[tuple[float | None, float | None, int]], seed: int, bootstrap: int
) -> None:
    """Responses one scoring did not score (None) are left out; systems with one response,
    fewer than three systems (undefined), constant means (undefined or NaN resamples)."""
    x = {i: v for i, (v, _, _) in enumerate(rows) if v is not None}
    y = {i: v for i, (_, v, _) in enumerate(rows) if v is not None}
    systems = {i: f"model {s}" for i, (_, _, s) in enumerate(rows)}
    got = correlation.system_correlation(
        x, y, systems, level="system", bootstrap=bootstrap, seed=seed
    )
    if got.undefined_reason is not None:
        assert (
            got.n < correlation.MIN_POINTS
            or len({p[1] for p in got.points}) == 1
            or (len({p[2] for p in got.points}) == 1)
        )
        return
    for name in ref.COEFFICIENTS:
        value, (low, high, dropped) = ref.system_correlation(
            x, y, systems, name, bootstrap=bootstrap, seed=seed
        )
        coefficient = getattr(got, name)
        assert close(coefficient.value, value), name
        assert close(coefficient.ci_low, low) and close(coefficient.ci_high, high), name
        assert (coefficient.note is not None) == bool(dropped) or low is None


def test_equal_observed_system_means_tie() -> None:
    """Found by the test above: model 3's x scores 1/3, 4/3, 3 and 4/3 sum to
    6.000000000000001 as floats, so its float mean did not tie with model 0's 1.5."""
    rows = [(0.0, 0.0, 1), (1 / 3, 0.0, 3), (1.5, 0.0, 0), (4 / 3, 0.0, 3), (3.0, 0.0, 3)]
    rows.append((4 / 3, 1.0, 3))
    x = {i: v for i, (v, _, _) in enumerate(rows)}
    y = {i: v for i, (_, v, _) in enumerate(rows)}
    systems = {i: f"model {s}" for i, (_, _, s) in enumerate(rows)}
    got = correlation.system_correlation(x, y, systems, level="system", bootstrap=1, seed=0)
    value, _ = ref.system_correlation(x, y, systems, "spearman", bootstrap=1, seed=0)
    assert value == 0.5 and got.spearman.value == pytest.approx(value)


# --------------------------------------------------------------------------- means


pairs_strategy = st.lists(
    st.tuples(
        st.integers(0, 5),
        st.lists(st.sampled_from(["c1", "c2", "c3"]), max_size=3),
        st.lists(st.sampled_from(["c1", "c2", "c4"]), max_size=3),
    ),
    min_size=1,
    max_size=30,
)


@CHECKS
@given(pairs_strategy, st.integers(0, 1000), st.sampled_from([1, 9, 100]))
@example([(0, [], [])], 0, 100)  # one unit, both lists empty
def test_list_similarity_means_are_clustered_means(
    units: list[tuple[int, list[str], list[str]]], seed: int, bootstrap: int
) -> None:
    pairs = [claim_lists.ListPair(doc, tuple(a), tuple(b)) for doc, a, b in units]
    got = claim_lists.list_similarity(pairs, bootstrap=bootstrap, seed=seed)
    documents = [p.document for p in pairs]
    columns = {
        "exact_match": [float(claim_lists.exact_match(p.a, p.b)) for p in pairs],
        "rouge_l": [claim_lists.rouge_l(p.a, p.b) for p in pairs],
        "a_claims_per_unit": [float(len(p.a)) for p in pairs],
        "b_empty_share": [float(not p.b) for p in pairs],
    }
    for name, values in columns.items():
        mean, (low, high, _) = ref.clustered_mean(values, documents, bootstrap=bootstrap, seed=seed)
        estimate = getattr(got, name)
        assert close(estimate.value, mean), name
        assert close(estimate.ci_low, low) and close(estimate.ci_high, high), name
    with_claims = [bool(p.a or p.b) for p in pairs]
    mean, (low, high, _) = ref.clustered_mean(
        columns["exact_match"], documents, bootstrap=bootstrap, seed=seed, keep=with_claims
    )
    estimate = got.exact_match_with_claims
    assert close(estimate.value, mean)
    assert close(estimate.ci_low, low) and close(estimate.ci_high, high)


@CHECKS
@given(
    st.lists(
        st.tuples(st.integers(0, 9), st.integers(0, 5), st.one_of(st.none(), st.integers(0, 5))),
        min_size=1,
        max_size=30,
    ),
    st.integers(0, 1000),
)
def test_claims_per_sentence_are_clustered_means(
    rows: list[tuple[int, int, int | None]], seed: int
) -> None:
    """VerRatio: the mean over responses of claims / sentences (each response a cluster of
    one unit); the empty-sentence share pools the sentences of the aligned responses (each
    response a cluster of its sentences)."""
    responses = [
        claim_lists.ResponseExtraction(
            i, "d", claims, sentences, None if e is None else min(e, sentences)
        )
        for i, (claims, sentences, e) in enumerate(rows)
    ]
    usable = [r for r in responses if r.sentences]
    if not usable:  # responses without sentences are left out
        assert claim_lists.claim_density(responses, bootstrap=50, seed=seed) == []
        return
    (got,) = claim_lists.claim_density(responses, bootstrap=50, seed=seed)
    mean, (low, high, _) = ref.clustered_mean(
        [r.claims / r.sentences for r in usable],
        [r.document for r in usable],
        bootstrap=50,
        seed=seed,
    )
    assert close(got.ratio.value, mean)
    assert close(got.ratio.ci_low, low) and close(got.ratio.ci_high, high)
    aligned = [r for r in usable if r.empty_sentences is not None]
    values = [float(k < (r.empty_sentences or 0)) for r in aligned for k in range(r.sentences)]
    clusters = [r.document for r in aligned for _ in range(r.sentences)]
    mean, (low, high, _) = ref.clustered_mean(values, clusters, bootstrap=50, seed=seed)
    assert close(got.empty_share.value, mean)
    assert close(got.empty_share.ci_low, low) and close(got.empty_share.ci_high, high)


def test_equal_means_are_the_same_float_in_the_reference() -> None:
    """0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1 differ as float sums; their exact means do not."""
    assert (0.1 + 0.2 + 0.3) != (0.3 + 0.2 + 0.1)
    assert ref.exact_mean([0.1, 0.2, 0.3]) == ref.exact_mean([0.3, 0.2, 0.1])
    assert ref.exact_mean([0.1, 0.3]) == ref.exact_mean([0.2, 0.2])


@pytest.mark.parametrize("n", [1, 2])
def test_too_few_points_are_undefined_in_both(n: int) -> None:
    x = {i: i / 2 for i in range(n)}
    got = correlation.example_correlation(x, x, bootstrap=20, seed=0)
    assert got.undefined_reason is not None and got.pearson.value is None
    assert n < 2 or math.isclose(ref.pearson([0.0, 0.5], [0.0, 0.5]), 1.0)


def test_one_function_per_coefficient_and_level() -> None:
    """pearson_example ... kendall_system: each the reference's value and interval."""
    rng = np.random.default_rng(3)
    x = {i: float(rng.integers(0, 5)) / 4 for i in range(60)}
    y = {i: float(rng.integers(0, 3)) / 2 for i in range(60) if i % 7}
    systems = {i: f"model {i % 4}" for i in range(60)}
    both = [k for k in x if k in y]
    for name in ref.COEFFICIENTS:
        got = getattr(correlation, f"{name}_example")(x, y, bootstrap=80, seed=2)
        value, (low, high, _) = ref.example_correlation(
            [x[k] for k in both], [y[k] for k in both], name, bootstrap=80, seed=2
        )
        assert close(got.value, value) and close(got.ci_low, low) and close(got.ci_high, high)
        got = getattr(correlation, f"{name}_system")(x, y, systems, bootstrap=80, seed=2)
        value, (low, high, _) = ref.system_correlation(x, y, systems, name, bootstrap=80, seed=2)
        assert close(got.value, value) and close(got.ci_low, low) and close(got.ci_high, high)
    undefined = correlation.pearson_example({1: 0.5, 2: 0.5}, {1: 0.0, 2: 1.0})
    assert undefined.value is None and undefined.note is not None
