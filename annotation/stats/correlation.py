"""Scores of two scoring systems over the same responses correlated, on plain data (no
Django): FActScore (Min et al., 2023: supported / (supported + not supported), irrelevant
facts left out) and F1@K (`pipeline.score`) per response, then Pearson's r, Spearman's rho
and Kendall's tau-b (scipy) per example and per system (the mean score of each source
model), as VeriFastScore reports its agreement with VeriScore; one public function per
coefficient and level (`pearson_example` ... `kendall_system`), the report's batched path
`correlate_many`. Intervals are 95 % bootstrap percentile intervals: example-level
correlations resample responses; system-level ones resample responses within each system
and recompute the means. Anything undefined is None with the reason, never NaN.
Reference: stats/reference.py."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from scipy import sparse as scipy_sparse
from scipy import stats as scipy_stats

from pipeline.score import f1_at_k, median_k

from .classification import SUPPORTED, UNSUPPORTED, normalise_verdict
from .inter_rater import percentile_cis
from .resampling import CONFIDENCE, Counts, Draws, FloatArray, draw_counts, seeded_chunks

MIN_POINTS = 3  # a correlation over fewer points is reported as undefined


# --------------------------------------------------------------------------- scores


@dataclass(frozen=True)
class ResponseLabels:
    """One response's claims as one label source judged them."""

    response: Hashable
    source_model: str
    domain: str
    claims: int  # every claim of the list, labelled or not
    labels: tuple[str | None, ...]  # one per labelled claim; None = no usable label


def factscore(labels: Sequence[str | None]) -> float | None:
    """Supported / (supported + not supported); irrelevant and unlabelled facts are left
    out. None when no fact is supported or not supported."""
    binary = [_binary(label) for label in labels]
    s = binary.count(SUPPORTED)
    ns = binary.count(UNSUPPORTED)
    return s / (s + ns) if s + ns else None


def _binary(label: str | None) -> str | None:
    try:
        return normalise_verdict(label, mode="binary")
    except ValueError:
        return None


def response_scores(
    responses: Sequence[ResponseLabels], *, k_rule: str = "upper"
) -> dict[str, dict[Hashable, float]]:
    """{"FActScore": {response: score}, "F1@K": {...}}. K per domain is the median claim
    count of every response in it (pipeline.score); unlabelled and irrelevant claims are
    left out of the precision, as the pipeline leaves out failed verdicts."""
    counts: dict[str, list[int]] = defaultdict(list)
    for r in responses:
        counts[r.domain].append(r.claims)
    k = {d: median_k(c, k_rule) for d, c in counts.items()}
    out: dict[str, dict[Hashable, float]] = {"FActScore": {}, "F1@K": {}}
    binary_of: dict[str | None, str | None] = {}  # a few spellings, read once each
    for r in responses:
        for label in r.labels:
            if label not in binary_of:
                binary_of[label] = _binary(label)
        binary = [binary_of[label] for label in r.labels]
        s, ns = binary.count(SUPPORTED), binary.count(UNSUPPORTED)
        if s + ns:  # factscore(r.labels), F1@K over the verified claims
            out["FActScore"][r.response] = s / (s + ns)
            out["F1@K"][r.response] = f1_at_k(s, s + ns, k[r.domain])[2]
    return out


@dataclass(frozen=True)
class CorrelationCoefficient:
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    note: str | None = None


@dataclass(frozen=True)
class Correlation:
    level: str
    n: int
    pearson: CorrelationCoefficient
    spearman: CorrelationCoefficient
    kendall: CorrelationCoefficient
    undefined_reason: str | None = None
    # (label, x, y): responses at the example level, systems at the system level
    points: tuple[tuple[str, float, float], ...] = ()


Replicates = dict[str, FloatArray]  # coefficient name -> its value on each resample
SystemDraws = dict[tuple[int, int, tuple[int, ...]], list[Counts]]  # (seed, resamples, sizes)
COEFFICIENTS = ("pearson", "spearman", "kendall")


class Pairing(NamedTuple):
    """What `correlate` takes for one pair of scorings (`correlate_many` takes many)."""

    x: Sequence[float]
    y: Sequence[float]
    level: str = "example"
    what: str = "examples"
    labels: Sequence[str] | None = None
    bootstrap: tuple[Replicates, Replicates] | None = None


def correlate(
    x: Sequence[float],
    y: Sequence[float],
    *,
    level: str = "example",
    what: str = "examples",
    labels: Sequence[str] | None = None,
    bootstrap: tuple[Replicates, Replicates] | None = None,
) -> Correlation:
    """Pearson, Spearman and Kendall's tau-b with p-values, from scipy. `bootstrap` is
    (the vectorised formulas on the observed data, the same on every resample): the first
    must reproduce scipy's values before the second gives the intervals."""
    return correlate_many([Pairing(x, y, level, what, labels, bootstrap)])[0]


def correlate_many(pairings: Sequence[Pairing]) -> list[Correlation]:
    """`correlate` of each pairing: scipy's pearsonr and kendalltau once for the pairings
    with as many points (their axis= form: the same values as one call each), spearmanr's
    2-D form once for those pairings (`_spearman_pairs`), and the percentile intervals of
    every resampled coefficient (`percentile_cis`)."""
    found: list[Correlation] = []
    blank = CorrelationCoefficient(None)
    defined: dict[int, list[int]] = defaultdict(list)  # points -> pairings
    for i, (x, y, level, what, labels, _) in enumerate(pairings):
        n = len(x)
        points = tuple(
            zip(labels or [str(k) for k in range(n)], map(float, x), map(float, y), strict=True)
        )
        reason = None
        if n < MIN_POINTS:
            reason = f"undefined because fewer than {MIN_POINTS} {what}"
        elif len(set(x)) == 1 or len(set(y)) == 1:
            reason = f"undefined because one score is the same for all {what}"
        else:
            defined[n].append(i)
        found.append(Correlation(level, n, blank, blank, blank, reason, points))
    statistics: dict[tuple[int, str], tuple[float, float]] = {}  # scipy's (value, p-value)
    for same in defined.values():
        xs = np.array([pairings[i].x for i in same], dtype=np.float64)
        ys = np.array([pairings[i].y for i in same], dtype=np.float64)
        pearson = scipy_stats.pearsonr(xs, ys, axis=1)
        rhos = _spearman_pairs(xs, ys)
        tau = scipy_stats.kendalltau(xs, ys, axis=1)
        for i, r, p, rho, p_rho, t, p_t in zip(
            same,
            pearson.statistic.tolist(),
            pearson.pvalue.tolist(),
            *rhos,
            tau.statistic.tolist(),
            tau.pvalue.tolist(),
            strict=True,
        ):
            statistics[(i, "pearson")] = (r, p)
            statistics[(i, "spearman")] = (rho, p_rho)
            statistics[(i, "kendall")] = (t, p_t)
    resampled: dict[tuple[int, str], FloatArray] = {}
    for same in defined.values():
        for i in same:
            bootstrap = pairings[i].bootstrap
            if bootstrap is None:
                continue
            observed, replicates = bootstrap
            for name in COEFFICIENTS:
                value = statistics[(i, name)][0]
                if not np.isclose(observed[name][0], value):
                    raise AssertionError(
                        f"{name}: vectorised {observed[name][0]!r} != scipy {value!r}"
                    )
                resampled[(i, name)] = replicates[name]
    intervals = percentile_cis(resampled, CONFIDENCE)
    out = []
    for i, result in enumerate(found):
        if result.undefined_reason is None:
            coefficients = []
            for name in COEFFICIENTS:
                value, p_value = statistics[(i, name)]
                low, high, why = intervals.get((i, name), (None, None, None))
                coefficients.append(CorrelationCoefficient(value, low, high, p_value, why))
            pearson, spearman, kendall = coefficients
            result = replace(result, pearson=pearson, spearman=spearman, kendall=kendall)
        out.append(result)
    return out


def _spearman_pairs(xs: FloatArray, ys: FloatArray) -> tuple[list[float], list[float]]:
    """scipy's spearmanr (rho, p-value) of each row pair (xs[i], ys[i]): one 2-D call
    over every row (a matrix of all rows' coefficients, read at (x_i, y_i)) instead of a
    call per pair; the same values to ~1e-16 (its correlation matrix's products sum in
    another order), instead of paying scipy's checks once per pair."""
    if len(xs) > SPEARMAN_BATCH:  # the matrix grows as the square of the rows: in batches
        rhos: list[float] = []
        p_values: list[float] = []
        for start in range(0, len(xs), SPEARMAN_BATCH):
            rho, p = _spearman_pairs(
                xs[start : start + SPEARMAN_BATCH], ys[start : start + SPEARMAN_BATCH]
            )
            rhos += rho
            p_values += p
        return rhos, p_values
    if len(xs) == 1:
        result = scipy_stats.spearmanr(xs[0], ys[0])
        return [float(result.statistic)], [float(result.pvalue)]
    result = scipy_stats.spearmanr(np.vstack([xs, ys]), axis=1)  # rows are the variables
    m = len(xs)
    return (
        np.diagonal(result.statistic, offset=m).tolist(),
        np.diagonal(result.pvalue, offset=m).tolist(),
    )


# At most this many pairs per spearmanr call: it computes every row against every other
SPEARMAN_BATCH = 100


def _pearson(w: FloatArray, a: FloatArray, b: FloatArray) -> FloatArray:
    """Pearson's r per row of weights w (resample x points); a and b broadcast to w."""
    total = w.sum(axis=1, keepdims=True)
    da = a - (w * a).sum(axis=1, keepdims=True) / total
    db = b - (w * b).sum(axis=1, keepdims=True) / total
    r = (w * da * db).sum(axis=1) / np.sqrt((w * da**2).sum(axis=1) * (w * db**2).sum(axis=1))
    return np.asarray(r, dtype=np.float64)


def _per_value(w: FloatArray, values: FloatArray) -> tuple[FloatArray, npt.NDArray[np.intp]]:
    """The weight of each distinct value in each resample (rows x distinct values, in
    value order), and each point's value index: the points gathered by value and their
    whole counts summed with reduceat (exact in any order)."""
    _, inverse = np.unique(values, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])
    return np.add.reduceat(w[:, order], starts, axis=1), inverse


PerValue = tuple[FloatArray, npt.NDArray[np.intp]]  # what _per_value gives


def _kendall(
    w: FloatArray, a: FloatArray, b: FloatArray, known: tuple[PerValue, PerValue] | None = None
) -> FloatArray:
    """Kendall's tau-b per row of weights w (resamples x points) of points a and b shared
    by every row, each point counted w times: the tau-b of the sample written out, each
    point repeated as often as it was drawn (scipy's kendalltau on it), by Knight's
    algorithm (Knight 1966, as scipy computes it) with weights, O(points log points) a row:
    with the points sorted by (a, b), S = n0 - n1 - n2 + n3 - 2 D, where n0 = n (n - 1) / 2
    pairs of the n drawn, n1 and n2 the pairs tied in a and in b, n3 in both, and D the
    discordant pairs (`_discordant`); tau-b = S / sqrt((n0 - n1) (n0 - n2)). Every count
    is a whole number, exact in floating point (`known`: _per_value of a and b, when the
    caller has them)."""
    (per_a, _), (per_b, _) = known or (_per_value(w, a), _per_value(w, b))
    order = np.lexsort((b, a))
    # the points' weights by (a, b), a point per row: each level gathers whole rows
    weights = np.ascontiguousarray(w[:, order].T)
    a, b = a[order], b[order]
    per_point = weights.copy()  # a point given twice: its weights summed into its last copy
    again = np.flatnonzero((a[1:] == a[:-1]) & (b[1:] == b[:-1])) + 1
    for i in again.tolist():
        per_point[i] += per_point[i - 1]
        per_point[i - 1] = 0
    n = w.sum(axis=1)
    total = n * (n - 1) / 2
    tied_a = 0.5 * (per_a**2).sum(axis=1) - 0.5 * n  # a copy of a point with its others too
    tied_b = 0.5 * (per_b**2).sum(axis=1) - 0.5 * n
    tied_both = 0.5 * (per_point**2).sum(axis=0) - 0.5 * n
    s = total - tied_a - tied_b + tied_both - 2 * _discordant(weights, b)
    return np.asarray(s / np.sqrt((total - tied_a) * (total - tied_b)), dtype=np.float64)


def _discordant(weights: FloatArray, b: FloatArray) -> FloatArray:
    """Per column of `weights` (points x resamples, the points sorted by (a, b)), the
    weighted discordant pairs: the sum over points i before j with b_i > b_j of w_i w_j
    (a pair tied in a is never counted: sorted by b within a). Counted as a merge sort
    would, level by level: at block size s, each point of the right half of a block of
    2 s against the points of its left half (every pair of points meets in exactly one
    block), the left halves' weights cumulated in order of (block, b) and read at each
    right point's b; the same index arithmetic for every column, so each level is a few
    numpy passes over the weights."""
    rank = np.unique(b, return_inverse=True)[1].reshape(-1)
    k, span = len(rank), int(rank.max(initial=0)) + 1
    found = np.zeros(weights.shape[1])
    position = np.arange(k)
    size = 1
    while size < k:
        block = position // (2 * size)
        right = (position // size) % 2 == 1
        key = block * span + rank
        left = np.flatnonzero(~right)
        left = left[np.argsort(key[left], kind="stable")]
        keys = key[left]
        cumulated = np.zeros((len(left) + 1, weights.shape[1]))
        cumulated[1:] = weights[left]
        for i in range(2, len(cumulated)):  # faster than np.cumsum(axis=0) on these rows
            cumulated[i] += cumulated[i - 1]
        q = np.flatnonzero(right)
        above = np.searchsorted(keys, key[q], "right")  # the left points with a larger b
        end = np.searchsorted(keys, (block[q] + 1) * span, "left")
        found += (weights[q] * (cumulated[end] - cumulated[above])).sum(axis=0)
        size *= 2
    return found


def _kendall_rows(a: FloatArray, b: FloatArray) -> FloatArray:
    """Kendall's tau-b per row of points a and b (rows x points), each point once, from
    the signs of every pair i < j of a row's points (the system level: a few systems a
    row); whole numbers, exact in any order."""
    i, j = np.triu_indices(a.shape[1], 1)
    step = max(1, 2_000_000 // max(1, len(i)))  # rows at a time: rows x pairs arrays
    taus = []
    for r in range(0, len(a), step):
        sa = np.sign(a[r : r + step, i] - a[r : r + step, j])
        sb = np.sign(b[r : r + step, i] - b[r : r + step, j])
        tied_a, tied_b = (sa == 0).sum(axis=1), (sb == 0).sum(axis=1)
        concordant = (sa * sb).sum(axis=1)
        taus.append(concordant / np.sqrt((len(i) - tied_a) * (len(i) - tied_b)))
    return np.concatenate(taus) if taus else np.zeros(0)


def _replicates(w: FloatArray, a: FloatArray, b: FloatArray) -> Replicates:
    """The three coefficients on each row of weights w of points a and b shared by every
    row (each value's weight per resample, `_per_value`, for the ranks and the ties)."""
    with np.errstate(invalid="ignore", divide="ignore"):  # constant resamples give NaN
        known = (_per_value(w, a), _per_value(w, b))
        return {
            "pearson": _shared_pearson(w, a, b, known),
            "spearman": _shared_spearman(w, known),
            "kendall": _kendall(w, a, b, known),
        }


def _shared_pearson(
    w: FloatArray, a: FloatArray, b: FloatArray, known: tuple[PerValue, PerValue]
) -> FloatArray:
    """`_pearson` for points a and b shared by every row, from one product of w with the
    points' values (centred on their plain mean, so that the sums of squares and
    products lose nothing to cancellation), squares and products: one pass over w
    instead of a dozen (the same r to ~1e-15); NaN where a row draws one value of a or
    of b (`known`: their _per_value)."""
    a0, b0 = a - a.mean(), b - b.mean()
    sums = w @ np.stack([np.ones(len(a)), a0, b0, a0 * b0, a0 * a0, b0 * b0], axis=1)
    total, sa, sb, sab, saa, sbb = sums.T
    r = (sab - sa * sb / total) / np.sqrt((saa - sa * sa / total) * (sbb - sb * sb / total))
    constant = ((known[0][0] > 0).sum(axis=1) < 2) | ((known[1][0] > 0).sum(axis=1) < 2)
    r[constant] = np.nan
    return np.asarray(r, dtype=np.float64)


def _shared_spearman(w: FloatArray, known: tuple[PerValue, PerValue]) -> FloatArray:
    """`_pearson` of the mid-ranks of points shared by every row, each
    counted w times: the mean rank is (n + 1) / 2 and each distinct value's rank
    deviation is shared by its points, so the sums of squares come from the distinct
    values (`known`: _per_value of a and b) and only the cross products from the points
    (the same rho to ~1e-15; a row that draws one value deviates by 0 exactly: NaN)."""
    mean = (w.sum(axis=1, keepdims=True) + 1) / 2
    (va, ia), (vb, ib) = known
    da = np.cumsum(va, axis=1) - va + (va + 1) / 2 - mean  # each value's rank - the mean
    db = np.cumsum(vb, axis=1) - vb + (vb + 1) / 2 - mean
    sab = np.einsum("ij,ij,ij->i", w, da[:, ia], db[:, ib])
    saa = np.einsum("ij,ij,ij->i", va, da, da)
    sbb = np.einsum("ij,ij,ij->i", vb, db, db)
    return np.asarray(sab / np.sqrt(saa * sbb), dtype=np.float64)


class ScoreTable:
    """Scorings of the same responses as arrays over one index of responses: each pair's
    correlations take the responses both scored with numpy, not a loop over responses,
    and the system level's resampled means of a scoring are computed once for every pair
    with the same responses (`example_pairing`, `system_pairing`)."""

    def __init__(self, scores: Mapping[str, Mapping[Hashable, float]]) -> None:
        index: dict[Hashable, int] = {}
        for values in scores.values():
            for k in values:
                index.setdefault(k, len(index))
        self.labels = np.array([str(k) for k in index], dtype=object)  # a point's label
        self.keys = list(index)
        self.order: dict[str, npt.NDArray[np.intp]] = {}  # a scoring's responses, its order
        self.values: dict[str, FloatArray] = {}
        self.present: dict[str, npt.NDArray[np.bool_]] = {}
        for name, values in scores.items():
            order = np.fromiter(map(index.__getitem__, values), np.intp, len(values))
            column = np.zeros(len(index))
            column[order] = np.fromiter(map(float, values.values()), np.float64, len(values))
            present = np.zeros(len(index), dtype=bool)
            present[order] = True
            self.order[name], self.values[name], self.present[name] = order, column, present
        self._parts: dict[tuple[str, bytes], SystemParts] = {}
        self._counts: Draws = {}

    def counts(self, seed: int, n: int, bootstrap: int) -> Iterator[Counts]:
        """`resampling.seeded_chunks`, the responses' counts 100 resamples at a time, drawn
        once for every pair with as many responses (kept up to DRAWS_BYTES)."""
        return seeded_chunks(seed, n, bootstrap, self._counts)

    def both(self, a: str, b: str) -> npt.NDArray[np.intp]:
        """The responses a and b both scored, in a's order (as `[k for k in x if k in y]`)."""
        order = self.order[a]
        return order[self.present[b][order]]

    def systems(self, systems: Mapping[Hashable, str]) -> tuple[npt.NDArray[np.intp], list[str]]:
        """Each response's system as its index in the sorted system names (-1: none)."""
        names = sorted(set(systems.values()))
        code = {name: i for i, name in enumerate(names)}
        codes = np.array([code.get(systems.get(k), -1) for k in self.keys], dtype=np.intp)  # type: ignore[arg-type]
        return codes, names

    def system_parts(
        self, name: str, rows: npt.NDArray[np.intp], starts: Sequence[int], counts: list[Counts]
    ) -> SystemParts:
        """The parts of the system-level coefficients (`system_parts`) of scoring `name`
        on its resampled system means and, as a last row, its observed ones: each system's
        mean in each resample (counts: per system, the resamples' counts of its responses
        `rows`, split at `starts`), exact where means tie (`tied_means_exact`); kept for
        the other pairs on the same responses."""
        key = (name, rows.tobytes() + np.asarray(starts, dtype=np.intp).tobytes())
        if key not in self._parts:
            splits = np.split(self.values[name][rows], starts)
            self._parts[key] = system_parts(tied_means_exact(splits, counts))
        return self._parts[key]


MAX_DENOMINATOR = 10**6  # a score is read as a fraction with a denominator up to this


@functools.cache
def _fraction(score: float) -> Fraction:
    return Fraction(score).limit_denominator(MAX_DENOMINATOR)


class Rationals(NamedTuple):
    """Scores as the fractions they stand for."""

    inverse: npt.NDArray[np.intp]  # each score's index among the distinct scores
    fractions: list[Fraction]  # each distinct score's
    shift: float  # the largest distance between a score and its fraction


def rationals(values: FloatArray) -> Rationals:
    """Each distinct score read as the nearest fraction with a denominator of at most
    MAX_DENOMINATOR: a ratio of counts, as FActScore's s / (s + ns) and F1@K from it, is
    recovered exactly (its float is within 1e-16 of it, and two such fractions are at
    least 1e-12 apart)."""
    distinct, inverse = np.unique(values, return_inverse=True)
    fractions = [_fraction(x) for x in distinct.tolist()]
    shift = max(
        (abs(float(f) - x) for f, x in zip(fractions, distinct.tolist(), strict=True)),
        default=0.0,
    )
    return Rationals(inverse, fractions, shift)


def exact_mean(
    values: Sequence[float] | FloatArray,
    counts: FloatArray | Counts | None = None,
    parts: Rationals | None = None,
) -> float:
    """sum(count x score) / sum(count) in exact arithmetic on the scores' fractions
    (`rationals`; `parts`: theirs, when the caller has them; the numerators of each
    denominator summed as integers first), rounded once: equal means are the same float
    whatever the order of the scores (0.6 + 0.1 + 0.1 and 0.4 + 0.4 + 0 too). Counts
    are whole numbers (all 1 when None)."""
    v = np.asarray(values, dtype=np.float64)
    inverse, fractions, _ = parts or rationals(v)
    c = np.ones(len(v)) if counts is None else counts
    per_value = np.bincount(inverse, weights=c, minlength=len(fractions)).tolist()
    by_denominator: dict[int, int] = defaultdict(int)
    for f, k in zip(fractions, per_value, strict=True):
        if k:
            by_denominator[f.denominator] += int(k) * f.numerator
    total = sum((Fraction(n, d) for d, n in by_denominator.items()), Fraction(0))
    return float(total / int(c.sum()))


def tied_means_exact(
    values: Sequence[FloatArray], counts: Sequence[FloatArray | Counts]
) -> FloatArray:
    """Rows x systems: each system's mean score in each resample (system j's `values`
    counted `counts[j]` times in a row, a row per resample) and, as a last row, its
    observed mean. Computed in floating point, then each mean within the error bound of
    another mean of its row recomputed exactly (`exact_mean`): equal means are the same
    float, so they tie in Spearman's and Kendall's ranks, and means that differ keep
    their order. A float mean of n scores errs from the exact one by at most
    (n + 2) eps max |score| (a sum of n products errs by at most n u times the sum of
    their magnitudes, u = eps / 2; the division adds u) plus the largest distance
    between a score and its fraction."""
    m = len(values)
    rows = len(counts[0]) + 1 if m else 1
    means = np.empty((rows, m))
    bound = np.empty(m)
    parts = [rationals(v) for v in values]
    for j, (v, w) in enumerate(zip(values, counts, strict=True)):
        means[:-1, j] = (w @ v) / len(v)
        means[-1, j] = v.sum() / len(v)
        eps = np.finfo(np.float64).eps
        bound[j] = (len(v) + 2) * eps * float(np.abs(v).max()) + parts[j][2]
    near = np.abs(means[:, :, None] - means[:, None, :]) <= bound[:, None] + bound[None, :]
    near[:, np.arange(m), np.arange(m)] = False
    for r, j in np.argwhere(near.any(axis=2)).tolist():
        row = counts[j][r] if r < rows - 1 else None
        means[r, j] = exact_mean(values[j], row, parts[j])
    return means


class SystemParts(NamedTuple):
    """Per row of system scores (a resample, or the observed means), what Pearson's r,
    Spearman's rho and Kendall's tau-b of a pair of scorings need from each scoring alone,
    each system counted once: `_replicates` with weights all ones, split in two."""

    values: FloatArray  # rows x systems
    deviations: FloatArray  # from the row's mean
    squares: FloatArray  # the row's sum of squared deviations
    rank_deviations: FloatArray  # the same on the row's mid-ranks (scipy's rankdata)
    rank_squares: FloatArray


def system_parts(values: FloatArray) -> SystemParts:
    """`SystemParts` of rows x systems scores (C order: a row's sums as `_pearson` takes
    them, so the coefficients are the same to the last bit)."""
    ranks = scipy_stats.rankdata(values, axis=1)

    def centred(v: FloatArray) -> tuple[FloatArray, FloatArray]:  # _pearson's, w all ones
        deviations = v - v.sum(axis=1, keepdims=True) / v.shape[1]
        return deviations, (deviations**2).sum(axis=1)

    return SystemParts(values, *centred(values), *centred(ranks))


def _system_replicates(x: SystemParts, y: SystemParts) -> Replicates:
    """The three coefficients on each row of systems (`_pearson` with weights all ones, of
    the values and of their mid-ranks; `_kendall_rows`), from each scoring's parts."""
    with np.errstate(invalid="ignore", divide="ignore"):  # constant rows give NaN
        return {
            "pearson": (x.deviations * y.deviations).sum(axis=1) / np.sqrt(x.squares * y.squares),
            "spearman": (x.rank_deviations * y.rank_deviations).sum(axis=1)
            / np.sqrt(x.rank_squares * y.rank_squares),
            "kendall": _kendall_rows(x.values, y.values),
        }


def example_correlation(
    x: Mapping[Hashable, float],
    y: Mapping[Hashable, float],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> Correlation:
    """Per response, on the responses both scorings scored. A resample draws the responses
    with replacement: default_rng(seed).integers(0, n, (bootstrap, n)), the same draws
    for every pair with as many responses (reference.example_draws)."""
    table = ScoreTable({"x": x, "y": y})
    return correlate_many([example_pairing(table, "x", "y", bootstrap=bootstrap, seed=seed)])[0]


def example_pairing(
    table: ScoreTable,
    a: str,
    b: str,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> Pairing:
    """What `correlate_many` takes for `example_correlation` of scorings a and b."""
    return example_pairings(table, [(a, b)], bootstrap=bootstrap, seed=seed)[0]


class _Points(NamedTuple):
    """A pair's responses (both scored, in a's order) and its distinct (x, y) points, in
    order of first appearance."""

    rows: npt.NDArray[np.intp]
    x: FloatArray  # each distinct point's scores
    y: FloatArray
    point: npt.NDArray[np.intp]  # each response's point
    freq: FloatArray  # how many responses each point has


def _points(table: ScoreTable, a: str, b: str) -> _Points:
    rows = table.both(a, b)
    xv, yv = table.values[a][rows], table.values[b][rows]
    _, ix = np.unique(xv, return_inverse=True)
    uy, iy = np.unique(yv, return_inverse=True)
    _, first, inverse, freq = np.unique(
        ix.ravel() * len(uy) + iy.ravel(),
        return_index=True,
        return_inverse=True,
        return_counts=True,
    )
    by_appearance = np.argsort(first)
    number = np.empty(len(first), dtype=np.intp)
    number[by_appearance] = np.arange(len(first))
    seen = first[by_appearance]
    return _Points(rows, xv[seen], yv[seen], number[inverse.ravel()], freq[by_appearance])


def example_pairings(
    table: ScoreTable,
    pairs: Sequence[tuple[str, str]],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> list[Pairing]:
    """`example_pairing` of each pair (a, b) of scorings. A resample's weight of a
    distinct (x, y) point is the sum of its responses' counts; pairs with as many
    responses resample the same draws, so their points are weighed together
    (`_point_weights`), at most STACKED_CELLS weights at a time."""
    found = [_points(table, a, b) for a, b in pairs]
    by_size: dict[int, list[int]] = defaultdict(list)  # the pairs of each number of responses
    for i, p in enumerate(found):
        if bootstrap and len(p.rows) >= MIN_POINTS:
            by_size[len(p.rows)].append(i)
    replicates: dict[int, tuple[Replicates, Replicates]] = {}
    for n, same in by_size.items():
        sizes = [len(found[i].freq) for i in same]
        for batch in _batches(same, sizes, STACKED_CELLS // bootstrap):
            weights = _point_weights(table, [found[i] for i in batch], n, bootstrap, seed)
            for i, w in zip(batch, weights, strict=True):
                p = found[i]
                both = _replicates(np.vstack([w, p.freq]), p.x, p.y)
                replicates[i] = (  # the observed points, each as often as it occurs, last
                    {name: values[-1:] for name, values in both.items()},
                    {name: values[:-1] for name, values in both.items()},
                )
    out = []
    for i, (a, b) in enumerate(pairs):
        rows = found[i].rows
        out.append(
            Pairing(
                table.values[a][rows].tolist(),
                table.values[b][rows].tolist(),
                labels=table.labels[rows].tolist(),
                bootstrap=replicates.get(i),
            )
        )
    return out


def _batches(items: list[int], sizes: list[int], limit: int) -> Iterator[list[int]]:
    """The items in order, in runs whose sizes sum to at most `limit` (an item above it
    alone)."""
    batch: list[int] = []
    total = 0
    for item, size in zip(items, sizes, strict=True):
        if batch and total + size > limit:
            yield batch
            batch, total = [], 0
        batch.append(item)
        total += size
    if batch:
        yield batch


STACKED_CELLS = 10_000_000  # points x resamples weighed at once (80 MB of float64)


def _point_weights(
    table: ScoreTable, pairs: Sequence[_Points], n: int, bootstrap: int, seed: int
) -> list[FloatArray]:
    """For each pair (each with n responses), how often each of its points is drawn in
    each resample (resamples x points): the points x responses indicators of the pairs
    stacked, times the responses' counts (`table.counts`), one sparse product per 100
    resamples; whole numbers, exact in any order."""
    sizes = [len(p.freq) for p in pairs]
    offsets = np.cumsum([0, *sizes]).tolist()
    indicator = scipy_sparse.csr_array(
        (
            np.ones(n * len(pairs)),
            (
                np.concatenate([p.point + o for p, o in zip(pairs, offsets, strict=False)]),
                np.tile(np.arange(n), len(pairs)),
            ),
        ),
        shape=(offsets[-1], n),
    )
    w = np.empty((offsets[-1], bootstrap))
    chunks = table.counts(seed, n, bootstrap)
    for start, counts in zip(range(0, bootstrap, 100), chunks, strict=True):
        w[:, start : start + len(counts)] = indicator @ counts.T.astype(np.float64)
    return [w[o : o + k].T for o, k in zip(offsets, sizes, strict=False)]


def system_correlation(
    x: Mapping[Hashable, float],
    y: Mapping[Hashable, float],
    systems: Mapping[Hashable, str],
    *,
    level: str,
    bootstrap: int = 1000,
    seed: int = 0,
    draws: SystemDraws | None = None,
) -> Correlation:
    """Per system: each system's mean score over the responses both scorings scored;
    `systems` maps a response to its system (e.g. its source model). `draws` keeps the
    resamples' counts between calls with the same seed and system sizes (the same draws
    as a fresh call: rng.integers per system, in the systems' order)."""
    table = ScoreTable({"x": x, "y": y})
    codes = table.systems(systems)
    pairing = system_pairing(
        table, "x", "y", codes, level=level, bootstrap=bootstrap, seed=seed, draws=draws
    )
    return correlate_many([pairing])[0]


def system_pairing(
    table: ScoreTable,
    a: str,
    b: str,
    systems: tuple[npt.NDArray[np.intp], list[str]],
    *,
    level: str,
    bootstrap: int = 1000,
    seed: int = 0,
    draws: SystemDraws | None = None,
) -> Pairing:
    """What `correlate_many` takes for `system_correlation` of scorings a and b; `systems`
    is `table.systems` of the responses' systems (computed once for every pair)."""
    rows = table.both(a, b)
    codes, all_names = systems
    rows = rows[codes[rows] >= 0]
    rows = rows[np.argsort(codes[rows], kind="stable")]  # by system, each in a's order
    present, first, sizes_ = np.unique(codes[rows], return_index=True, return_counts=True)
    names = [all_names[i] for i in present.tolist()]
    starts = first[1:].tolist()
    replicates = None
    if not bootstrap or len(names) < MIN_POINTS:
        xm, ym = (
            [exact_mean(v) for v in np.split(table.values[name][rows], starts)] if len(rows) else []
            for name in (a, b)
        )
    else:
        sizes = tuple(sizes_.tolist())
        key = (seed, bootstrap, sizes)
        counts = draws.get(key) if draws is not None else None
        if counts is None:  # resample each system's responses, keep the system
            rng = np.random.default_rng(seed)
            counts = [draw_counts(rng, n, bootstrap) for n in sizes]
            if draws is not None:
                draws[key] = counts
        parts_a = table.system_parts(a, rows, starts, counts)
        parts_b = table.system_parts(b, rows, starts, counts)
        xm, ym = parts_a.values[-1].tolist(), parts_b.values[-1].tolist()  # the means
        both = _system_replicates(parts_a, parts_b)
        replicates = (  # the observed means are the last row
            {name: values[-1:] for name, values in both.items()},
            {name: values[:-1] for name, values in both.items()},
        )
    return Pairing(xm, ym, level=level, what="systems", labels=names, bootstrap=replicates)


# --------------------------------------------------------------------------- one each


def _one(correlation: Correlation, name: str) -> CorrelationCoefficient:
    if correlation.undefined_reason is not None:
        return CorrelationCoefficient(None, note=correlation.undefined_reason)
    coefficient: CorrelationCoefficient = getattr(correlation, name)
    return coefficient


def pearson_example(
    x: Mapping[Hashable, float],
    y: Mapping[Hashable, float],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CorrelationCoefficient:
    """Pearson's r over the responses both scorings scored (Pearson 1895),
    r = sum (x_i - mean x)(y_i - mean y) / sqrt(sum (x_i - mean x)^2 sum (y_i - mean y)^2),
    with scipy's p-value, and the percentile interval of r over resamples of the
    responses drawn with replacement. Reference: reference.example_correlation."""
    return _one(example_correlation(x, y, bootstrap=bootstrap, seed=seed), "pearson")


def spearman_example(
    x: Mapping[Hashable, float],
    y: Mapping[Hashable, float],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CorrelationCoefficient:
    """Spearman's rho over the responses both scorings scored (Spearman 1904): Pearson's
    r of the scores' mid-ranks (tied scores share the mean of their ranks), with scipy's
    p-value and the percentile interval over resamples of the responses.
    Reference: reference.spearman, reference.example_correlation."""
    return _one(example_correlation(x, y, bootstrap=bootstrap, seed=seed), "spearman")


def kendall_example(
    x: Mapping[Hashable, float],
    y: Mapping[Hashable, float],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CorrelationCoefficient:
    """Kendall's tau-b over the responses both scorings scored (Kendall 1945):
    (concordant - discordant pairs) / sqrt((n0 - pairs tied in x)(n0 - pairs tied in y)),
    n0 = n (n - 1) / 2, with scipy's p-value and the percentile interval over resamples
    of the responses. Reference: reference.kendall_tau_b, reference.example_correlation."""
    return _one(example_correlation(x, y, bootstrap=bootstrap, seed=seed), "kendall")


def pearson_system(
    x: Mapping[Hashable, float],
    y: Mapping[Hashable, float],
    systems: Mapping[Hashable, str],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CorrelationCoefficient:
    """Pearson's r (formula: `pearson_example`) over the systems' mean scores (each
    system's responses both scorings scored; `systems` maps a response to its system),
    with the percentile interval over resamples of the responses within each system.
    Reference: reference.system_correlation."""
    found = system_correlation(x, y, systems, level="system", bootstrap=bootstrap, seed=seed)
    return _one(found, "pearson")


def spearman_system(
    x: Mapping[Hashable, float],
    y: Mapping[Hashable, float],
    systems: Mapping[Hashable, str],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CorrelationCoefficient:
    """Spearman's rho (formula: `spearman_example`) over the systems' mean scores, equal
    means tied (computed exactly: `tied_means_exact`), with the percentile interval over
    resamples of the responses within each system. Reference: reference.system_correlation."""
    found = system_correlation(x, y, systems, level="system", bootstrap=bootstrap, seed=seed)
    return _one(found, "spearman")


def kendall_system(
    x: Mapping[Hashable, float],
    y: Mapping[Hashable, float],
    systems: Mapping[Hashable, str],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
) -> CorrelationCoefficient:
    """Kendall's tau-b (formula: `kendall_example`) over the systems' mean scores, equal
    means tied (`tied_means_exact`), with the percentile interval over resamples of the
    responses within each system. Reference: reference.system_correlation."""
    found = system_correlation(x, y, systems, level="system", bootstrap=bootstrap, seed=seed)
    return _one(found, "kendall")
