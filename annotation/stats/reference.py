"""The textbook form of each coefficient and interval the metric sections of the report
compute: plain loops over plain Python numbers, written to be read, not to be fast.

Each fast path of `resampling`, `claim_lists` and `correlation` is checked against the
function here of the same name on random data, ties, missing scores and one-unit cases
included (tests/annotation/test_stats_reference.py, hypothesis); these are checked against scipy
and numpy where those have the same formula. A fast path without its reference here is
not merged (docs/development.md, "Performance policy").

The random draws are the fast paths' own (numpy's default_rng(seed), the same calls in
the same order), so an interval here is the fast path's to the last digits, not only in
distribution: the reference draws the same resamples and then computes the statistic on
each resample written out, one at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction

import numpy as np

Interval = tuple[float | None, float | None, int]  # low, high, undefined resamples left out


# --------------------------------------------------------------------------- intervals


def percentile_interval(values: Sequence[float], confidence: float = 0.95) -> Interval:
    """The bootstrap percentile interval (Efron & Tibshirani 1993, ch. 13.3): the
    (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of the resampled values, each
    quantile by linear interpolation between order statistics (Hyndman & Fan 1996,
    definition 7, numpy's default): with the n values sorted, x_(1) <= ... <= x_(n), the
    p quantile is x_(k) + f (x_(k+1) - x_(k)) where h = (n - 1) p + 1, k = floor(h),
    f = h - k. Undefined resamples (NaN) are left out and counted."""
    finite = sorted(v for v in values if not math.isnan(v))
    dropped = len(values) - len(finite)
    if not finite:
        return None, None, dropped

    def quantile(p: float) -> float:
        h = (len(finite) - 1) * p
        k = math.floor(h)
        if k + 1 >= len(finite):
            return finite[-1]
        return finite[k] + (h - k) * (finite[k + 1] - finite[k])

    tail = (1 - confidence) / 2
    return quantile(tail), quantile(1 - tail), dropped


def cluster_draws(n_clusters: int, bootstrap: int, seed: int) -> list[list[int]]:
    """The clusters each resample draws: `bootstrap` resamples of n_clusters clusters
    with replacement, uniformly (the nonparametric bootstrap of a clustered sample,
    Davison & Hinkley 1997, sec. 3.8: resample whole clusters, keep their units
    together), from numpy's default_rng(seed).integers(0, n_clusters, (bootstrap,
    n_clusters))."""
    rng = np.random.default_rng(seed)
    drawn: list[list[int]] = rng.integers(0, n_clusters, size=(bootstrap, n_clusters)).tolist()
    return drawn


def clustered_mean(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    bootstrap: int,
    seed: int,
    confidence: float = 0.95,
    keep: Sequence[bool] | None = None,
) -> tuple[float | None, Interval]:
    """The mean of the kept units' values (`keep`: all by default), sum(values) / units,
    and its percentile interval from resampling the clusters (`cluster_draws`; every
    cluster, numbered in order of first appearance, drawn whether or not it has kept
    units): each resample's mean is the drawn clusters' summed values over their summed
    kept units, a cluster drawn twice counted twice (a ratio estimator: clusters of
    unequal sizes)."""
    kept = [True] * len(values) if keep is None else list(keep)
    if not any(kept):
        return None, (None, None, 0)
    order = list(dict.fromkeys(clusters))
    sums = {c: 0.0 for c in order}
    sizes = {c: 0 for c in order}
    for value, cluster, k in zip(values, clusters, kept, strict=True):
        if k:
            sums[cluster] += value
            sizes[cluster] += 1
    resampled = []
    for drawn in cluster_draws(len(order), bootstrap, seed) if bootstrap else []:
        total = sum(sums[order[i]] for i in drawn)
        units = sum(sizes[order[i]] for i in drawn)
        resampled.append(total / units if units else math.nan)
    mean = sum(v for v, k in zip(values, kept, strict=True) if k) / sum(kept)
    return mean, percentile_interval(resampled, confidence) if bootstrap else (None, None, 0)


# --------------------------------------------------------------------------- correlations


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's product-moment correlation (Pearson 1895):
    r = sum (x_i - mean x)(y_i - mean y) / sqrt(sum (x_i - mean x)^2 sum (y_i - mean y)^2).
    NaN when x or y is constant."""
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else math.nan


def midranks(x: Sequence[float]) -> list[float]:
    """Each value's rank among x, 1 for the smallest, tied values sharing the mean of the
    ranks they span (mid-ranks, Kendall & Gibbons 1990, sec. 3.2)."""
    out = []
    for a in x:
        below = sum(1 for b in x if b < a)
        equal = sum(1 for b in x if b == a)
        out.append(below + (equal + 1) / 2)
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho (Spearman 1904) with ties: Pearson's r of the mid-ranks."""
    return pearson(midranks(x), midranks(y))


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b (Kendall 1945): over the n (n - 1) / 2 pairs of points,
    (concordant - discordant) / sqrt((n0 - ties in x) (n0 - ties in y)), n0 = n (n - 1) / 2;
    a pair tied in both x and y counts in both ties. NaN when x or y is constant."""
    n = len(x)
    concordant = discordant = ties_x = ties_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            ties_x += dx == 0
            ties_y += dy == 0
            if dx * dy > 0:
                concordant += 1
            elif dx * dy < 0:
                discordant += 1
    n0 = n * (n - 1) // 2
    denominator = (n0 - ties_x) * (n0 - ties_y)
    return (concordant - discordant) / math.sqrt(denominator) if denominator else math.nan


COEFFICIENTS: dict[str, Callable[[Sequence[float], Sequence[float]], float]] = {
    "pearson": pearson,
    "spearman": spearman,
    "kendall": kendall_tau_b,
}


def example_draws(
    x: Sequence[float], y: Sequence[float], *, bootstrap: int, seed: int
) -> list[tuple[list[float], list[float]]]:
    """The example-level resamples: n responses drawn with replacement from the n scored
    (x, y) pairs, each resample written out. Drawn as numpy draws them: the distinct
    (x, y) points in order of first appearance, and per resample how often each is drawn,
    default_rng(seed).multinomial(n, each point's share of the responses, bootstrap)
    (the same distribution as drawing n responses uniformly)."""
    points = list(dict.fromkeys(zip(x, y, strict=True)))
    counts = {p: 0 for p in points}
    for p in zip(x, y, strict=True):
        counts[p] += 1
    n = len(x)
    shares = np.array([counts[p] for p in points], dtype=np.float64)
    rng = np.random.default_rng(seed)
    drawn = rng.multinomial(n, shares / shares.sum(), size=bootstrap).tolist()
    out = []
    for row in drawn:
        xs = [p[0] for p, k in zip(points, row, strict=True) for _ in range(k)]
        ys = [p[1] for p, k in zip(points, row, strict=True) for _ in range(k)]
        out.append((xs, ys))
    return out


def example_correlation(
    x: Sequence[float],
    y: Sequence[float],
    coefficient: str,
    *,
    bootstrap: int,
    seed: int,
    confidence: float = 0.95,
) -> tuple[float, Interval]:
    """A coefficient over the responses (pairs of scores) and its percentile interval
    from resampling the responses (`example_draws`)."""
    formula = COEFFICIENTS[coefficient]
    resampled = [formula(xs, ys) for xs, ys in example_draws(x, y, bootstrap=bootstrap, seed=seed)]
    return formula(x, y), percentile_interval(resampled, confidence)


def exact_mean(values: Sequence[float]) -> float:
    """The mean of scores as the fractions they stand for (each the nearest fraction
    with a denominator of at most 10^6: a ratio of counts is recovered exactly), summed
    exactly and rounded once: equal means are the same float whatever the order of the
    scores, so they tie."""
    fractions = [Fraction(v).limit_denominator(10**6) for v in values]
    return float(sum(fractions, Fraction(0)) / len(values))


def system_correlation(
    x: Mapping[Hashable, float],
    y: Mapping[Hashable, float],
    systems: Mapping[Hashable, str],
    coefficient: str,
    *,
    bootstrap: int,
    seed: int,
    confidence: float = 0.95,
) -> tuple[float, Interval]:
    """A coefficient over the systems' mean scores (each system's mean of x and of y over
    the responses both scored, in x's order), and its percentile interval from resampling
    the responses within each system (a stratified bootstrap, Davison & Hinkley 1997,
    sec. 3.2: each system keeps its number of responses; systems in name order, each
    drawing default_rng(seed).integers(0, its responses, (bootstrap, its responses)) in
    turn from one generator). Means are exact (`exact_mean`)."""
    per_system: dict[str, list[Hashable]] = {}
    for key in x:
        if key in y and key in systems:
            per_system.setdefault(systems[key], []).append(key)
    names = sorted(per_system)
    formula = COEFFICIENTS[coefficient]
    xm = [exact_mean([x[k] for k in per_system[s]]) for s in names]
    ym = [exact_mean([y[k] for k in per_system[s]]) for s in names]
    rng = np.random.default_rng(seed)
    drawn = {
        s: rng.integers(0, len(per_system[s]), size=(bootstrap, len(per_system[s]))).tolist()
        for s in names
    }
    resampled = []
    for b in range(bootstrap):
        xs = [exact_mean([x[per_system[s][i]] for i in drawn[s][b]]) for s in names]
        ys = [exact_mean([y[per_system[s][i]] for i in drawn[s][b]]) for s in names]
        resampled.append(formula(xs, ys))
    return formula(xm, ym), percentile_interval(resampled, confidence)
