"""Bootstrap resampling of clustered means, on plain data (no Django): a mean over units
that belong to clusters (sentences of a document, a response's sentences), with a 95 %
percentile interval from resampling whole clusters with replacement (Davison & Hinkley
1997, sec. 3.8); the resample counts drawn once per (seed, clusters, resamples) and kept
for the other means over the same clusters. Reference: stats/reference.py
(`cluster_draws`, `clustered_mean`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .coefficient import Coefficient as Estimate
from .inter_rater import percentile_ci

CONFIDENCE = 0.95
FloatArray = npt.NDArray[np.float64]
Counts = npt.NDArray[np.unsignedinteger]  # how often each unit is drawn, per resample


def draw_counts(rng: np.random.Generator, n: int, bootstrap: int) -> Counts:
    """How often each of n units is drawn in each of `bootstrap` resamples of n units with
    replacement (resamples x units), as the smallest unsigned integers that hold them (a
    count is rarely above 10: a byte each): the counts of rng.integers(0, n, (bootstrap,
    n)) (the same draws as one call), drawn and counted 100 resamples at a time."""
    chunks = []
    for start in range(0, bootstrap, 100):
        drawn = rng.integers(0, n, size=(min(100, bootstrap - start), n), dtype=np.int32)
        shifted = drawn + (n * np.arange(len(drawn), dtype=np.int64))[:, None]
        counts = np.bincount(shifted.ravel(), minlength=len(drawn) * n)
        chunks.append(counts.reshape(len(drawn), n).astype(np.min_scalar_type(counts.max())))
    return np.vstack(chunks)


# (seed, units, resamples) -> draw_counts(np.random.default_rng(seed), units, resamples)
Draws = dict[tuple[int, int, int], Counts]
DRAWS_BYTES = 100_000_000  # a Draws keeps at most this much (then draws again)


def seeded_counts(seed: int, n: int, bootstrap: int, draws: Draws | None = None) -> Counts:
    """`draw_counts(np.random.default_rng(seed), n, bootstrap)`; with `draws`, drawn once
    per (seed, n, bootstrap) and kept there for the next call (the same counts: a report
    resamples the same documents for every extractor and pair of extractors)."""
    counts = draws.get((seed, n, bootstrap)) if draws is not None else None
    if counts is None:
        counts = draw_counts(np.random.default_rng(seed), n, bootstrap)
        if (
            draws is not None
            and sum(c.nbytes for c in draws.values()) + counts.nbytes <= DRAWS_BYTES
        ):
            draws[(seed, n, bootstrap)] = counts
    return counts


def clustered_means(
    columns: Sequence[tuple[npt.ArrayLike, npt.ArrayLike | None]],
    cluster: npt.ArrayLike,
    n_clusters: int,
    bootstrap: int,
    seed: int,
    draws: Draws | None = None,
) -> list[Estimate]:
    """The mean of each column (values, keep mask or None for all) over its kept units,
    with a percentile interval from resampling the clusters: one set of draws (seeded)
    for every column, streamed 100 resamples at a time."""
    owners_all = np.asarray(cluster, dtype=np.intp)
    totals = np.zeros((n_clusters, 2 * len(columns)))  # per cluster: sum, count per column
    for j, (values, keep) in enumerate(columns):
        mask = np.ones(len(owners_all), dtype=bool) if keep is None else np.asarray(keep, bool)
        owners = owners_all[mask]
        weights = np.asarray(values, dtype=np.float64)[mask]
        totals[:, 2 * j] = np.bincount(owners, weights=weights, minlength=n_clusters)
        totals[:, 2 * j + 1] = np.bincount(owners, minlength=n_clusters)
    return resampled_means(totals, bootstrap, seed, draws)


def resampled_means(
    totals: FloatArray, bootstrap: int, seed: int, draws: Draws | None = None
) -> list[Estimate]:
    """`totals` holds per cluster (row) the sum and the count of units of each mean (two
    columns per mean): each mean's value, and its percentile interval from resampling
    the clusters, one set of draws (seeded) for every mean, 100 resamples at a time."""
    n_clusters = len(totals)
    resampled = None
    if bootstrap and n_clusters:
        counts = seeded_counts(seed, n_clusters, bootstrap, draws)
        resampled = np.empty((bootstrap, totals.shape[1]))
        for start in range(0, bootstrap, 100):  # as floats, 100 resamples at a time
            resampled[start : start + 100] = counts[start : start + 100].astype(np.float64) @ totals
    out = []
    for j in range(0, totals.shape[1], 2):
        n_kept = int(totals[:, j + 1].sum())
        if not n_kept:
            out.append(Estimate("mean", None, undefined_reason="no units"))
            continue
        value = float(totals[:, j].sum() / totals[:, j + 1].sum())
        if resampled is None:
            out.append(Estimate("mean", value, n_units=n_kept))
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios = resampled[:, j] / resampled[:, j + 1]
        low, high, note = percentile_ci(ratios, CONFIDENCE)
        out.append(Estimate("mean", value, low, high, note=note, n_units=n_kept))
    return out
