"""The vectorised resampling formulas of stats.metric_comparison against scipy on the
resampled data written out (each point repeated as often as it was drawn)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from annotation.stats import metric_comparison as mc


@pytest.mark.parametrize("n", [6, 60, 400])
def test_weighted_kendall_and_midranks_match_scipy_on_the_expanded_resamples(n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.integers(0, 7, n).astype(np.float64)  # many ties, as scores have
    b = rng.integers(0, 5, n) + 0.5 * a
    w = rng.multinomial(2 * n, np.ones(n) / n, size=20).astype(np.float64)
    taus = mc._kendall(w, a, b)
    ranks = mc._midranks(w, a)
    for row, weights in enumerate(w):
        counts = weights.astype(int)
        xa, xb = np.repeat(a, counts), np.repeat(b, counts)
        assert taus[row] == pytest.approx(scipy_stats.kendalltau(xa, xb).statistic, abs=1e-12)
        drawn = counts > 0
        expected = scipy_stats.rankdata(xa)  # mid-ranks of the expanded sample, per point
        first = np.cumsum(counts) - counts
        assert np.allclose(ranks[row][drawn], expected[first[drawn]])


@pytest.mark.parametrize(
    ("n", "bootstrap", "seed"), [(1, 1000, 0), (3, 7, 1), (4001, 1000, 3), (37, 250, 9)]
)
def test_cluster_weights_drawn_in_chunks_are_the_draws_of_one_call(
    n: int, bootstrap: int, seed: int
) -> None:
    drawn = np.random.default_rng(seed).integers(0, n, size=(bootstrap, n))
    expected = np.array([np.bincount(row, minlength=n) for row in drawn], dtype=np.float64)
    assert np.array_equal(mc._cluster_weights(n, bootstrap, seed), expected)
