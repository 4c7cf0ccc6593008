"""Multi-rater coefficients with their parts and asymptotic standard errors (Gwet 2014).

Every coefficient here is (p_a - p_e) / (1 - p_e) with its own chance agreement p_e,
computed from a units x categories count matrix (and, for Conger's kappa, the
units x raters codes, because Conger's p_e uses each rater's own marginals). Units
with one rating count in the category prevalence; only units with two or more
ratings count in p_a. The variances are Gwet's (2014, ch. 5) linearisation, the ones
irrCAC prints: var = sum_i (c_i* - c)^2 / (n (n - 1)) over the n rated units.

No mainstream Python library computes these standard errors (irrCAC on PyPI pins
scipy 1.12 and pulls in pandas and coverage at run time), so they are written here
and tested against the values irrCAC's README prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import special

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Parts:
    """One coefficient's observed and chance agreement, value and standard error."""

    p_o: float
    p_e: float
    value: float
    se: float | None
    n: int  # rated units the variance is taken over


def _weights(table: npt.NDArray[Any], weights: npt.ArrayLike | None) -> FloatArray:
    """How many units each row of `table` stands for: 1 each, or `weights` (the counts
    of distinct rows; every sum below is then a weighted sum over them: the same value
    to rounding, from a few rows instead of one per unit)."""
    if weights is None:
        return np.ones(len(table))
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (len(table),) or (w < 0).any():
        raise ValueError("weights must be one non-negative count per row")
    return w


def _prepare(
    counts: npt.ArrayLike, weights: npt.ArrayLike | None
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, int, int]:
    table = np.asarray(counts, dtype=np.float64)
    w = _weights(table, weights)
    r = table.sum(axis=1)
    table, r, w = table[r >= 1], r[r >= 1], w[r >= 1]
    pairable = (r >= 2).astype(np.float64)
    n, n2 = int(w.sum()), int((pairable * w).sum())
    if n2 == 0:
        raise ValueError("no unit has two or more ratings")
    return table, r, pairable, w, n, n2


def _variance(values: FloatArray, w: FloatArray, centre: float, n: int) -> float | None:
    if n < 2:
        return None
    return float(np.sqrt((((values - centre) ** 2) * w).sum() / (n * (n - 1))))


def _chance_corrected(
    table: FloatArray,
    r: FloatArray,
    pairable: FloatArray,
    w: FloatArray,
    pe_i: FloatArray | None,
    pe: float,
    n: int,
    n2: int,
) -> Parts:
    """(p_a - p_e) / (1 - p_e) with p_a of each unit the pairs of its ratings that agree
    over its pairs (0 if unpairable), and Gwet's variance (pe_i: p_e's linearisation)."""
    den = np.where(pairable > 0, r * (r - 1), 1.0)
    pa_i = np.where(pairable > 0, (table * (table - 1)).sum(axis=1) / den, 0.0)
    pa = float((pa_i * w).sum() / n2)
    value = (pa - pe) / (1 - pe)
    c_i = (n / n2) * (pa_i - pe * pairable) / (1 - pe)
    if pe_i is not None:
        c_i = c_i - 2 * (1 - value) * (pe_i - pe) / (1 - pe)
    return Parts(pa, pe, value, _variance(c_i, w, value, n), n)


def percent_agreement(counts: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> Parts:
    """`weights`, here and below: each row of `counts` stands for that many units."""
    table, r, pairable, w, n, n2 = _prepare(counts, weights)
    return _chance_corrected(table, r, pairable, w, None, 0.0, n, n2)


def fleiss_kappa(counts: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> Parts:
    """Fleiss' kappa, generalised to units with different numbers of ratings (Gwet 2014)."""
    table, r, pairable, w, n, n2 = _prepare(counts, weights)
    pi = (table / r[:, np.newaxis] * w[:, np.newaxis]).sum(axis=0) / n
    pe = float((pi**2).sum())
    pe_i = (table @ pi) / r
    return _chance_corrected(table, r, pairable, w, pe_i, pe, n, n2)


def gwet_ac1(counts: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> Parts:
    table, r, pairable, w, n, n2 = _prepare(counts, weights)
    q = table.shape[1]
    pi = (table / r[:, np.newaxis] * w[:, np.newaxis]).sum(axis=0) / n
    pe = float((pi * (1 - pi)).sum() / (q - 1))
    pe_i = (table @ (1 - pi)) / r / (q - 1)
    return _chance_corrected(table, r, pairable, w, pe_i, pe, n, n2)


def brennan_prediger(counts: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> Parts:
    """Brennan & Prediger (1981), Bennett et al.'s S: chance agreement 1/q."""
    table, r, pairable, w, n, n2 = _prepare(counts, weights)
    pe = 1 / table.shape[1]
    return _chance_corrected(table, r, pairable, w, None, pe, n, n2)


def conger_kappa(
    codes: npt.ArrayLike, n_categories: int, weights: npt.ArrayLike | None = None
) -> Parts:
    """Conger's (1980) kappa from units x raters codes (category index, -1 = missing).

    Chance agreement uses each rater's own category shares, as Cohen's kappa does for
    two raters (to which Conger's kappa reduces).
    """
    all_codes = np.asarray(codes, dtype=np.int64)
    w = _weights(all_codes, weights)
    all_codes = all_codes[:, (all_codes >= 0).any(axis=0)]  # raters with no rating say nothing
    w = w[(all_codes >= 0).any(axis=1)]
    all_codes = all_codes[(all_codes >= 0).any(axis=1)]
    q = n_categories
    onehot = (all_codes[:, :, np.newaxis] == np.arange(q)).astype(np.float64)  # (n, R, q)
    table = onehot.sum(axis=1)
    r = table.sum(axis=1)
    pairable = (r >= 2).astype(np.float64)
    n, raters, n2 = int(w.sum()), all_codes.shape[1], int((pairable * w).sum())
    if n2 == 0:
        raise ValueError("no unit has two or more ratings")
    if raters < 2:
        raise ValueError("Conger's kappa needs two or more raters")
    rated = (all_codes >= 0).astype(np.float64)  # (n, R)
    n_g = (rated * w[:, np.newaxis]).sum(axis=0)
    # each rater's category shares (R, q)
    p_gk = (onehot * w[:, np.newaxis, np.newaxis]).sum(axis=0) / n_g[:, np.newaxis]
    p_k = p_gk.mean(axis=0)
    s2 = (p_gk.T @ p_gk - raters * np.outer(p_k, p_k)) / (raters - 1)
    pe = float((np.outer(p_k, p_k) - s2 / raters).trace())
    # Gwet's (2014) linearisation of p_e for each unit, unweighted.
    centred = onehot - (rated - n_g / n)[:, :, np.newaxis] * p_gk[np.newaxis, :, :]
    centred *= (n / n_g)[np.newaxis, :, np.newaxis]
    lam = (centred * (raters * p_k[np.newaxis, np.newaxis, :] - p_gk[np.newaxis, :, :])).sum(2)
    pe_i = lam.sum(axis=1) / (raters * (raters - 1))
    return _chance_corrected(table, r, pairable, w, pe_i, pe, n, n2)


def krippendorff_alpha_se(counts: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> Parts:
    """Nominal alpha in Gwet's (2014) form, with its standard error (irrCAC krippen.alpha.raw).

    p_o and p_e here are Gwet's; Krippendorff's own D_o and D_e are on the report. The
    variance is taken over the units with two or more ratings; `n` (the degrees of
    freedom of the interval, plus one) counts every rated unit, as irrCAC does.
    """
    table = np.asarray(counts, dtype=np.float64)
    w = _weights(table, weights)
    r = table.sum(axis=1)
    n_rated = int(w[r >= 1].sum())  # irrCAC's degrees of freedom count every rated unit
    table, r, w = table[r >= 2], r[r >= 2], w[r >= 2]
    n = int(w.sum())
    if n == 0:
        raise ValueError("no unit has two or more ratings")
    r_mean = float((r * w).sum() / n)
    eps = 1 / (r * w).sum()
    agree = (table * (table - 1)).sum(axis=1) / (r_mean * (r - 1))
    pa_prime = float((agree * w).sum() / n)
    pa = float((1 - eps) * pa_prime + eps)
    pi = (table / r_mean * w[:, np.newaxis]).sum(axis=0) / n
    pe = float((pi**2).sum())
    value = (pa - pe) / (1 - pe)
    prime = (pa_prime - pe) / (1 - pe)
    pa_i = agree - pa_prime * (r - r_mean) / r_mean
    pe_i = (table @ pi) / r_mean - pe * (r - r_mean) / r_mean
    c_i = (pa_i - pe) / (1 - pe) - 2 * (1 - prime) * (pe_i - pe) / (1 - pe)
    return Parts(pa, pe, float(value), _variance(c_i, w, prime, n), n_rated)


def wald_interval(
    value: float, se: float | None, n: int, confidence: float
) -> tuple[float | None, float | None]:
    """value -/+ t(n-1) * se, the upper end capped at 1, as irrCAC and Gwet (2014) print it."""
    if se is None or n < 2 or not np.isfinite(se):
        return None, None
    # scipy.stats.t.ppf's own function (stdtrit), without its argument checking
    half = float(special.stdtrit(n - 1, 1 - (1 - confidence) / 2)) * se
    return value - half, min(1.0, value + half)
