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
