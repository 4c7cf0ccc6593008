"""The textbook form of each coefficient and interval the report computes: plain loops
over plain Python numbers, written to be read, not to be fast.

Each fast path of `resampling`, `claim_lists` and `correlation` is checked against the
function here of the same name on random data, ties, missing scores and one-unit cases
included (tests/annotation/test_stats_reference.py, hypothesis); these are checked against scipy
and numpy where those have the same formula. The agreement section's (`inter_rater`,
`gwet`, `two_raters`: percent agreement, Fleiss' kappa with its parts, Krippendorff's
alpha with its coincidences, Gwet's AC1, Conger's kappa, Cohen's kappa weighted or not,
their bootstrap intervals), the Wilson interval, McNemar's test and the per-class scores
of `classification` are checked in tests/annotation/test_stats_reference_agreement.py,
alpha also against the `krippendorff` library. A fast path without its reference here is
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
from statistics import NormalDist

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
    (x, y) pairs (the nonparametric bootstrap, Efron & Tibshirani 1993, ch. 6),
    default_rng(seed).integers(0, n, (bootstrap, n)), each resample written out."""
    drawn = np.random.default_rng(seed).integers(0, len(x), size=(bootstrap, len(x))).tolist()
    return [([x[i] for i in row], [y[i] for i in row]) for row in drawn]


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


# --------------------------------------------------------------------------- inter-rater
#
# The agreement section's coefficients (inter_rater, gwet, two_raters): each from a
# units x categories table of counts, n_ij = how many raters put unit i in category j
# (Fleiss' 1971 layout; `count_table` builds it from units x raters labels, None
# missing). A coefficient whose chance agreement is 1 (or expected disagreement 0) is
# 0/0: None here, never a number.


def count_table(
    rows: Sequence[Sequence[Hashable | None]], categories: Sequence[Hashable]
) -> list[list[int]]:
    """n_ij: for each unit (a row of labels, None missing), how many raters chose each
    category."""
    return [[sum(1 for x in row if x == c) for c in categories] for row in rows]


def percent_agreement(table: Sequence[Sequence[int]]) -> float | None:
    """Observed agreement P-bar (Fleiss 1971, eq. 2; Gwet 2014, sec. 2.3): over the units
    with n_i >= 2 ratings, the mean of P_i = sum_j n_ij (n_ij - 1) / (n_i (n_i - 1)), the
    share of ordered pairs of a unit's ratings that agree. None without such a unit."""
    p_i = fleiss_p_i(table)
    return sum(p_i) / len(p_i) if p_i else None


def fleiss_p_i(table: Sequence[Sequence[int]]) -> list[float]:
    """P_i of each unit with two or more ratings, in order (Fleiss 1971, eq. 1)."""
    out = []
    for row in table:
        n_i = sum(row)
        if n_i >= 2:
            out.append(sum(n * (n - 1) for n in row) / (n_i * (n_i - 1)))
    return out


def category_shares(table: Sequence[Sequence[int]]) -> list[float]:
    """p_j: the mean over rated units (n_i >= 1) of n_ij / n_i. With the same number of
    ratings on every unit this is Fleiss' (1971, eq. 5) p_j = sum_i n_ij / (N n); with
    unequal numbers it is Gwet's (2014, sec. 2.4) generalisation, in which a unit with
    one rating counts in the shares but not in P-bar."""
    rated = [row for row in table if sum(row) >= 1]
    q = len(table[0]) if table else 0
    return [sum(row[j] / sum(row) for row in rated) / len(rated) for j in range(q)]


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa (Fleiss 1971): (P-bar - P_e) / (1 - P_e), P_e = sum_j p_j^2
    (`percent_agreement`, `category_shares`). None when no unit has two ratings or
    P_e = 1 (every rating one category)."""
    p_bar = percent_agreement(table)
    if p_bar is None:
        return None
    p_e = sum(p**2 for p in category_shares(table))
    return (p_bar - p_e) / (1 - p_e) if p_e < 1 else None


def gwet_ac1(table: Sequence[Sequence[int]]) -> float | None:
    """Gwet's AC1 (Gwet 2008, eq. 18; Gwet 2014, sec. 4.2): (P-bar - P_e) / (1 - P_e) with
    P_e = sum_j p_j (1 - p_j) / (q - 1), q the number of categories (columns). None when
    no unit has two ratings or q < 2."""
    p_bar = percent_agreement(table)
    q = len(table[0]) if table else 0
    if p_bar is None or q < 2:
        return None
    p_e = sum(p * (1 - p) for p in category_shares(table)) / (q - 1)
    return (p_bar - p_e) / (1 - p_e)


def brennan_prediger(table: Sequence[Sequence[int]]) -> float | None:
    """Brennan & Prediger's (1981) kappa (Bennett et al.'s S): chance agreement 1 / q,
    (P-bar - 1/q) / (1 - 1/q). None when no unit has two ratings or q < 2."""
    p_bar = percent_agreement(table)
    q = len(table[0]) if table else 0
    return (p_bar - 1 / q) / (1 - 1 / q) if p_bar is not None and q >= 2 else None


def full_agreement(table: Sequence[Sequence[int]]) -> float | None:
    """The share of the units with two or more ratings on which every rating is the same
    category. None without such a unit."""
    pairable = [row for row in table if sum(row) >= 2]
    if not pairable:
        return None
    return sum(1 for row in pairable if max(row) == sum(row)) / len(pairable)


def coincidences(table: Sequence[Sequence[int]]) -> list[list[float]]:
    """Krippendorff's coincidence matrix (Krippendorff 2011, "Computing Krippendorff's
    alpha-reliability", sec. C): o_ck = sum over units u with m_u >= 2 values of the
    number of ordered pairs (c, k) of distinct values in u, over m_u - 1."""
    q = len(table[0]) if table else 0
    o = [[0.0] * q for _ in range(q)]
    for row in table:
        m_u = sum(row)
        if m_u < 2:
            continue
        for c in range(q):
            for k in range(q):
                pairs = row[c] * (row[k] - (1 if c == k else 0))
                o[c][k] += pairs / (m_u - 1)
    return o


def krippendorff_alpha(
    table: Sequence[Sequence[int]], distance: Sequence[Sequence[float]] | None = None
) -> tuple[float | None, float, float]:
    """Krippendorff's alpha (Krippendorff 2011): alpha = 1 - D_o / D_e, from the
    coincidences o_ck, n_c = sum_k o_ck and n = sum_c n_c:
    D_o = sum_ck o_ck delta^2_ck / n, D_e = sum_ck n_c n_k delta^2_ck / (n (n - 1)).
    delta^2 is the nominal one (0 on the diagonal, 1 elsewhere) or `distance`, a
    researcher's squared differences. Returns (alpha, D_o, D_e); alpha None when D_e is
    0 (no pairable values, or nothing expected to differ)."""
    o = coincidences(table)
    q = len(o)
    delta = distance or [[0.0 if c == k else 1.0 for k in range(q)] for c in range(q)]
    n_c = [sum(row) for row in o]
    n = sum(n_c)
    if n < 2:
        return None, math.nan, math.nan
    d_o = sum(o[c][k] * delta[c][k] for c in range(q) for k in range(q)) / n
    d_e = sum(n_c[c] * n_c[k] * delta[c][k] for c in range(q) for k in range(q)) / (n * (n - 1))
    return (1 - d_o / d_e if d_e > 0 else None), d_o, d_e


def cohen_kappa(
    a: Sequence[int], b: Sequence[int], q: int, agreement: Sequence[Sequence[float]] | None = None
) -> float | None:
    """Cohen's kappa (Cohen 1960) of two raters' category indices over the units both
    rated, weighted with agreement weights w_ck (Cohen 1968; identity: unweighted):
    (p_o - p_e) / (1 - p_e), p_o = sum_ck w_ck p_ck, p_e = sum_ck w_ck p_c. p_.k with p
    the table of shares. None with no unit or p_e = 1."""
    n = len(a)
    if not n:
        return None
    w = agreement or [[1.0 if c == k else 0.0 for k in range(q)] for c in range(q)]
    p = [[0.0] * q for _ in range(q)]
    for x, y in zip(a, b, strict=True):
        p[x][y] += 1 / n
    rows = [sum(p[c]) for c in range(q)]
    cols = [sum(p[c][k] for c in range(q)) for k in range(q)]
    p_o = sum(w[c][k] * p[c][k] for c in range(q) for k in range(q))
    p_e = sum(w[c][k] * rows[c] * cols[k] for c in range(q) for k in range(q))
    return (p_o - p_e) / (1 - p_e) if not math.isclose(p_e, 1, abs_tol=1e-12) else None


def linear_weights(q: int, power: int) -> list[list[float]]:
    """Cohen's (1968) agreement weights 1 - |c - k|^power / (q - 1)^power (power 1:
    linear, 2: quadratic)."""
    return [[1 - abs(c - k) ** power / (q - 1) ** power for k in range(q)] for c in range(q)]


def agreement_draws(
    table: Sequence[Sequence[int]], *, bootstrap: int, seed: int
) -> list[list[list[int]]]:
    """The agreement section's resamples of the rated units (n_i >= 1), each written out
    as a units x categories table: n units drawn with replacement. Drawn as the fast path
    draws them: the distinct count rows in lexicographic order, and per resample how often
    each is drawn, default_rng(seed).multinomial(n, each row's share of the units,
    bootstrap) (the same distribution as drawing n units uniformly)."""
    return _draw_rows(table, bootstrap, np.random.default_rng(seed))


def _draw_rows[Row: Sequence[int]](
    rows: Sequence[Row], bootstrap: int, rng: np.random.Generator
) -> list[list[list[int]]]:
    """Resamples of the rows with at least one rating (an entry > 0 of a count row, >= 0
    of a code row): the distinct rows in lexicographic order, rng.multinomial(n, each
    one's share, bootstrap), each resample written out."""
    rated = [tuple(row) for row in rows if any(x > 0 for x in row)]
    distinct = sorted(set(rated))
    shares = np.array([rated.count(row) for row in distinct], dtype=np.float64)
    drawn = rng.multinomial(len(rated), shares / shares.sum(), size=bootstrap)
    return [
        [list(row) for row, k in zip(distinct, counts, strict=True) for _ in range(k)]
        for counts in drawn.tolist()
    ]


def conger_kappa(codes: Sequence[Sequence[int]], q: int) -> float | None:
    """Conger's (1980) kappa from units x raters category indices (-1 missing), missing
    ratings as Gwet (2014, sec. 2.5; irrCAC conger.kappa.raw): over the units with a
    rating and the raters with a rating there (R of them), p_gk is rater g's share of
    category k among the units it rated, p_k = sum_g p_gk / R,
    s2_k = sum_g (p_gk - p_k)^2 / (R - 1), P_e = sum_k (p_k^2 - s2_k / R), and
    kappa = (P-bar - P_e) / (1 - P_e) with P-bar the percent agreement. None when no
    unit has two ratings or P_e = 1."""
    rated = [row for row in codes if any(x >= 0 for x in row)]
    p_bar = percent_agreement([[sum(1 for x in row if x == k) for k in range(q)] for row in rated])
    if p_bar is None:
        return None
    raters = [g for g in range(len(rated[0])) if any(row[g] >= 0 for row in rated)]
    shares = []
    for g in raters:
        given = [row[g] for row in rated if row[g] >= 0]
        shares.append([given.count(k) / len(given) for k in range(q)])
    r = len(raters)
    p_k = [sum(s[k] for s in shares) / r for k in range(q)]
    s2 = [sum((s[k] - p_k[k]) ** 2 for s in shares) / (r - 1) for k in range(q)]
    p_e = sum(p_k[k] ** 2 - s2[k] / r for k in range(q))
    return (p_bar - p_e) / (1 - p_e) if not math.isclose(p_e, 1, abs_tol=1e-12) else None


def conger_draws(
    codes: Sequence[Sequence[int]], q: int, *, bootstrap: int, seed: int
) -> list[list[list[int]]]:
    """Conger's kappa's resamples: the rated units' rows of codes (who said what), drawn
    as `_draw_rows` draws the count rows, from the same generator right after the
    agreement resamples (`agreement_draws`) took theirs."""
    rng = np.random.default_rng(seed)
    _draw_rows([[sum(1 for x in row if x == k) for k in range(q)] for row in codes], bootstrap, rng)
    shifted = _draw_rows([[x + 1 for x in row] for row in codes], bootstrap, rng)  # -1 -> 0
    return [[[x - 1 for x in row] for row in resample] for resample in shifted]


def pair_draws(
    a: Sequence[int], b: Sequence[int], q: int, *, bootstrap: int, rng: np.random.Generator
) -> list[tuple[list[int], list[int]]]:
    """A rater pair's resamples of the units both rated: the q x q cells (c, k) in order
    c q + k, rng.multinomial(n, each cell's share, bootstrap), written out as the two
    raters' labels. The pairs share one generator, default_rng(seed), in pair order; a
    pair whose kappa is undefined draws nothing."""
    cells = [0] * (q * q)
    for x, y in zip(a, b, strict=True):
        cells[x * q + y] += 1
    n = len(a)
    drawn = rng.multinomial(n, np.array(cells, dtype=np.float64) / n, size=bootstrap).tolist()
    out = []
    for counts in drawn:
        units = [cell for cell, k in enumerate(counts) for _ in range(k)]
        out.append(([u // q for u in units], [u % q for u in units]))
    return out


# --------------------------------------------------------------------------- proportions


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's (1927) score interval for a proportion p = k / n:
    (p + z^2 / 2n -/+ z sqrt(p (1 - p) / n + z^2 / 4n^2)) / (1 + z^2 / n), z the normal
    quantile of (1 + confidence) / 2 (Agresti & Coull 1998, eq. 2)."""
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    p = successes / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def mcnemar(b: int, c: int, *, exact: bool, correction: bool = False) -> tuple[float, float]:
    """McNemar's (1947) test of the discordant pairs b (only the first right) and c (only
    the second right): exact, the statistic min(b, c) and the two-sided binomial p-value
    min(1, 2 P(X <= min(b, c))), X ~ Bin(b + c, 1/2); else the chi-square statistic
    (b - c)^2 / (b + c) ((|b - c| - 1)^2 / (b + c) with Edwards' continuity correction)
    and its upper tail with one degree of freedom, erfc(sqrt(x / 2))."""
    if exact:
        k, n = min(b, c), b + c
        tail = Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)
        return float(k), float(min(Fraction(1), 2 * tail))
    diff = abs(b - c) - (1 if correction else 0)
    statistic = diff * diff / (b + c)
    return statistic, math.erfc(math.sqrt(statistic / 2))


# --------------------------------------------------------------------------- classification


def class_scores(
    confusion: Sequence[Sequence[int]],
) -> list[tuple[float | None, float | None, float | None]]:
    """Precision, recall and F1 of each class from the confusion matrix (rows the
    reference, columns the prediction; van Rijsbergen 1979): tp / predicted,
    tp / support, 2 tp / (support + predicted); each None when its denominator is 0."""
    q = len(confusion)
    out = []
    for j in range(q):
        tp = confusion[j][j]
        support = sum(confusion[j])
        predicted = sum(confusion[i][j] for i in range(q))
        out.append(
            (
                tp / predicted if predicted else None,
                tp / support if support else None,
                2 * tp / (support + predicted) if support + predicted else None,
            )
        )
    return out


def balanced_accuracy(confusion: Sequence[Sequence[int]]) -> float | None:
    """Balanced accuracy (Brodersen et al. 2010): the mean recall over the classes that
    occur in the reference. None when none does."""
    recalls = [r for _, r, _ in class_scores(confusion) if r is not None]
    return sum(recalls) / len(recalls) if recalls else None
