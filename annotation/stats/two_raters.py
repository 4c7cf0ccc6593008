"""Two raters: Cohen's kappa (weighted or not) and Scott's pi, from labels or a table.

Cohen's kappa, its weighted form (Cohen 1968) and their asymptotic standard errors
(Fleiss, Cohen & Everitt 1969) come from statsmodels' `cohens_kappa`; the Wald
interval is value -/+ z * SE, as SAS PROC FREQ prints it. Scott's (1955) pi and its
standard error follow Gwet (2014), as irrCAC's `scott2.table` prints them.

Weights spread over the categories of the label set (`weights_over="declared"`) or
over those that occur in the data (`"observed"`, as R's `irr::kappa2` and
scikit-learn do). They differ when a category of an ordinal scale is never used:
linear weights put 1 and 3 two steps apart on 1-2-3, one step apart when 2 is unused.

`weights` may also be a matrix of the researcher's own agreement weights w_ij (1 on the
diagonal, each in [0, 1], rows and columns in the order of `labels`): the kappa is then
Cohen's (1968) weighted kappa 1 - D_o / D_e with the disagreement 1 - w_ij, D_o its
observed and D_e its chance-expected mean (Artstein & Poesio 2008, section 2.6), both
reported (`d_o`, `d_e`). statsmodels' `cohens_kappa` computes it and its standard error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from .coefficient import Coefficient
from .gwet import wald_interval
from .ratings import Label, is_missing, label_set, square_matrix

Weights = Literal["linear", "quadratic"] | None
# A researcher's own agreement weights: a categories x categories matrix in the order of
# the categories (rows rater 1's category, columns rater 2's), 1 on the diagonal.
WeightMatrix = Sequence[Sequence[float]] | npt.NDArray[np.float64]
WeightsOver = Literal["declared", "observed"]

FloatArray = npt.NDArray[np.float64]


def contingency_table(
    y1: Sequence[Label | None],
    y2: Sequence[Label | None],
    *,
    labels: Sequence[Label] | None = None,
) -> tuple[tuple[Label, ...], npt.NDArray[np.int64], int]:
    """(labels, table, pairs left out): rows are rater 1's label, columns rater 2's.

    Pairs where either rating is missing (None or NaN) are left out and counted.
    """
    if isinstance(y1, str | bytes) or isinstance(y2, str | bytes):
        raise TypeError("y1 and y2 must be sequences of labels, not strings")
    if len(y1) != len(y2):
        raise ValueError(f"rater 1 has {len(y1)} labels, rater 2 has {len(y2)}")
    pairs = [(a, b) for a, b in zip(y1, y2, strict=True) if not is_missing(a) and not is_missing(b)]
    dropped = len(y1) - len(pairs)
    categories = label_set(labels, {x for pair in pairs for x in pair})
    index = {label: i for i, label in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)), dtype=np.int64)
    for position, (a, b) in enumerate(zip(y1, y2, strict=True)):
        if is_missing(a) or is_missing(b):
            continue
        for rater, value in ((1, a), (2, b)):
            if value not in index:
                raise ValueError(
                    f"rater {rater}'s label {value!r} at position {position} is not one of "
                    f"the labels {list(categories)}"
                )
        table[index[a], index[b]] += 1
    return categories, table, dropped


def cohen_kappa(
    y1: Sequence[Label | None],
    y2: Sequence[Label | None],
    *,
    labels: Sequence[Label] | None = None,
    weights: Weights | WeightMatrix = None,
    weights_over: WeightsOver = "declared",
    confidence: float = 0.95,
) -> Coefficient:
    """Cohen's kappa between two raters' labels, weighted when `weights` is given.

    `labels` is the label set in order (it is the ordinal scale for weights); without
    it the labels seen are used, numerically ordered when they are numbers. A matrix of
    agreement weights needs `labels`: its rows and columns follow their order.
    """
    if not (weights is None or isinstance(weights, str)) and labels is None:
        raise ValueError(
            "a matrix of agreement weights needs labels=[...]: its rows and columns are the "
            "categories in that order"
        )
    categories, table, dropped = contingency_table(y1, y2, labels=labels)
    result = cohen_kappa_from_table(
        table,
        weights=weights,
        weights_over=weights_over,
        confidence=confidence,
        categories=categories,
    )
    return _with_dropped(result, dropped)


def cohen_kappa_from_table(
    table: Sequence[Sequence[int]] | npt.ArrayLike,
    *,
    weights: Weights | WeightMatrix = None,
    weights_over: WeightsOver = "declared",
    confidence: float = 0.95,
    categories: Sequence[Label] | None = None,
) -> Coefficient:
    """Cohen's kappa from a square contingency table (rows rater 1, columns rater 2).

    `weights` as `cohen_kappa`: None, "linear", "quadratic" or a matrix of agreement
    weights in the table's order."""
    counts = _square(table)
    matrix = None
    if weights is not None and not isinstance(weights, str):
        matrix = agreement_weights(weights, len(counts))
    elif weights not in (None, "linear", "quadratic"):
        raise ValueError(
            f"weights must be None, 'linear', 'quadratic' or a matrix, not {weights!r}"
        )
    if weights_over not in ("declared", "observed"):
        raise ValueError(f"weights_over must be 'declared' or 'observed', not {weights_over!r}")
    names = tuple(categories) if categories is not None else tuple(range(len(counts)))
    note = None
    if weights_over == "observed":
        used = (counts.sum(axis=0) + counts.sum(axis=1)) > 0
        if not used.all():
            unused = [names[i] for i in np.flatnonzero(~used)]
            note = f"weights spread over the categories used; never used: {unused}"
        counts = counts[np.ix_(used, used)]
        if matrix is not None:
            matrix = matrix[np.ix_(used, used)]
    kind = "custom" if matrix is not None else weights
    title = "Cohen's kappa" if weights is None else f"Cohen's weighted kappa ({kind})"
    n = int(counts.sum())
    reason = _undefined(counts)
    if reason:
        return Coefficient(title, None, undefined_reason=reason, n_units=n)
    agree = matrix if matrix is not None else _agreement_matrix(len(counts), weights)  # type: ignore[arg-type]
    observed, expected = _weighted_parts(counts, agree)
    if matrix is not None and np.isclose(expected, 1, rtol=0, atol=1e-12):
        return Coefficient(
            title,
            None,
            undefined_reason="with these agreement weights every pair of the raters' "
            "categories counts as full agreement: expected agreement is 1, so kappa is 0/0",
            n_units=n,
        )
    if matrix is None:
        result = sm_cohens_kappa(counts, wt=weights)
    else:  # statsmodels takes disagreement weights (0 on the diagonal)
        result = sm_cohens_kappa(counts, weights=1 - matrix)
    # the variance is a difference of sums: 0 can come out a rounding error below 0,
    # whose square root statsmodels gives as NaN
    se = float(np.sqrt(max(float(result.var_kappa), 0.0)))
    half = float(scipy_stats.norm.ppf(1 - (1 - confidence) / 2)) * se
    return Coefficient(
        title,
        float(result.kappa),
        note=note,
        n_units=n,
        p_o=observed,
        p_e=expected,
        d_o=1 - observed,
        d_e=1 - expected,
        se=se,
        wald_low=float(result.kappa) - half,
        wald_high=float(result.kappa) + half,
    )


def agreement_weights(weights: WeightMatrix, size: int) -> FloatArray:
    """A researcher's agreement-weight matrix, checked: size x size (the categories in
    order), finite, each in [0, 1], exactly 1 on the diagonal."""
    matrix: FloatArray = square_matrix(weights, size, "agreement weights")
    if (matrix < 0).any() or (matrix > 1).any():
        raise ValueError("agreement weights must be numbers between 0 and 1")
    if not (np.diag(matrix) == 1).all():
        raise ValueError(
            "agreement weights must be 1 on the diagonal (a category agrees fully with itself)"
        )
    return matrix


def scott_pi(
    y1: Sequence[Label | None],
    y2: Sequence[Label | None],
    *,
    labels: Sequence[Label] | None = None,
    confidence: float = 0.95,
) -> Coefficient:
    """Scott's (1955) pi: chance agreement from the two raters' pooled category shares."""
    _, table, dropped = contingency_table(y1, y2, labels=labels)
    return _with_dropped(scott_pi_from_table(table, confidence=confidence), dropped)


def scott_pi_from_table(
    table: Sequence[Sequence[int]] | npt.ArrayLike, *, confidence: float = 0.95
) -> Coefficient:
    counts = _square(table).astype(np.float64)
    n = int(counts.sum())
    reason = _undefined(counts)
    if reason:
        return Coefficient("Scott's pi", None, undefined_reason=reason, n_units=n)
    p = counts / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    pi = (rows + cols) / 2
    pa = float(np.trace(p))
    pe = float((pi**2).sum())
    value = (pa - pe) / (1 - pe)
    # Gwet (2014), Scott's pi variance for a contingency table (irrCAC scott2.table).
    k = np.arange(len(p))
    same = (k[:, np.newaxis] == k[np.newaxis, :]).astype(np.float64)
    pi_sum = pi[:, np.newaxis] + pi[np.newaxis, :]
    total = (p * (same - (1 - value) * pi_sum) ** 2).sum()
    variance = (total - (pa - 2 * (1 - value) * pe) ** 2) / (n * (1 - pe) ** 2)
    se = float(np.sqrt(max(variance, 0.0)))
    low, high = wald_interval(value, se, n, confidence)
    return Coefficient(
        "Scott's pi", value, n_units=n, p_o=pa, p_e=pe, se=se, wald_low=low, wald_high=high
    )


def _square(table: Sequence[Sequence[int]] | npt.ArrayLike) -> npt.NDArray[np.int64]:
    counts = np.asarray(table)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(
            f"a contingency table must be square (rater 1's categories x rater 2's), "
            f"not {' x '.join(map(str, counts.shape))}"
        )
    if (counts < 0).any() or not np.all(np.mod(counts, 1) == 0):
        raise ValueError("a contingency table holds counts: whole numbers >= 0")
    return counts.astype(np.int64)


def _undefined(counts: npt.NDArray[np.int64] | FloatArray) -> str | None:
    n = counts.sum()
    if n == 0:
        return "no unit has labels from both raters"
    used = (counts.sum(axis=0) + counts.sum(axis=1)) > 0
    if used.sum() < 2:
        return f"both raters gave one category to all {int(n)} units: expected agreement is 1"
    return None


def _agreement_matrix(q: int, weights: Weights) -> FloatArray:
    """Agreement weights 1 - |i - j|^w / (q - 1)^w (w 0: the identity)."""
    i, j = np.meshgrid(np.arange(q), np.arange(q), indexing="ij")
    power = {None: 0, "linear": 1, "quadratic": 2}[weights]
    if power == 0:
        return np.asarray(i == j, dtype=np.float64)
    return np.asarray(1 - np.abs(i - j) ** power / (q - 1) ** power, dtype=np.float64)


def _weighted_parts(counts: npt.NDArray[np.int64], agree: FloatArray) -> tuple[float, float]:
    """Observed and chance agreement with the agreement weights `agree`."""
    p = counts / counts.sum()
    expected = np.outer(p.sum(axis=1), p.sum(axis=0))
    return float((agree * p).sum()), float((agree * expected).sum())


def _with_dropped(result: Coefficient, dropped: int) -> Coefficient:
    if not dropped:
        return result
    note = f"{dropped} unit(s) without labels from both raters left out"
    return replace(result, note="; ".join(n for n in (result.note, note) if n))
