"""Bootstrap resampling of clustered means, on plain data (no Django): a mean over units
that belong to clusters (sentences of a document, a response's sentences), with a 95 %
percentile interval from resampling whole clusters with replacement (Davison & Hinkley
1997, sec. 3.8); the resample counts drawn once per (seed, clusters, resamples) and kept
for the other means over the same clusters. Reference: stats/reference.py
(`cluster_draws`, `clustered_mean`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from .coefficient import Coefficient as Estimate
from .inter_rater import percentile_ci

CONFIDENCE = 0.95
FloatArray = npt.NDArray[np.float64]
Counts = npt.NDArray[np.unsignedinteger]  # how often each unit is drawn, per resample


COUNTED = 1 << 16  # counts made at once (a block of int64s that stays in the cache)


def _chunks(rng: np.random.Generator, n: int, bootstrap: int) -> Iterator[Counts]:
    """`draw_counts`' rows, drawn 100 resamples at a time and counted a few resamples at a
    time (about COUNTED counts, narrowed while they are in the cache)."""
    step = max(1, COUNTED // max(n, 1))
    for start in range(0, bootstrap, 100):
        drawn = rng.integers(0, n, size=(min(100, bootstrap - start), n), dtype=np.int32)
        yield np.vstack([_counted(drawn[i : i + step]) for i in range(0, len(drawn), step)])


def _counted(drawn: npt.NDArray[np.int32]) -> Counts:
    """How often each of n units is drawn in each row of `drawn` (rows x n), as the
    smallest unsigned integers that hold them."""
    rows, n = drawn.shape
    shifted = drawn + (n * np.arange(rows, dtype=np.int64))[:, None]
    counts = np.bincount(shifted.ravel(), minlength=rows * n).reshape(rows, n)
    return counts.astype(np.min_scalar_type(counts.max()))


def draw_counts(rng: np.random.Generator, n: int, bootstrap: int) -> Counts:
    """How often each of n units is drawn in each of `bootstrap` resamples of n units with
    replacement (resamples x units), as the smallest unsigned integers that hold them (a
    count is rarely above 10: a byte each): the counts of rng.integers(0, n, (bootstrap,
    n)) (the same draws as one call), drawn 100 resamples at a time."""
    return np.vstack([*_chunks(rng, n, bootstrap), np.zeros((0, n), np.uint8)])


# (seed, units, resamples) -> draw_counts(np.random.default_rng(seed), units, resamples)
Draws = dict[tuple[int, int, int], Counts]
DRAWS_BYTES = 100_000_000  # a Draws keeps at most this much (then draws again)


def seeded_chunks(seed: int, n: int, bootstrap: int, draws: Draws | None) -> Iterator[Counts]:
    """`draw_counts(np.random.default_rng(seed), n, bootstrap)` 100 resamples at a time;
    with `draws`, drawn once per (seed, n, bootstrap) and kept there for the next call (a
    report resamples the same documents for every extractor and pair of extractors) while
    they fit in DRAWS_BYTES; above it drawn chunk by chunk again, so that memory stays at
    a chunk whatever the number of resamples."""
    key = (seed, n, bootstrap)
    room = DRAWS_BYTES - sum(c.nbytes for c in (draws or {}).values())
    if draws is not None and key not in draws and n * bootstrap <= room:  # a byte a count
        draws[key] = draw_counts(np.random.default_rng(seed), n, bootstrap)
    if draws is not None and key in draws:
        kept = draws[key]
        yield from (kept[start : start + 100] for start in range(0, bootstrap, 100))
    else:
        yield from _chunks(np.random.default_rng(seed), n, bootstrap)


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
        resampled = np.empty((bootstrap, totals.shape[1]))
        chunks = seeded_chunks(seed, n_clusters, bootstrap, draws)
        for start, counts in zip(range(0, bootstrap, 100), chunks, strict=True):
            resampled[start : start + 100] = counts.astype(np.float64) @ totals
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
