"""Agreement across raters (Fleiss' kappa, Krippendorff's alpha, Gwet's AC1, Conger's
kappa, raw agreement) with bootstrap intervals, per category, per rater pair and per
rater; majority votes.

Point estimates come from the libraries that already compute them (statsmodels for
Fleiss' and Cohen's kappa, `krippendorff` for alpha). Gwet's AC1 has
no mainstream Python library and is written from Gwet (2014).

Bootstrap confidence intervals resample units. Every coefficient here depends on a
unit only through its per-category count vector, so units are grouped by count
vector and a bootstrap resample is a multinomial draw over those groups; the
coefficients are then computed for all resamples at once with numpy.
`agreement()` checks that this vectorised formula reproduces the library value on
the data it was given before it trusts the resamples.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain, combinations, compress, repeat
from typing import Any, Literal

import krippendorff
import numpy as np
import numpy.typing as npt
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from . import gwet
from .coefficient import Coefficient
from .ratings import (
    Label,
    Ratings,
    RatingsInput,
    as_number,
    as_ratings,
    label_distribution,
    label_set,
    order_categories,
    square_matrix,
)

Level = Literal["nominal", "ordinal", "interval", "ratio"]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
TIE = "tie"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CategoryKappa:
    """Fleiss' (1971) kappa for one category against all the others."""

    category: Label
    kappa: Coefficient


@dataclass(frozen=True)
class ExcludedUnit:
    unit: Hashable
    reason: str


@dataclass(frozen=True)
class PairwiseKappa:
    rater_a: Hashable
    rater_b: Hashable
    n_units: int
    kappa: Coefficient


@dataclass(frozen=True)
class RaterAgreement:
    """How one rater agrees with the others on the units they share."""

    rater: Hashable
    n_units: int
    n_pairs: int
    percent_agreement: float | None
    mean_kappa: float | None
    undefined_reason: str | None = None


@dataclass(frozen=True)
class FleissParts:
    """The parts of Fleiss' (1971) kappa: P_i, the agreement on each unit with two or more
    ratings (sum_j n_ij (n_ij - 1) / (n_i (n_i - 1))), in the order of the units; p_j, each
    category's share (the mean over rated units of n_ij / n_i: Fleiss' p_j when every unit
    has the same number of ratings); P-bar, their mean, and P_e = sum_j p_j^2."""

    units: tuple[Hashable, ...]
    p_i: tuple[float, ...]
    p_j: dict[Label, float]
    p_bar: float
    p_e: float


@dataclass(frozen=True)
class AlphaParts:
    """The parts of Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's
    alpha-reliability"): n, the number of pairable values; n_c, the pairable values of
    each category; the coincidence matrix o_ck (rows and columns in the order of
    `categories`) and the squared distances delta^2_ck used. alpha = 1 - D_o / D_e with
    D_o = sum o_ck delta_ck / n and D_e = sum n_c n_k delta_ck / (n (n - 1))."""

    pairable: float
    n_c: dict[Label, float]
    coincidences: tuple[tuple[float, ...], ...]
    distances: tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class AgreementReport:
    categories: tuple[Label, ...]
    level: str
    raters: tuple[Hashable, ...]
    n_units_total: int
    n_units_used: int
    n_ratings: int
    raters_per_unit: dict[int, int]
    min_raters: int
    max_raters: int
    mean_raters: float
    excluded: tuple[ExcludedUnit, ...]
    label_distribution: dict[Label, int]
    percent_agreement: Coefficient
    full_agreement: Coefficient
    fleiss_kappa: Coefficient
    krippendorff_alpha: Coefficient
    gwet_ac1: Coefficient
    pairwise: tuple[PairwiseKappa, ...]
    per_rater: tuple[RaterAgreement, ...]
    bootstrap: int
    confidence: float
    seed: int
    conger_kappa: Coefficient
    brennan_prediger: Coefficient
    per_category: tuple[CategoryKappa, ...]
    fleiss_parts: FleissParts | None
    alpha_parts: AlphaParts | None
    # the researcher's squared distances for alpha (categories x categories), if given
    distance: tuple[tuple[float, ...], ...] | None

    @property
    def coefficients(self) -> tuple[Coefficient, ...]:
        return (
            self.percent_agreement,
            self.full_agreement,
            self.fleiss_kappa,
            self.conger_kappa,
            self.krippendorff_alpha,
            self.gwet_ac1,
            self.brennan_prediger,
        )

    def kappa_matrix(self) -> tuple[tuple[float | None, ...], ...]:
        """Pairwise Cohen's kappa as a square matrix in `raters` order (1.0 on the diagonal)."""
        index = {rater: i for i, rater in enumerate(self.raters)}
        size = len(self.raters)
        rows: list[list[float | None]] = [
            [1.0 if i == j else None for j in range(size)] for i in range(size)
        ]
        for pair in self.pairwise:
            i, j = index[pair.rater_a], index[pair.rater_b]
            rows[i][j] = rows[j][i] = pair.kappa.value
        return tuple(tuple(row) for row in rows)


# --------------------------------------------------------------------------- agreement


def agreement(
    ratings: RatingsInput,
    *,
    categories: Sequence[Label] | None = None,
    level: Level = "nominal",
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    distance: DistanceMatrix | DistanceMetric | None = None,
) -> AgreementReport:
    """Inter-rater agreement for one categorical field.

    `ratings` is a `Ratings` (build one with the constructor that names your layout:
    `Ratings.from_units_by_raters`, `from_raters_by_units`, `from_counts`, `from_table`,
    `from_long`), a {unit: {rater: label}} mapping, or a units x raters matrix (refused
    when it has more columns than rows). Labels are any hashable values; None and NaN
    are missing ratings. `categories` is the label set in order; without it the labels
    seen are used, in numeric order when they are all numbers ("2" before "10").

    Units with fewer than two ratings carry no agreement information and are listed
    in `excluded`; Gwet's AC1 and Fleiss' kappa still count single ratings in the
    category prevalence, as Gwet (2014) does. When every rated unit has the same
    number of ratings, Fleiss' kappa is statsmodels' value; otherwise it is Gwet's
    (2014) generalisation to unequal counts (irrCAC's `fleiss.kappa.raw`), and the
    coefficient's note says so. `label_distribution` counts every rating given,
    including those on excluded units. `level` applies to Krippendorff's
    alpha; the other coefficients are nominal. For ordinal alpha the order of
    `categories` is the order (a warning says so when numeric categories are declared
    out of numeric order); interval and ratio alpha use the categories as numbers
    when they all parse as numbers, otherwise their positions 0, 1, 2, ...

    Each coefficient carries its parts: p_o and p_e (d_o and d_e for alpha), the
    asymptotic standard error of Gwet (2014) with its Wald interval (t with n - 1
    degrees of freedom, as irrCAC prints it), and a bootstrap percentile interval:
    `bootstrap` resamples of the rated units, with replacement, from
    `np.random.default_rng(seed)`. Pairwise kappas resample the units the two raters
    share. `bootstrap=0` gives no bootstrap intervals.

    `distance` is a researcher's own distance for alpha, in place of the level's: a
    categories x categories matrix of Krippendorff's squared differences delta^2 (rows and
    columns in the order of `categories`, which must then be given; 0 on the diagonal,
    symmetric, >= 0), or a callable as `krippendorff.alpha` takes one
    (`metric(v1, v2, i1, i2, n_v, dtype)` -> the squared differences, called with the
    categories as numbers when they all parse as numbers, else their positions 0, 1, 2,
    ...; i1 and i2 are the positions, n_v the pairable values of each category). The
    result's `alpha_parts` and `fleiss_parts` hold each coefficient's parts.
    """
    data = as_ratings(ratings)
    if distance is not None and not callable(distance) and categories is None:
        raise ValueError(
            "a distance matrix needs categories=[...]: its rows and columns are the "
            "categories in that order"
        )
    categories = _categories(data, categories, level)
    _check_options(level, distance, confidence, bootstrap)
    return _agreement(
        data,
        categories,
        level=level,
        bootstrap=bootstrap,
        seed=seed,
        confidence=confidence,
        distance=distance,
    )


def _agreement(
    data: Ratings,
    categories: tuple[Label, ...],
    *,
    level: Level,
    bootstrap: int,
    seed: int,
    confidence: float,
    distance: DistanceMatrix | DistanceMetric | None,
) -> AgreementReport:
    """`agreement` on checked options."""
    # the distinct rows of codes (who said what), how many units have each, each unit's
    rows, row_of = _encode(data, categories)
    weight = np.bincount(row_of, minlength=len(rows))
    who = None if data.anonymous_raters else (rows, weight)
    row_counts = _count_matrix(rows, len(categories))
    counts = row_counts[row_of]
    per_unit = counts.sum(axis=1)
    used = per_unit >= 2
    patterns, freq = _count_patterns(row_counts, weight)
    delta = _delta_fn(level, categories) if distance is None else custom_delta(distance, categories)
    observed = _coefficients_from_patterns(
        patterns, freq[np.newaxis, :].astype(np.float64), delta=delta
    )
    # who said what on each unit, as distinct rows and their counts (Conger's kappa)
    code_rows = None if who is None else _conger_patterns(*who)
    resampled = (
        _resampled((patterns, freq), code_rows, observed, len(categories), delta, bootstrap, seed)
        if bootstrap and len(freq)
        else {}
    )
    n_used = int(used.sum())
    estimates = _point_estimates(
        counts=counts,
        patterns=(patterns, freq),
        code_rows=code_rows,
        used=used,
        categories=categories,
        level=level,
        observed=observed,
        intervals=percentile_cis(resampled, confidence),
        confidence=confidence,
        distance=distance,
    )
    pairwise = (
        ()
        if who is None
        else _pairwise_kappas(
            who, data.raters, categories, bootstrap=bootstrap, seed=seed, confidence=confidence
        )
    )
    return AgreementReport(
        categories=categories,
        level=level,
        raters=() if data.anonymous_raters else data.raters,
        n_units_total=len(data.units),
        n_units_used=n_used,
        n_ratings=int(per_unit.sum()),
        **_raters_per_unit(per_unit),
        excluded=_excluded(data.units, per_unit),
        label_distribution=_labels_given(data, weight),
        percent_agreement=estimates["percent"],
        full_agreement=estimates["full"],
        fleiss_kappa=estimates["fleiss"],
        krippendorff_alpha=estimates["alpha"],
        gwet_ac1=estimates["ac1"],
        conger_kappa=estimates["conger"],
        brennan_prediger=estimates["bp"],
        per_category=_per_category(patterns, freq, categories, confidence) if n_used else (),
        pairwise=pairwise,
        per_rater=() if who is None else _per_rater(who, data.raters, pairwise),
        bootstrap=bootstrap,
        confidence=confidence,
        seed=seed,
        fleiss_parts=_fleiss_parts(counts, data.units, categories) if n_used else None,
        alpha_parts=_alpha_parts(patterns, freq, categories, delta) if n_used else None,
        distance=_fixed_distance(distance, len(categories)),
    )


def _count_patterns(
    row_counts: npt.NDArray[np.int64], weight: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct count rows of the units with a rating and how many units have each,
    from the count rows of the distinct rows of codes and how many units have each."""
    rated = row_counts.sum(axis=1) >= 1
    return _merged_rows(row_counts[rated], weight[rated])


def _labels_given(data: Ratings, weight: npt.NDArray[np.int64]) -> dict[Label, int]:
    """`label_distribution` of every rating, read once per distinct row of labels
    (`Ratings.distinct`) that `weight` units have."""
    rows = data.distinct[0]
    return label_distribution(
        chain.from_iterable(rows), np.repeat(weight, len(data.raters)).tolist()
    )


def _raters_per_unit(per_unit: npt.NDArray[np.int64]) -> dict[str, Any]:
    """How many units have each number of ratings, and the least, most and mean number
    on the units with two or more."""
    sizes, size_counts = np.unique(per_unit, return_counts=True)
    used_counts = per_unit[per_unit >= 2]
    n_used = len(used_counts)
    return {
        "raters_per_unit": dict(zip(sizes.tolist(), size_counts.tolist(), strict=True)),
        "min_raters": int(np.min(used_counts)) if n_used else 0,
        "max_raters": int(np.max(used_counts)) if n_used else 0,
        "mean_raters": float(used_counts.mean()) if n_used else 0.0,
    }


def _excluded(
    units: Sequence[Hashable], per_unit: npt.NDArray[np.int64]
) -> tuple[ExcludedUnit, ...]:
    """The units with fewer than two ratings, and why."""
    return tuple(
        ExcludedUnit(units[u], "no ratings" if per_unit[u] == 0 else "only one rating")
        for u in np.flatnonzero(per_unit < 2).tolist()
    )


def _fixed_distance(
    distance: DistanceMatrix | DistanceMetric | None, q: int
) -> tuple[tuple[float, ...], ...] | None:
    """A researcher's distance matrix as the report keeps it (None: a level's or a
    callable)."""
    if distance is None or callable(distance):
        return None
    return tuple(tuple(float(x) for x in row) for row in distance_matrix(distance, q))


def _check_options(level: Level, distance: object, confidence: float, bootstrap: int) -> None:
    """`agreement`'s options that cannot go together or are out of range: ValueError."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, not {level!r}")
    if distance is not None and level != "nominal":
        raise ValueError(
            f"give either a level ({level!r}) or a distance for alpha, not both: the "
            "distance replaces the level's"
        )
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if bootstrap < 0:
        raise ValueError("bootstrap must be 0 (no intervals) or a positive count")


def _resampled(
    patterns: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    code_rows: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None,
    observed: dict[str, FloatArray],
    n_categories: int,
    delta: DeltaFn,
    bootstrap: int,
    seed: int,
) -> dict[str, FloatArray]:
    """Every coefficient on each of `bootstrap` resamples of the rated units: how often
    each distinct count pattern is drawn, default_rng(seed).multinomial(units, each
    pattern's share, bootstrap); then, for Conger's kappa, the distinct code rows from
    the same generator (its observed value is added to `observed`)."""
    rows_of, freq = patterns
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(freq.sum(), freq / freq.sum(), size=bootstrap)
    resampled = _coefficients_from_patterns(rows_of, weights.astype(np.float64), delta=delta)
    if code_rows is not None:
        rows, row_freq = code_rows
        draws = rng.multinomial(row_freq.sum(), row_freq / row_freq.sum(), size=bootstrap)
        resampled["conger"] = _conger_from_weights(rows, draws.astype(np.float64), n_categories)
        observed["conger"] = _conger_from_weights(
            rows, row_freq[np.newaxis, :].astype(np.float64), n_categories
        )
    return resampled


DistanceMatrix = Sequence[Sequence[float]] | FloatArray
DistanceMetric = Callable[..., FloatArray]


def distance_matrix(distance: DistanceMatrix, size: int) -> FloatArray:
    """A researcher's distance matrix for alpha, checked: size x size (the categories in
    order), finite, >= 0, symmetric, 0 on the diagonal."""
    matrix: FloatArray = square_matrix(distance, size, "distance")
    if (matrix < 0).any():
        raise ValueError("distances must be finite numbers >= 0")
    if (np.diag(matrix) != 0).any():
        raise ValueError("a distance must be 0 on the diagonal (a category is 0 from itself)")
    if not np.allclose(matrix, matrix.T, rtol=0, atol=1e-12):
        raise ValueError("a distance must be symmetric (d[i][j] == d[j][i])")
    return matrix


def custom_delta(
    distance: DistanceMatrix | DistanceMetric, categories: tuple[Label, ...]
) -> DeltaFn:
    """The squared-difference function of a researcher's distance (see `agreement`)."""
    q = len(categories)
    if not callable(distance):
        fixed = distance_matrix(distance, q)
        return lambda n_c: np.broadcast_to(fixed, (n_c.shape[0], q, q))
    domain = _value_domain("interval", categories)
    index = np.arange(q)

    def call(n_v: FloatArray) -> FloatArray:
        out = np.asarray(
            distance(
                domain[:, np.newaxis],
                domain[np.newaxis, :],
                i1=index[:, np.newaxis],
                i2=index[np.newaxis, :],
                n_v=n_v,
                dtype=np.float64,
            ),
            dtype=np.float64,
        )
        out = np.broadcast_to(out, (q, q))
        if not np.isfinite(out).all() or (out < 0).any() or (np.diag(out) != 0).any():
            raise ValueError(
                "the distance function must give finite squared differences >= 0, with 0 "
                "between a category and itself"
            )
        return out

    call(np.ones(q))  # checked once, before any data reaches it
    return lambda n_c: np.stack([call(row) for row in n_c])


def _fleiss_parts(
    counts: npt.NDArray[np.int64], units: Sequence[Hashable], categories: tuple[Label, ...]
) -> FleissParts:
    r = counts.sum(axis=1)
    pairable = r >= 2
    rated = r >= 1
    c = counts[pairable].astype(np.float64)
    rp = r[pairable].astype(np.float64)
    p_i = (c * (c - 1)).sum(axis=1) / (rp * (rp - 1))
    p_j = (counts[rated] / r[rated, np.newaxis]).mean(axis=0)
    return FleissParts(
        units=tuple(compress(units, pairable.tolist())),
        p_i=tuple(p_i.tolist()),
        p_j={cat: float(x) for cat, x in zip(categories, p_j, strict=True)},
        p_bar=float(p_i.mean()),
        p_e=float((p_j**2).sum()),
    )


def _alpha_parts(
    patterns: npt.NDArray[np.int64],
    freq: npt.NDArray[np.int64],
    categories: tuple[Label, ...],
    delta: DeltaFn,
) -> AlphaParts:
    coincidences = coincidence_matrix(patterns, freq)
    n_c = coincidences.sum(axis=1)
    d = delta(n_c[np.newaxis, :])[0]
    return AlphaParts(
        pairable=float(n_c.sum()),
        n_c={cat: float(x) for cat, x in zip(categories, n_c, strict=True)},
        coincidences=tuple(tuple(float(x) for x in row) for row in coincidences),
        distances=tuple(tuple(float(x) for x in row) for row in d),
    )


def coincidence_matrix(patterns: npt.ArrayLike, freq: npt.ArrayLike) -> FloatArray:
    """Krippendorff's coincidence matrix o_ck = sum_u n_uc (n_uk - [c == k]) / (m_u - 1)
    over units with m_u >= 2 values, from per-unit count vectors (P, q) and how many
    units have each (P,); B such weightings (B, P) give B matrices (B, q, q)."""
    p = np.asarray(patterns, dtype=np.float64)
    w = np.asarray(freq, dtype=np.float64)
    q, m = p.shape[1], p.sum(axis=1)
    within = p[:, :, np.newaxis] * p[:, np.newaxis, :] - np.einsum("pk,kl->pkl", p, np.eye(q))
    within = np.where((m >= 2)[:, np.newaxis, np.newaxis], within, 0.0)
    within /= np.where(m >= 2, m - 1, 1.0)[:, np.newaxis, np.newaxis]
    return np.asarray(w @ within.reshape(len(p), q * q)).reshape(*w.shape[:-1], q, q)


def _categories(data: Ratings, declared: Sequence[Label] | None, level: str) -> tuple[Label, ...]:
    categories = label_set(declared, data.categories_seen())
    numeric = all(as_number(c) is not None for c in categories)
    if declared is None and level == "ordinal" and not numeric:
        raise ValueError(
            "ordinal alpha needs the order of the categories: pass categories=[...] in order "
            f"(the labels seen, {', '.join(map(repr, categories))}, are not all numbers)"
        )
    if level == "ordinal" and numeric and order_categories(categories) != categories:
        warnings.warn(
            f"the categories {list(categories)} are numbers but not in numeric order; "
            "ordinal alpha uses the order given. Pass them in numeric order if that is the "
            "scale (as text, '10' sorts before '2').",
            UserWarning,
            stacklevel=3,
        )
    return categories


def _encode(
    data: Ratings, categories: tuple[Label, ...]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.intp]]:
    """The distinct rows of labels (`Ratings.distinct`) as codes, each label's position in
    `categories` (-1 where missing), and each unit's row: the units x raters codes are
    `rows[row_of]`."""
    index: dict[Label | None, int] = {label: i for i, label in enumerate(categories)}
    index[None] = -1  # categories never hold None: it is a missing rating
    width = len(data.raters)
    labels, units_row = data.distinct
    rows = np.fromiter(
        map(index.get, chain.from_iterable(labels), repeat(-2)), np.int64, len(labels) * width
    ).reshape(len(labels), width)
    row_of = np.array(units_row, dtype=np.intp)
    if (rows == -2).any():
        codes = rows[row_of]
        u, r = (int(i) for i in np.argwhere(codes == -2)[0])  # the first, row by row
        raise ValueError(
            f"label {data.labels[u][r]!r} of rater {data.raters[r]!r} on unit "
            f"{data.units[u]!r} is not one of the declared categories {categories}"
        )
    return rows, row_of


def unique_rows(codes: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """np.unique(codes, axis=0, return_inverse=True, return_counts=True), for codes of -1
    or more: each row read as one number in base (largest code + 2), first column most
    significant, which keeps the rows' order (and is faster than sorting them as rows)."""
    width = codes.shape[1]
    base = int(codes.max(initial=-1)) + 2
    if not codes.size or base**width >= 2**62:
        distinct, row_of, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
        return distinct, row_of.reshape(-1), counts
    keys = (codes + 1) @ (base ** np.arange(width - 1, -1, -1, dtype=np.int64))
    _, first, row_of, counts = np.unique(
        keys, return_index=True, return_inverse=True, return_counts=True
    )
    return codes[first], row_of, counts


def _merged_rows(
    rows: npt.NDArray[np.int64], weight: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct rows of `rows` taken `weight` times each, in `unique_rows`' order, and
    how many times each is taken: `unique_rows` of the repeated rows without repeating them."""
    distinct, row_of, _ = unique_rows(rows)
    freq = np.zeros(len(distinct), dtype=np.int64)
    np.add.at(freq, row_of, weight)
    return distinct, freq


def _count_matrix(codes: npt.NDArray[np.int64], n_categories: int) -> npt.NDArray[np.int64]:
    """units x categories: how many raters gave each category to each unit."""
    n_units = codes.shape[0]
    unit_index, rater_index = np.nonzero(codes >= 0)
    flat = unit_index * n_categories + codes[unit_index, rater_index]
    return np.bincount(flat, minlength=n_units * n_categories).reshape(n_units, n_categories)


_NAMES = {
    "percent": "Percent agreement",
    "full": "Full agreement",
    "fleiss": "Fleiss' kappa",
    "conger": "Conger's kappa",
    "ac1": "Gwet's AC1",
    "bp": "Brennan-Prediger",
}


MakeFn = Callable[..., Coefficient]  # _Maker.make


@dataclass(frozen=True)
class _Maker:
    """One estimate as a Coefficient: its bootstrap interval (withheld when the resampling
    formula does not reproduce the library's value), Wald interval and Gwet's parts."""

    names: dict[str, str]
    n_units: int
    intervals: dict[str, tuple[float | None, float | None, str | None]]
    confidence: float

    def make(
        self,
        key: str,
        value: float | None,
        *,
        undefined_reason: str | None = None,
        note: str | None = None,
        parts: gwet.Parts | None = None,
        check: float | None = None,
        d_o: float | None = None,
        d_e: float | None = None,
    ) -> Coefficient:
        if value is None:
            return Coefficient(
                self.names[key], None, undefined_reason=undefined_reason, n_units=self.n_units
            )
        low, high, ci_note = self.intervals.get(key, (None, None, None))
        if check is not None and not math.isclose(value, check, rel_tol=1e-9, abs_tol=1e-9):
            # The bootstrap trusts the vectorised formula; withhold intervals built on a
            # formula that does not reproduce the library's value on this very data, and
            # say so, rather than lose the coefficient (or the report).
            low = high = None
            ci_note = (
                f"no bootstrap interval: the resampling formula gives {check!r}, the library "
                f"{value!r}; please report this"
            )
        return _with_parts(
            Coefficient(
                self.names[key],
                value,
                low,
                high,
                note="; ".join(n for n in (note, ci_note) if n) or None,
                n_units=self.n_units,
                d_o=d_o,
                d_e=d_e,
            ),
            parts,
            self.confidence,
        )


def _with_parts(
    coefficient: Coefficient, parts: gwet.Parts | None, confidence: float
) -> Coefficient:
    """The coefficient with Gwet's p_o, p_e and standard error, and the Wald interval."""
    if parts is None:
        return coefficient
    low, high = gwet.wald_interval(parts.value, parts.se, parts.n, confidence)
    return replace(
        coefficient, p_o=parts.p_o, p_e=parts.p_e, se=parts.se, wald_low=low, wald_high=high
    )


def _point_estimates(
    *,
    counts: npt.NDArray[np.int64],
    patterns: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    code_rows: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None,
    used: npt.NDArray[np.bool_],
    categories: tuple[Label, ...],
    level: str,
    observed: dict[str, FloatArray],
    intervals: dict[str, tuple[float | None, float | None, str | None]],
    confidence: float,
    distance: DistanceMatrix | DistanceMetric | None = None,
) -> dict[str, Coefficient]:
    n_used = int(used.sum())
    alpha_kind = level if distance is None else "custom distance"
    names = {**_NAMES, "alpha": f"Krippendorff's alpha ({alpha_kind})"}
    if n_used == 0:
        reason = "no unit has two or more ratings, so there is nothing to compare"
        return {
            key: Coefficient(name, None, undefined_reason=reason) for key, name in names.items()
        }

    used_counts = counts[used]
    pairable_labels = used_counts.sum(axis=0)
    single_category = int((pairable_labels > 0).sum()) == 1
    only = categories[int(np.argmax(pairable_labels))]
    one_category_reason = (
        f"every rating on the {n_used} units with two or more ratings is {only!r}: "
        "expected agreement is 1, so a chance-corrected coefficient is 0/0"
    )
    one_category_note = (
        f"every rating is {only!r}: the coefficient is 1 by its formula, but the data "
        "cannot show that the raters tell the categories apart"
    )

    make = _Maker(names, n_used, intervals, confidence).make

    result: dict[str, Coefficient] = {}
    # Gwet's parts from the distinct count patterns of the rated units and how many units
    # have each (the same sums over units, to rounding: a few rows instead of thousands);
    # the libraries' point estimates (statsmodels, krippendorff) read the counts whole.
    percent_parts = gwet.percent_agreement(*patterns)
    result["percent"] = make(
        "percent", float(observed["percent"][0]), parts=percent_parts, check=percent_parts.value
    )
    result["full"] = make(
        "full", float(observed["full"][0]), note="share of units on which every rating is the same"
    )

    rated_counts = counts[counts.sum(axis=1) >= 1]
    # Fleiss' P_e = sum_j p_j^2 (and Conger's) is 1 only when every rating of every rated
    # unit is one category (the shares count the units with one rating too, so a second
    # category there makes it < 1)
    one_category_rated = int((rated_counts.sum(axis=0) > 0).sum()) == 1
    undefined = one_category_reason if one_category_rated else None
    result["fleiss"] = _fleiss(make, rated_counts, patterns, observed, undefined)
    result["conger"] = _conger(make, code_rows, len(categories), observed, undefined)
    result["alpha"] = _alpha(
        make,
        used_counts,
        patterns,
        categories,
        level,
        observed,
        distance,
        one_category_reason if single_category else None,
    )
    if len(categories) < 2:
        reason = "only one category is declared; chance agreement divides by (categories - 1)"
        result["ac1"] = make("ac1", None, undefined_reason=reason)
        result["bp"] = make("bp", None, undefined_reason=reason)
        return result
    note = one_category_note if single_category else None
    for key, parts in (("ac1", gwet.gwet_ac1(*patterns)), ("bp", gwet.brennan_prediger(*patterns))):
        result[key] = make(key, parts.value, note=note, parts=parts, check=float(observed[key][0]))
    return result


def _fleiss(
    make: MakeFn,
    rated_counts: npt.NDArray[np.int64],
    patterns: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    observed: dict[str, FloatArray],
    undefined: str | None,
) -> Coefficient:
    """Fleiss' kappa: statsmodels' when every rated unit has as many ratings, else Gwet's
    generalisation to unequal counts."""
    if undefined:
        return make("fleiss", None, undefined_reason=undefined)
    sizes = sorted(set(rated_counts.sum(axis=1).tolist()))
    parts, vectorised = gwet.fleiss_kappa(*patterns), float(observed["fleiss"][0])
    if len(sizes) == 1:
        value = float(fleiss_kappa(rated_counts, method="fleiss"))
        return make("fleiss", value, parts=parts, check=vectorised)
    return make(
        "fleiss",
        vectorised,
        parts=parts,
        note=f"units have {sizes[0]} to {sizes[-1]} ratings: Fleiss' kappa generalised to "
        "unequal counts as in Gwet (2014) (irrCAC fleiss.kappa.raw); chance agreement "
        "uses every rated unit",
    )


def _conger(
    make: MakeFn,
    code_rows: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None,
    q: int,
    observed: dict[str, FloatArray],
    undefined: str | None,
) -> Coefficient:
    """Conger's kappa from who said what (undefined for anonymous raters)."""
    if code_rows is None:
        return make(
            "conger",
            None,
            undefined_reason="the raters are anonymous (counts per category), and Conger's "
            "kappa needs each rater's own category shares",
        )
    if undefined:
        return make("conger", None, undefined_reason=undefined)
    parts = gwet.conger_kappa(code_rows[0], q, code_rows[1])
    vectorised = observed.get("conger")
    return make(
        "conger",
        parts.value,
        parts=parts,
        check=None if vectorised is None else float(vectorised[0]),
    )


def _alpha(
    make: MakeFn,
    used_counts: npt.NDArray[np.int64],
    patterns: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    categories: tuple[Label, ...],
    level: str,
    observed: dict[str, FloatArray],
    distance: DistanceMatrix | DistanceMetric | None,
    undefined: str | None,
) -> Coefficient:
    """Krippendorff's alpha (the krippendorff library) at `level` or with a researcher's
    distance, with Gwet's standard error when nominal."""
    if undefined:
        return make("alpha", None, undefined_reason=undefined)
    note = None
    if distance is not None:  # then the level is nominal (_check_options)
        if not float(observed["d_e"][0]) > 0:
            return make(
                "alpha",
                None,
                undefined_reason="the distance puts every pair of the categories used at 0: "
                "expected disagreement D_e is 0, so alpha = 1 - D_o / D_e is 0/0",
            )
        note = (
            "the researcher's distance; no asymptotic standard error here, use the "
            "bootstrap interval"
        )
    elif level != "nominal":
        note = f"no asymptotic standard error for {level} alpha here; use the bootstrap interval"
    value = krippendorff.alpha(
        value_counts=used_counts,
        value_domain=_value_domain(level if distance is None else "interval", categories),
        level_of_measurement=level  # type: ignore[arg-type]
        if distance is None
        else _library_metric(distance, len(categories)),
    )
    alpha = make(
        "alpha",
        float(value),
        check=float(observed["alpha"][0]),
        parts=None if note else gwet.krippendorff_alpha_se(*patterns),
        note=note,
        d_o=float(observed["d_o"][0]),
        d_e=float(observed["d_e"][0]),
    )
    # p_o and p_e in Gwet's form of alpha are not Krippendorff's; keep d_o, d_e only.
    return replace(alpha, p_o=None, p_e=None)


def _library_metric(
    distance: DistanceMatrix | DistanceMetric, q: int
) -> krippendorff.krippendorff.DistanceMetric:
    """The distance as `krippendorff.alpha` takes it (a matrix read at the positions)."""
    if callable(distance):
        return distance  # type: ignore[return-value]
    fixed = distance_matrix(distance, q)
    return lambda v1, v2, i1, i2, n_v, dtype=np.float64: fixed[i1, i2]  # type: ignore[return-value]


def _per_category(
    rated: npt.NDArray[np.int64],
    freq: npt.NDArray[np.int64],
    categories: tuple[Label, ...],
    confidence: float,
) -> tuple[CategoryKappa, ...]:
    """Fleiss' (1971) kappa of each category against the rest (Gwet's form, missing data),
    from the distinct count patterns of the rated units and how many units have each."""
    total = rated.sum(axis=1)
    result = []
    for j, category in enumerate(categories):
        binary = np.column_stack([rated[:, j], total - rated[:, j]])
        name = f"kappa for {category!r}"
        if not binary[:, 0].any() or not binary[:, 1].any():
            which = "never given" if not binary[:, 0].any() else "the only label given"
            kappa = Coefficient(
                name, None, undefined_reason=f"{category!r} is {which}: expected agreement is 1"
            )
        else:
            parts = gwet.fleiss_kappa(binary, freq)
            n_units = int(freq[total >= 2].sum())
            kappa = _with_parts(Coefficient(name, parts.value, n_units=n_units), parts, confidence)
        result.append(CategoryKappa(category, kappa))
    return tuple(result)


def _conger_patterns(
    codes: npt.NDArray[np.int64], weight: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct rows of codes (who said what on a unit) with a rating and how many
    units have each, from rows of codes and how many units have each.

    Conger's chance agreement needs each rater's category shares, which the count
    patterns behind the other intervals do not keep, so its resamples draw whole rows.
    """
    rated = (codes >= 0).any(axis=1)
    return _merged_rows(codes[rated], weight[rated])


def _conger_from_weights(rows: npt.NDArray[np.int64], weights: FloatArray, q: int) -> FloatArray:
    """Conger's kappa for B weightings (B, P) of the distinct rows of codes (P, R)."""
    onehot = (rows[:, :, np.newaxis] == np.arange(q)).astype(np.float64)  # (P, R, q)
    table = onehot.sum(axis=1)
    r = table.sum(axis=1)
    pairable = (r >= 2).astype(np.float64)
    agree = np.where(pairable > 0, (table * (table - 1)).sum(1) / np.maximum(r * (r - 1), 1), 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pa = (weights @ agree) / (weights @ pairable)
        shares = np.einsum("bp,prq->brq", weights, onehot)
        shares /= shares.sum(axis=2, keepdims=True)  # a rater with no rating gives NaN
        present = np.isfinite(shares).all(axis=2)  # (B, R)
        shares = np.where(present[:, :, np.newaxis], shares, 0.0)
        raters = present.sum(axis=1).astype(np.float64)
        mean = shares.sum(axis=1) / raters[:, np.newaxis]
        cross = np.einsum("brk,brk->b", shares, shares)
        s2_trace = (cross - raters * (mean**2).sum(axis=1)) / (raters - 1)
        pe = (mean**2).sum(axis=1) - s2_trace / raters
        kappa: FloatArray = (pa - pe) / (1 - pe)
    return kappa


def _value_domain(level: str, categories: tuple[Label, ...]) -> FloatArray:
    if level in ("interval", "ratio"):
        try:
            return np.array([float(c) for c in categories], dtype=np.float64)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
    return np.arange(len(categories), dtype=np.float64)


DeltaFn = Callable[[FloatArray], FloatArray]


def _delta_fn(level: str, categories: tuple[Label, ...]) -> DeltaFn:
    """Squared difference function for alpha: (B, q) pairable value totals -> (B, q, q)."""
    q = len(categories)
    values = _value_domain(level, categories)
    i, j = np.meshgrid(np.arange(q), np.arange(q), indexing="ij")
    if level == "nominal":
        fixed = (i != j).astype(np.float64)
    elif level == "interval":
        fixed = (values[i] - values[j]) ** 2
    elif level == "ratio":
        total = values[i] + values[j]
        diff = values[i] - values[j]
        fixed = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2
    else:
        lo, hi = np.minimum(i, j), np.maximum(i, j)

        def ordinal(n_c: FloatArray) -> FloatArray:
            # Krippendorff's ordinal metric depends on the value totals of each resample.
            cum = np.cumsum(n_c, axis=1)
            between = cum[:, hi] - cum[:, lo] + n_c[:, lo]
            return (between - (n_c[:, lo] + n_c[:, hi]) / 2) ** 2

        return ordinal
    return lambda n_c: np.broadcast_to(fixed, (n_c.shape[0], q, q))


def _coefficients_from_patterns(
    patterns: npt.NDArray[np.int64],
    weights: FloatArray,
    *,
    delta: DeltaFn,
) -> dict[str, FloatArray]:
    """All multi-rater coefficients for B weightings of the distinct count vectors.

    `patterns` (P, q) are the distinct per-unit count vectors, `weights` (B, P) how
    many units carry each one (the observed frequencies, or a bootstrap resample).
    Returns arrays of length B; NaN marks a resample where a coefficient is 0/0.
    """
    p = patterns.astype(np.float64)
    q = p.shape[1]
    r = p.sum(axis=1)
    pairable = r >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        agree = np.where(pairable, (p * (p - 1)).sum(axis=1) / (r * (r - 1)), 0.0)
        full = np.where(pairable, p.max(axis=1, initial=0) == r, False).astype(np.float64)
        n_pairable = weights @ pairable.astype(np.float64)
        percent = (weights @ agree) / n_pairable

        # Category prevalence over every rated unit (Gwet 2014). With equal counts per
        # unit this is Fleiss' p_j, so the kappa below is exactly Fleiss' kappa.
        share = p / r[:, np.newaxis]
        pi = (weights @ share) / weights.sum(axis=1)[:, np.newaxis]
        fleiss_pe = (pi**2).sum(axis=1)
        fleiss = (percent - fleiss_pe) / (1 - fleiss_pe)
        pe = (pi * (1 - pi)).sum(axis=1) / (q - 1) if q > 1 else np.full(len(weights), np.nan)
        ac1 = (percent - pe) / (1 - pe)
        bp = (percent - 1 / q) / (1 - 1 / q) if q > 1 else np.full(len(weights), np.nan)

        # Krippendorff's alpha from the coincidence matrix.
        coincidences = coincidence_matrix(p, weights)
        n_c = coincidences.sum(axis=2)
        n = n_c.sum(axis=1)
        d = delta(n_c)
        observed = (coincidences * d).sum(axis=(1, 2))
        expected = (n_c[:, :, np.newaxis] * n_c[:, np.newaxis, :] * d).sum(axis=(1, 2)) / (n - 1)
        alpha = 1 - observed / expected
        full_share = (weights @ full) / n_pairable
        # Krippendorff's D_o and D_e (alpha = 1 - D_o / D_e), per pairable value.
        d_o, d_e = observed / n, expected / n
    return {
        "percent": percent,
        "full": full_share,
        "fleiss": fleiss,
        "ac1": ac1,
        "bp": bp,
        "alpha": alpha,
        "d_o": d_o,
        "d_e": d_e,
    }


def nominal_coefficients(patterns: npt.ArrayLike, weights: npt.ArrayLike) -> dict[str, FloatArray]:
    """Every multi-rater coefficient (nominal) for B weightings of per-unit count vectors.

    `patterns` (P, q) are per-unit category counts, `weights` (B, P) how many units carry
    each one. Keys as `_coefficients_from_patterns`: percent, fleiss, alpha, ac1, ...
    """
    p = np.asarray(patterns, dtype=np.int64)
    q = p.shape[1]
    return _coefficients_from_patterns(
        p,
        np.atleast_2d(np.asarray(weights, dtype=np.float64)),
        delta=_delta_fn("nominal", tuple(range(q))),
    )


def percentile_ci(
    values: FloatArray | None, confidence: float
) -> tuple[float | None, float | None, str | None]:
    """The bootstrap percentile interval of the resampled values (numpy's quantile,
    linear interpolation; reference.percentile_interval), undefined resamples (NaN)
    left out with a note."""
    if values is None or not len(values):
        return None, None, None
    finite = values[np.isfinite(values)]
    dropped = len(values) - len(finite)
    if not len(finite):
        return None, None, "no bootstrap resample gave a defined value, so there is no interval"
    tail = (1 - confidence) / 2
    low, high = np.quantile(finite, [tail, 1 - tail])
    note = (
        f"{dropped} of {len(values)} bootstrap resamples were undefined and left out"
        if dropped
        else None
    )
    return float(low), float(high), note


def percentile_cis[Key: Hashable](
    resampled: Mapping[Key, FloatArray], confidence: float
) -> dict[Key, tuple[float | None, float | None, str | None]]:
    """`percentile_ci` of each array; those fully defined and of one length in one
    np.quantile over rows (numpy's quantile along an axis is its 1-D quantile of each row,
    to the last bits: one call per report field instead of one per coefficient)."""
    whole: dict[int, list[Key]] = defaultdict(list)  # length -> keys
    out = {}
    for key, values in resampled.items():
        if len(values) and np.isfinite(values).all():
            whole[len(values)].append(key)
        else:
            out[key] = percentile_ci(values, confidence)
    tail = (1 - confidence) / 2
    for keys in whole.values():
        lows, highs = np.quantile(np.stack([resampled[k] for k in keys]), [tail, 1 - tail], axis=1)
        bounds = zip(lows.tolist(), highs.tolist(), strict=True)
        out.update(zip(keys, [(low, high, None) for low, high in bounds], strict=True))
    return out


# --------------------------------------------------------------------------- pairs


def _pairwise_kappas(
    rows: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    raters: tuple[Hashable, ...],
    categories: tuple[Label, ...],
    *,
    bootstrap: int,
    seed: int,
    confidence: float,
) -> tuple[PairwiseKappa, ...]:
    """Cohen's kappa of each pair of raters on the units both rated: statsmodels' kappa of
    their confusion table, and its bootstrap interval from multinomial draws of it.
    `rows`: rows of codes (units x raters) and how many units have each."""
    codes, weight = rows
    q = len(categories)
    rng = np.random.default_rng(seed)
    pairs = []
    for i, j in combinations(range(len(raters)), 2):
        both = (codes[:, i] >= 0) & (codes[:, j] >= 0)
        a, b, w = codes[both, i], codes[both, j], weight[both]
        n = int(w.sum())
        if n == 0:
            reason = f"{raters[i]!r} and {raters[j]!r} rated no unit in common"
            kappa = Coefficient("Cohen's kappa", None, undefined_reason=reason)
        elif (a == a[0]).all() and (b == a[0]).all():  # one label throughout
            reason = (
                f"both raters gave {categories[int(a[0])]!r} to all {n} shared units: "
                "expected agreement is 1, so kappa is 0/0"
            )
            kappa = Coefficient("Cohen's kappa", None, undefined_reason=reason, n_units=n)
        else:
            table = np.bincount(a * q + b, weights=w, minlength=q * q).astype(np.float64)
            value = float(cohens_kappa(table.reshape(q, q), return_results=False))
            low = high = note = None
            if bootstrap:
                draws = rng.multinomial(n, table / n, size=bootstrap).reshape(-1, q, q)
                low, high, note = percentile_ci(_kappa_from_tables(draws.astype(float)), confidence)
            kappa = Coefficient("Cohen's kappa", value, low, high, note=note, n_units=n)
        pairs.append(PairwiseKappa(raters[i], raters[j], n, kappa))
    return tuple(pairs)


def _kappa_from_tables(tables: FloatArray) -> FloatArray:
    """Cohen's kappa for a stack of (B, q, q) contingency tables."""
    n = tables.sum(axis=(1, 2))
    observed = np.trace(tables, axis1=1, axis2=2) / n
    expected = (tables.sum(axis=2) * tables.sum(axis=1)).sum(axis=1) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa: FloatArray = (observed - expected) / (1 - expected)
    return kappa


def _per_rater(
    rows: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    raters: tuple[Hashable, ...],
    pairwise: tuple[PairwiseKappa, ...],
) -> tuple[RaterAgreement, ...]:
    """Each rater against the others on the units they share. `rows`: rows of codes (units
    x raters) and how many units have each."""
    codes, weight = rows
    result = []
    for i, rater in enumerate(raters):
        mine = codes[:, i]
        others = np.delete(codes, i, axis=1)
        present = (mine[:, np.newaxis] >= 0) & (others >= 0)
        n_pairs = int(weight @ present.sum(axis=1))
        n_units = int(weight @ present.any(axis=1))
        kappas = [
            p.kappa.value
            for p in pairwise
            if rater in (p.rater_a, p.rater_b) and p.kappa.value is not None
        ]
        if not n_pairs:
            result.append(
                RaterAgreement(rater, 0, 0, None, None, "shares no unit with another rater")
            )
            continue
        agree = int(weight @ ((mine[:, np.newaxis] == others) & present).sum(axis=1))
        result.append(
            RaterAgreement(
                rater,
                n_units,
                n_pairs,
                agree / n_pairs,
                float(np.mean(kappas)) if kappas else None,
                None if kappas else "no pairwise kappa with this rater is defined",
            )
        )
    return tuple(result)


# --------------------------------------------------------------------------- majority


@dataclass(frozen=True)
class Majority:
    """Plurality vote. `label` is None when there are no votes, the tie value on a tie."""

    label: Label | None
    is_tie: bool
    n_votes: int
    distribution: dict[Label, int]


def majority(labels: Iterable[Label | None], *, tie: Label = TIE) -> Majority:
    """Most frequent label; a tie for first place gives `tie` (e.g. "inconclusive")."""
    distribution = label_distribution(labels)
    n_votes = sum(distribution.values())
    if not distribution:
        return Majority(None, False, 0, distribution)
    ranked = list(distribution.items())
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return Majority(tie, True, n_votes, distribution)
    return Majority(ranked[0][0], False, n_votes, distribution)
