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


def test_system_resamples_drawn_in_chunks_are_the_draws_of_one_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(5)
    x = {i: float(rng.random()) for i in range(301)}
    y = {i: float(rng.random()) for i in range(301)}
    systems = {i: f"model-{i % 4}" for i in range(301)}
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    replicates = mc._replicates
    monkeypatch.setattr(
        mc, "_replicates", lambda w, a, b: seen.append((a, b)) or replicates(w, a, b)
    )
    mc.system_correlation(x, y, systems, level="system", bootstrap=250, seed=3)
    draws = np.random.default_rng(3)
    for column, model in enumerate(sorted(set(systems.values()))):
        keys = [k for k in x if systems[k] == model]
        xs, ys = np.array([x[k] for k in keys]), np.array([y[k] for k in keys])
        idx = draws.integers(0, len(keys), size=(250, len(keys)))
        assert np.array_equal(seen[-1][0][:, column], xs[idx].mean(axis=1))
        assert np.array_equal(seen[-1][1][:, column], ys[idx].mean(axis=1))
