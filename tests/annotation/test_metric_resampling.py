"""The vectorised resampling formulas of stats.correlation and stats.resampling against scipy on the
resampled data written out (each point repeated as often as it was drawn)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats as scipy_stats

from annotation.stats import claim_lists, correlation, resampling
from annotation.stats import reference as ref


def midranks(w: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each point's mid-rank within each resample, the point counted w times: the
    reference the vectorised ranks are checked against (checked against scipy below)."""
    per_value, inverse = correlation._per_value(w, values)
    below = np.cumsum(per_value, axis=1) - per_value
    return np.asarray((below + (per_value + 1) / 2)[:, inverse], dtype=np.float64)


@pytest.mark.parametrize("n", [6, 60, 400])
def test_weighted_kendall_and_midranks_match_scipy_on_the_expanded_resamples(n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.integers(0, 7, n).astype(np.float64)  # many ties, as scores have
    b = rng.integers(0, 5, n) + 0.5 * a
    w = rng.multinomial(2 * n, np.ones(n) / n, size=20).astype(np.float64)
    taus = correlation._kendall(w, a, b)
    ranks = midranks(w, a)
    for row, weights in enumerate(w):
        counts = weights.astype(int)
        xa, xb = np.repeat(a, counts), np.repeat(b, counts)
        assert taus[row] == pytest.approx(scipy_stats.kendalltau(xa, xb).statistic, abs=1e-12)
        drawn = counts > 0
        expected = scipy_stats.rankdata(xa)  # mid-ranks of the expanded sample, per point
        first = np.cumsum(counts) - counts
        assert np.allclose(ranks[row][drawn], expected[first[drawn]])


@pytest.mark.parametrize("n", [3, 12, 90])
def test_shared_points_pearson_and_spearman_equal_the_weighted_formulas(n: int) -> None:
    """_replicates on points shared by every row (the example level) takes Pearson's r
    from one product of the weights with the points' values and Spearman's rho from the
    distinct values' ranks: the weighted formulas on every point (`_pearson` of the
    values and of `midranks`) to 1e-12, NaN on the same rows (a resample that draws one
    value of a or b)."""
    rng = np.random.default_rng(n)
    a = rng.integers(0, 5, n) / 4  # scores with ties
    b = np.round(rng.integers(0, 3, n) / 2 + 0.3 * a, 3)
    w = rng.multinomial(n, np.ones(n) / n, size=400).astype(np.float64)
    w[0] = 0
    w[0, :2] = [2, 1] if a[0] == a[1] else [3, 0]  # one value of a drawn
    got = correlation._replicates(w, a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = {
            "pearson": correlation._pearson(w, a, b),
            "spearman": correlation._pearson(w, midranks(w, a), midranks(w, b)),
        }
    for name, values in expected.items():
        assert np.isnan(got[name][0]) and np.isfinite(got[name][1:]).any()
        assert np.array_equal(np.isnan(got[name]), np.isnan(values))
        defined = ~np.isnan(values)
        assert np.allclose(got[name][defined], values[defined], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    ("n", "bootstrap", "seed"),
    [(1, 1000, 0), (3, 7, 1), (4001, 1000, 3), (37, 250, 9), (10_001, 150, 5), (70_001, 3, 2)],
)
def test_cluster_weights_drawn_in_chunks_are_the_draws_of_one_call(
    n: int, bootstrap: int, seed: int
) -> None:
    drawn = np.random.default_rng(seed).integers(0, n, size=(bootstrap, n))
    expected = np.array([np.bincount(row, minlength=n) for row in drawn], dtype=np.float64)
    assert np.array_equal(
        resampling.draw_counts(np.random.default_rng(seed), n, bootstrap), expected
    )


def test_kept_draws_give_the_same_means_as_fresh_draws() -> None:
    """list_similarity and claim_density with a `draws` dict kept between calls (a
    report's extractors over the same documents) give what fresh calls give, bit for bit,
    and draw once per (seed, units, resamples)."""
    rng = np.random.default_rng(11)
    pairs = [
        claim_lists.ListPair(
            doc, tuple("c" * int(k) for k in rng.integers(0, 3, 2)), ("c",) * (doc % 3)
        )
        for doc in range(40)
        for _ in range(3)
    ]
    responses = [
        claim_lists.ResponseExtraction(doc, f"d{doc % 2}", int(rng.integers(0, 9)), 3, int(doc % 4))
        for doc in range(40)
    ]
    draws: resampling.Draws = {}
    for _ in range(2):  # the second call reads the kept counts
        assert claim_lists.list_similarity(pairs, bootstrap=300, seed=4, draws=draws) == (
            claim_lists.list_similarity(pairs, bootstrap=300, seed=4)
        )
        assert claim_lists.claim_density(responses, bootstrap=300, seed=4, draws=draws) == (
            claim_lists.claim_density(responses, bootstrap=300, seed=4)
        )
    assert sorted(draws) == [(4, 20, 300), (4, 40, 300)]
    assert all(counts.dtype == np.uint8 for counts in draws.values())


def test_kept_draws_stop_at_their_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts that would take the kept draws over DRAWS_BYTES are drawn, used, not kept."""
    monkeypatch.setattr(resampling, "DRAWS_BYTES", 300 * 50)
    draws: resampling.Draws = {}
    responses = [claim_lists.ResponseExtraction(doc, "d", doc % 5, 4, doc % 3) for doc in range(40)]
    fresh = claim_lists.claim_density(responses, bootstrap=300, seed=1)
    assert claim_lists.claim_density(responses, bootstrap=300, seed=1, draws=draws) == fresh
    assert sorted(draws) == [(1, 40, 300)]  # 12,000 bytes; another 40 responses would not fit
    assert claim_lists.claim_density(responses[:30], bootstrap=300, seed=1, draws=draws) == (
        claim_lists.claim_density(responses[:30], bootstrap=300, seed=1)
    )
    assert sorted(draws) == [(1, 40, 300)]  # 30 x 300 more bytes did not fit either


def test_system_resamples_drawn_in_chunks_are_the_draws_of_one_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(5)
    x = {i: float(rng.random()) for i in range(301)}
    y = {i: float(rng.random()) for i in range(301)}
    systems = {i: f"model-{i % 4}" for i in range(301)}
    seen: list[np.ndarray] = []  # each scoring's resampled system means (then observed)
    parts = correlation.system_parts
    monkeypatch.setattr(
        correlation, "system_parts", lambda values: seen.append(values) or parts(values)
    )
    correlation.system_correlation(x, y, systems, level="system", bootstrap=250, seed=3)
    assert len(seen) == 2
    draws = np.random.default_rng(3)
    for column, model in enumerate(sorted(set(systems.values()))):
        keys = [k for k in x if systems[k] == model]
        xs, ys = np.array([x[k] for k in keys]), np.array([y[k] for k in keys])
        idx = draws.integers(0, len(keys), size=(250, len(keys)))
        # The same draws; the means are (drawn counts) @ scores, exact where two of a row
        # are close (tied_means_exact), not the same float sums: equal to 1e-12.
        assert np.allclose(seen[0][:-1, column], xs[idx].mean(axis=1), rtol=0, atol=1e-12)
        assert np.allclose(seen[1][:-1, column], ys[idx].mean(axis=1), rtol=0, atol=1e-12)
        assert seen[0][-1, column] == pytest.approx(np.mean(xs), abs=1e-12)
        assert seen[1][-1, column] == pytest.approx(np.mean(ys), abs=1e-12)


def test_system_resamples_shared_between_calls_are_the_draws_of_a_fresh_call() -> None:
    rng = np.random.default_rng(7)
    systems = {i: f"model-{i % 5}" for i in range(200)}
    scores = [{i: float(rng.random()) for i in range(200)} for _ in range(3)]
    draws: dict = {}
    for x, y in [(scores[0], scores[1]), (scores[1], scores[2]), (scores[0], scores[2])]:
        shared = correlation.system_correlation(x, y, systems, level="s", seed=4, draws=draws)
        assert shared == correlation.system_correlation(x, y, systems, level="s", seed=4)
    assert len(draws) == 1  # one set of draws for the three calls (same sizes, same seed)


def test_equal_resampled_system_means_tie(monkeypatch: pytest.MonkeyPatch) -> None:
    """Systems A and B have the same scores in another order: in a resample that draws
    the same scores from both, their means are equal and must tie in the ranks (a float
    sum in another order, 0.1 + 0.2 + 0.3 against 0.3 + 0.2 + 0.1, differs by 1e-16)."""
    tenths = {"A": [1, 2, 3], "B": [3, 2, 1], "C": [5, 9, 4], "D": [8, 6, 7]}
    x, y, systems = {}, {}, {}
    for name, values in tenths.items():
        for i, v in enumerate(values):
            key = f"{name}{i}"
            x[key], y[key], systems[key] = v / 10, (v % 4) / 10, name
    seen: list[np.ndarray] = []  # x's resampled system means (then observed), then y's
    parts = correlation.system_parts
    monkeypatch.setattr(
        correlation, "system_parts", lambda values: seen.append(values) or parts(values)
    )
    correlation.system_correlation(x, y, systems, level="system", bootstrap=400, seed=1)
    draws = np.random.default_rng(1)
    idx = {name: draws.integers(0, 3, size=(400, 3)) for name in tenths}  # sorted order
    sums = {name: np.array(values)[idx[name]].sum(axis=1) for name, values in tenths.items()}
    equal = sums["A"] == sums["B"]
    assert equal.sum() > 50
    a, b = seen[0][:-1][equal, 0], seen[0][:-1][equal, 1]
    assert np.array_equal(a, b), (a[a != b].tolist(), b[a != b].tolist())


def test_equal_means_tie_and_close_ones_do_not() -> None:
    """Means computed exactly where they are close: system A's scores 1/3, 4/3, 3 and 4/3
    sum to 6.000000000000001 as floats and B's four 1.5 to 6: equal means, which must tie
    (observed, and drawn once each in the first resample); 0.6 + 0.1 + 0.1 and
    0.4 + 0.4 + 0 too (0.7999999999999999 and 0.8 as floats). C and D score one response
    1/999,983 and 1/999,979 and 99 zero: their means differ by 4e-14 and must not tie
    (rounding every mean to 12 decimals tied them)."""
    values = [np.array([1 / 3, 4 / 3, 3.0, 4 / 3]), np.full(4, 1.5)]
    assert float(values[0].sum()) != 6.0
    counts = [np.array([[1.0, 1, 1, 1], [4, 0, 0, 0]]), np.ones((2, 4))]
    means = correlation.tied_means_exact(values, counts)
    assert means[0, 0] == means[0, 1] == means[2, 0] == means[2, 1] == 1.5
    assert means[1, 0] == pytest.approx(1 / 3, abs=1e-15)  # 1/3 against 1.5: apart
    assert correlation.exact_mean([0.6, 0.1, 0.1]) == correlation.exact_mean([0.4, 0.4, 0.0])
    assert 0.6 + 0.1 + 0.1 != 0.4 + 0.4 + 0.0
    close = [np.r_[1 / 999_983, np.zeros(99)], np.r_[1 / 999_979, np.zeros(99)]]
    means = correlation.tied_means_exact(close, [np.ones((1, 100)), np.ones((1, 100))])
    assert means[0, 0] < means[0, 1] and means[1, 0] < means[1, 1]
    assert np.round(means[0, 0], 12) == np.round(means[0, 1], 12)


def test_a_table_of_many_scorings_gives_each_pair_what_the_pair_alone_gives() -> None:
    """The report correlates every pair of scorings through one ScoreTable (responses as
    array rows, resampled system means kept between pairs): each pair's correlations equal
    those of the two scorings alone, whatever responses each scored and in which order."""
    rng = np.random.default_rng(5)
    responses = [f"r{i}" for i in range(300)]
    systems = {r: f"model {i % 4}" for i, r in enumerate(responses) if i % 23}
    scores = {}
    for name in ("a", "b", "c"):
        kept = [r for r in responses if rng.random() < 0.9]
        rng.shuffle(kept)  # each scoring lists its responses in its own order
        scores[name] = {r: float(rng.integers(0, 6)) / 5 for r in kept}
    table = correlation.ScoreTable(scores)
    draws: correlation.SystemDraws = {}
    codes = table.systems(systems)
    for a, b in (("a", "b"), ("a", "c"), ("b", "c"), ("c", "a")):
        x, y = scores[a], scores[b]
        alone = correlation.example_correlation(x, y, bootstrap=200, seed=2)
        pairing = correlation.example_pairing(table, a, b, bootstrap=200, seed=2)
        assert correlation.correlate_many([pairing])[0] == alone
        assert [p[0] for p in alone.points] == [k for k in x if k in y]
        alone = correlation.system_correlation(x, y, systems, level="s", bootstrap=200, seed=2)
        pairing = correlation.system_pairing(
            table, a, b, codes, level="s", bootstrap=200, seed=2, draws=draws
        )
        assert correlation.correlate_many([pairing])[0] == alone
        assert alone.spearman.ci_low is not None


@pytest.mark.parametrize("cells", [correlation.STACKED_CELLS, 1, 9_000])
def test_pairs_weighed_together_get_what_each_pair_alone_gets(
    monkeypatch: pytest.MonkeyPatch, cells: int
) -> None:
    """example_pairings weighs the points of the pairs with as many responses together
    (one stacked product per 100 resamples, at most STACKED_CELLS weights at a time):
    each pair's pairing is the one it gets alone, bit for bit, whatever the batches
    (every pair at once, one a batch, a few) and however many responses each pair has."""
    rng = np.random.default_rng(8)
    keys = [f"r{i}" for i in range(90)]
    scores = {}
    for name in "abcde":
        kept = keys if name in "abc" else [k for k in keys if rng.random() < 0.8]
        scores[name] = {k: float(rng.integers(0, 7)) / 6 for k in kept}
    scores["f"] = {k: 0.5 for k in keys[:2]}  # too few responses: no resamples
    monkeypatch.setattr(correlation, "STACKED_CELLS", cells)
    pairs = [("a", "b"), ("a", "c"), ("b", "c"), ("d", "a"), ("e", "d"), ("a", "f"), ("c", "e")]
    table = correlation.ScoreTable(scores)
    many = correlation.example_pairings(table, pairs, bootstrap=250, seed=4)
    for (a, b), got in zip(pairs, many, strict=True):
        alone = correlation.example_pairing(
            correlation.ScoreTable(scores), a, b, bootstrap=250, seed=4
        )
        assert (got.x, got.y, got.labels) == (alone.x, alone.y, alone.labels)
        assert (got.bootstrap is None) == (alone.bootstrap is None) == (b == "f")
        for mine, theirs in zip(got.bootstrap or (), alone.bootstrap or (), strict=True):
            for name in correlation.COEFFICIENTS:
                assert np.array_equal(mine[name], theirs[name], equal_nan=True)
        assert correlation.correlate_many([got]) == correlation.correlate_many([alone])


def test_example_resamples_are_the_responses_drawn_with_replacement() -> None:
    """The example level resamples the responses: each interval is the percentile of the
    coefficient on the responses of each resample written out (reference.example_draws),
    and a pair computed after another on the same table, with the responses' draws
    shared, gets what a fresh call gives."""
    rng = np.random.default_rng(11)
    keys = [f"r{i}" for i in range(40)]
    scores = {name: {k: float(rng.integers(0, 5)) / 4 for k in keys} for name in "abc"}
    table = correlation.ScoreTable(scores)
    correlation.example_pairing(table, "a", "c", bootstrap=300, seed=3)
    shared = correlation.example_pairing(table, "a", "b", bootstrap=300, seed=3)
    assert list(table._counts) == [(3, 40, 300)]  # kept from the first pair, shared
    got = correlation.example_correlation(scores["a"], scores["b"], bootstrap=300, seed=3)
    assert correlation.correlate_many([shared])[0] == got
    x, y = list(scores["a"].values()), list(scores["b"].values())
    drawn = ref.example_draws(x, y, bootstrap=300, seed=3)
    assert all(len(xs) == len(keys) for xs, _ in drawn)
    resampled = {
        "pearson": [scipy_stats.pearsonr(xs, ys).statistic for xs, ys in drawn],
        "spearman": [scipy_stats.spearmanr(xs, ys).statistic for xs, ys in drawn],
        "kendall": [scipy_stats.kendalltau(xs, ys).statistic for xs, ys in drawn],
    }
    for name, values in resampled.items():
        low, high = np.quantile(np.array(values)[np.isfinite(values)], [0.025, 0.975])
        coefficient = getattr(got, name)
        assert coefficient.ci_low == pytest.approx(low, abs=1e-12)
        assert coefficient.ci_high == pytest.approx(high, abs=1e-12)


def test_system_parts_give_the_replicates_of_the_pair_to_the_last_bit() -> None:
    """Each scoring's parts computed once (deviations, ranks) give for a pair the weighted
    formulas with weights all ones, bit for bit, constant rows (NaN) included; Kendall's
    tau-b per row is scipy's."""
    rng = np.random.default_rng(21)
    x = rng.integers(0, 4, size=(300, 7)) / 3  # ties within rows
    y = np.round(rng.random((300, 7)), 1)
    x[5], y[9] = 0.5, 0.25  # constant rows
    got = correlation._system_replicates(correlation.system_parts(x), correlation.system_parts(y))
    ones = np.ones(x.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = {
            "pearson": correlation._pearson(ones, x, y),
            "spearman": correlation._pearson(
                ones, scipy_stats.rankdata(x, axis=1), scipy_stats.rankdata(y, axis=1)
            ),
            "kendall": correlation._kendall_rows(x, y),
        }
    for name in correlation.COEFFICIENTS:
        assert np.array_equal(got[name], expected[name], equal_nan=True)
        assert np.isnan(got[name][[5, 9]]).all() and np.isfinite(got[name][:5]).all()
    for row in range(10, 40):
        tau = scipy_stats.kendalltau(x[row], y[row]).statistic
        assert got["kendall"][row] == pytest.approx(tau, abs=1e-12)


def test_correlating_many_pairs_at_once_gives_what_each_alone_gives() -> None:
    """correlate_many (scipy's pearsonr over the pairs with as many points at once, the
    intervals in one np.quantile) gives each pairing what correlate gives it alone, bit
    for bit: lengths mixed (odd ones too), undefined pairs, resamples with undefined values
    (percentile_ci's note), a pairing without resamples."""
    rng = np.random.default_rng(17)
    pairings = []
    for n in (3, 4, 12, 12, 77, 77, 1001, 2, 5):
        x = (rng.integers(0, 9, n) / 8).tolist()
        y = (rng.integers(0, 5, n) / 4 + 0.1 * np.array(x)).tolist()
        pairings.append(correlation.Pairing(x, y, level=f"n={n}"))
    pairings.append(correlation.Pairing([0.5] * 6, list(range(6)), what="systems"))  # constant
    table = correlation.ScoreTable(
        {"a": dict(enumerate(pairings[4].x)), "b": dict(enumerate(pairings[4].y))}
    )
    pairings.append(correlation.example_pairing(table, "a", "b", bootstrap=300, seed=1))
    pairings.append(correlation.example_pairing(table, "a", "b", bootstrap=50, seed=2))
    undefined = correlation.example_pairing(table, "a", "b", bootstrap=300, seed=3)
    assert undefined.bootstrap is not None
    undefined.bootstrap[1]["kendall"][:7] = np.nan  # resamples left out, with a note
    pairings.append(undefined)
    pairings.append(pairings[5]._replace(bootstrap=None))
    many = correlation.correlate_many(pairings)
    alone = [correlation.correlate_many([p])[0] for p in pairings]
    # Spearman's rho and p-value come from one 2-D spearmanr over every pairing with as
    # many points: its correlation matrix's products sum in another order than a 2 x 2
    # one's, so they may differ from a call per pairing in the last bits (to 1e-12); its
    # interval is still the same (the resamples do not go through scipy).
    for c, c_alone in zip(many, alone, strict=True):
        rho, rho_alone = c.spearman, c_alone.spearman
        for v, v_alone in ((rho.value, rho_alone.value), (rho.p_value, rho_alone.p_value)):
            assert (v is None) == (v_alone is None)
            assert v is None or v == pytest.approx(v_alone, rel=1e-12, abs=1e-15)
        same_rho = replace(rho, value=rho_alone.value, p_value=rho_alone.p_value)
        assert replace(c, spearman=same_rho) == c_alone  # every other figure bit for bit
    assert [c.undefined_reason is None for c in many].count(False) == 2
    assert many[-2].kendall.note == "7 of 300 bootstrap resamples were undefined and left out"
    assert many[-1].spearman.note is None and many[-1].spearman.ci_low is None
    for c, p in zip(many[:7], pairings[:7], strict=True):  # scipy on the pair alone (1-D)
        assert (c.pearson.value, c.pearson.p_value) == tuple(scipy_stats.pearsonr(p.x, p.y))
    low, high = np.quantile(pairings[10].bootstrap[1]["spearman"], [0.025, 0.975])
    assert many[10].spearman.ci_low == pytest.approx(low, abs=1e-15)
    assert many[10].spearman.ci_high == pytest.approx(high, abs=1e-15)


def test_spearman_of_many_pairs_is_batched_and_equals_a_call_per_pair() -> None:
    """More pairs with as many points than SPEARMAN_BATCH: spearmanr's matrix grows as the
    square of the rows (3,000 pairs took 1.5 GB), so they go in batches, each pair's rho
    and p-value those of a call on the pair alone (to 1e-12)."""
    rng = np.random.default_rng(5)
    m = 2 * correlation.SPEARMAN_BATCH + 7
    xs = rng.integers(0, 6, (m, 9)).astype(np.float64)
    ys = xs + rng.integers(0, 3, (m, 9))
    rhos, p_values = correlation._spearman_pairs(xs, ys)
    assert len(rhos) == len(p_values) == m
    for x, y, rho, p in zip(xs, ys, rhos, p_values, strict=True):
        alone = scipy_stats.spearmanr(x, y)
        assert rho == pytest.approx(alone.statistic, rel=1e-12, abs=1e-15)
        assert p == pytest.approx(alone.pvalue, rel=1e-12, abs=1e-15)


def test_resamples_that_are_not_kept_are_drawn_a_chunk_at_a_time() -> None:
    """Memory stays at a chunk of 100 resamples whatever their number: 20,000 clusters x
    5,000 resamples would be 100 MB of counts as one array (and as much again to stack
    it); drawn 100 resamples at a time, the peak is that of one chunk's draws."""
    import tracemalloc

    totals = np.ones((20_000, 2))
    tracemalloc.start()
    try:
        (mean,) = resampling.resampled_means(totals, 5_000, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert mean.value == 1.0 and mean.ci_low == mean.ci_high == 1.0
    assert peak < 60 * 2**20, peak
