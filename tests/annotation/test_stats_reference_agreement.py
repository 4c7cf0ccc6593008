"""Every fast path of the agreement, two-rater and classification statistics against
stats/reference.py, its textbook form, on random data (hypothesis): 1-30 units, 2-6
raters, 1-5 categories, missing answers, ties, one unit and one category. Where the fast
path says a coefficient is undefined, the reference must say so too (undefinedness is
compared, never NaN values); intervals are compared to the last digits, the reference
drawing the same resamples from the same generator and computing each one written out."""

from __future__ import annotations

import math

import krippendorff
import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from annotation.hiring.services import Score
from annotation.stats import reference as ref
from annotation.stats.classification import classification_scores, mcnemar_test
from annotation.stats.coefficient import Coefficient
from annotation.stats.inter_rater import agreement
from annotation.stats.ratings import Ratings
from annotation.stats.two_raters import cohen_kappa

CHECKS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = 1e-9
CATEGORIES = ("a", "b", "c", "d", "e")
Rows = list[list[str | None]]


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def same(fast: Coefficient, reference: float | None) -> bool:
    """The fast coefficient is the reference's: both undefined, or the same number."""
    return close(fast.value, reference)


@st.composite
def rating_matrices(draw: st.DrawFn) -> tuple[tuple[str, ...], Rows]:
    """Units x raters labels over the first 1-5 categories, None a missing answer."""
    categories = CATEGORIES[: draw(st.integers(1, 5))]
    raters = draw(st.integers(2, 6))
    label = st.sampled_from((None, *categories))
    rows = draw(
        st.lists(st.lists(label, min_size=raters, max_size=raters), min_size=1, max_size=30)
    )
    return categories, rows


EDGES = [
    (("a",), [["a", "a"]]),  # one unit, one category: chance-corrected 0/0
    (("a", "b"), [["a", "b"]]),  # one unit, disagreeing
    (("a", "b"), [["a", None], [None, "b"]]),  # nothing pairable
    (("a", "b"), [["a", "a"], ["b", None]]),  # one category pairable, another single
    (("a", "b", "c"), [["a", "a", "b"], ["c", "c", "c"], ["b", None, "b"]]),
]


def pairs_of(rows: Rows, categories: tuple[str, ...]) -> list[tuple[list[int], list[int]]]:
    """Each rater pair's category indices over the units both rated, in pair order."""
    index = {c: i for i, c in enumerate(categories)}
    out = []
    width = len(rows[0])
    for i in range(width):
        for j in range(i + 1, width):
            both = [(x, y) for r in rows if (x := r[i]) is not None and (y := r[j]) is not None]
            out.append(([index[x] for x, _ in both], [index[y] for _, y in both]))
    return out


def codes_of(rows: Rows, categories: tuple[str, ...]) -> list[list[int]]:
    """Units x raters category indices, -1 missing."""
    index = {c: i for i, c in enumerate(categories)}
    return [[-1 if x is None else index[x] for x in row] for row in rows]


# --------------------------------------------------------------------------- point values


def check_point_values(categories: tuple[str, ...], rows: Rows) -> None:
    report = agreement(Ratings.from_units_by_raters(rows), categories=categories, bootstrap=0)
    table = ref.count_table(rows, categories)
    assert same(report.percent_agreement, ref.percent_agreement(table))
    assert same(report.fleiss_kappa, ref.fleiss_kappa(table))
    assert same(report.gwet_ac1, ref.gwet_ac1(table))
    assert same(report.brennan_prediger, ref.brennan_prediger(table))
    assert same(report.full_agreement, ref.full_agreement(table))
    alpha, d_o, d_e = ref.krippendorff_alpha(table)
    assert same(report.krippendorff_alpha, alpha)
    if alpha is not None:
        assert close(report.krippendorff_alpha.d_o, d_o)
        assert close(report.krippendorff_alpha.d_e, d_e)
        pairable = np.array([row for row in table if sum(row) >= 2])
        assert close(
            alpha, float(krippendorff.alpha(value_counts=pairable, level_of_measurement="nominal"))
        )
    if report.fleiss_parts is not None:
        parts = report.fleiss_parts
        assert all(close(a, b) for a, b in zip(parts.p_i, ref.fleiss_p_i(table), strict=True))
        shares = ref.category_shares(table)
        assert all(close(parts.p_j[c], s) for c, s in zip(categories, shares, strict=True))
        assert close(parts.p_e, sum(s * s for s in shares))
        assert close(parts.p_bar, ref.percent_agreement(table))
        assert report.alpha_parts is not None
        o = ref.coincidences(table)
        assert all(
            close(x, y)
            for fast_row, ref_row in zip(report.alpha_parts.coincidences, o, strict=True)
            for x, y in zip(fast_row, ref_row, strict=True)
        )
        for j, per_category in enumerate(report.per_category):  # each category against the rest
            binary = [[row[j], sum(row) - row[j]] for row in table]
            assert same(per_category.kappa, ref.fleiss_kappa(binary))
    else:
        assert ref.percent_agreement(table) is None and not report.per_category
    assert same(report.conger_kappa, ref.conger_kappa(codes_of(rows, categories), len(categories)))
    for pair, (a, b) in zip(report.pairwise, pairs_of(rows, categories), strict=True):
        assert pair.n_units == len(a)
        assert same(pair.kappa, ref.cohen_kappa(a, b, len(categories)))


@CHECKS
@given(rating_matrices())
def test_agreement_coefficients_are_the_textbook_ones(data: tuple[tuple[str, ...], Rows]) -> None:
    check_point_values(*data)


def test_agreement_edges_are_the_textbook_ones() -> None:
    for categories, rows in EDGES:
        check_point_values(categories, rows)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- intervals


def nan_if_none(value: float | None) -> float:
    return math.nan if value is None else value


def same_interval(fast: Coefficient, reference: ref.Interval) -> bool:
    """The fast coefficient's bootstrap interval is the reference's (none when the
    coefficient is undefined; the fast path notes undefined resamples it left out)."""
    if fast.value is None:
        return fast.ci_low is None and fast.ci_high is None
    low, high, dropped = reference
    assert "please report" not in (fast.note or "")
    assert ("resamples were undefined" in (fast.note or "")) == bool(dropped and low is not None)
    return close(fast.ci_low, low) and close(fast.ci_high, high)


@CHECKS
@given(rating_matrices(), st.sampled_from([1, 7, 60]), st.integers(0, 2**32 - 1))
@example((("a", "b"), [["a", "a"], ["b", None]]), 60, 0)
@example((("a",), [["a", "a", None]]), 7, 1)
def test_agreement_intervals_are_those_of_the_resamples_written_out(
    data: tuple[tuple[str, ...], Rows], bootstrap: int, seed: int
) -> None:
    categories, rows = data
    report = agreement(
        Ratings.from_units_by_raters(rows), categories=categories, bootstrap=bootstrap, seed=seed
    )
    table = ref.count_table(rows, categories)
    if not any(sum(row) >= 1 for row in table):
        return  # nothing rated: nothing drawn, every coefficient undefined (checked above)
    resamples = ref.agreement_draws(table, bootstrap=bootstrap, seed=seed)
    for fast, formula in (
        (report.percent_agreement, ref.percent_agreement),
        (report.fleiss_kappa, ref.fleiss_kappa),
        (report.gwet_ac1, ref.gwet_ac1),
        (report.brennan_prediger, ref.brennan_prediger),
        (report.full_agreement, ref.full_agreement),
        (report.krippendorff_alpha, lambda t: ref.krippendorff_alpha(t)[0]),
    ):
        values = [nan_if_none(formula(t)) for t in resamples]
        assert same_interval(fast, ref.percentile_interval(values)), fast.name
    conger = [
        nan_if_none(ref.conger_kappa(resample, len(categories)))
        for resample in ref.conger_draws(
            codes_of(rows, categories), len(categories), bootstrap=bootstrap, seed=seed
        )
    ]
    assert same_interval(report.conger_kappa, ref.percentile_interval(conger))
    rng = np.random.default_rng(seed)
    for pair, (a, b) in zip(report.pairwise, pairs_of(rows, categories), strict=True):
        if ref.cohen_kappa(a, b, len(categories)) is None:
            assert pair.kappa.ci_low is None  # and nothing drawn for it
            continue
        values = [
            nan_if_none(ref.cohen_kappa(x, y, len(categories)))
            for x, y in ref.pair_draws(a, b, len(categories), bootstrap=bootstrap, rng=rng)
        ]
        assert same_interval(pair.kappa, ref.percentile_interval(values))


# --------------------------------------------------------------------------- distances


@st.composite
def distances(draw: st.DrawFn, q: int) -> list[list[float]]:
    """A researcher's squared differences: symmetric, 0 on the diagonal, >= 0."""
    d = [[0.0] * q for _ in range(q)]
    for c in range(q):
        for k in range(c + 1, q):
            d[c][k] = d[k][c] = draw(st.sampled_from([0.0, 0.5, 1.0, 4.0]))
    return d


@CHECKS
@given(st.data())
def test_alpha_with_a_distance_matrix_is_the_textbook_one(data: st.DataObject) -> None:
    categories, rows = data.draw(rating_matrices())
    distance = data.draw(distances(len(categories)))
    report = agreement(
        Ratings.from_units_by_raters(rows), categories=categories, bootstrap=0, distance=distance
    )
    table = ref.count_table(rows, categories)
    alpha, d_o, d_e = ref.krippendorff_alpha(table, distance)
    assert same(report.krippendorff_alpha, alpha)
    if alpha is not None:
        assert close(report.krippendorff_alpha.d_o, d_o)
        assert close(report.krippendorff_alpha.d_e, d_e)


# --------------------------------------------------------------------------- two raters


@st.composite
def agreement_matrices(draw: st.DrawFn, q: int) -> list[list[float]]:
    """A researcher's agreement weights: 1 on the diagonal, each in [0, 1]."""
    w = [[1.0 if c == k else 0.0 for k in range(q)] for c in range(q)]
    for c in range(q):
        for k in range(q):
            if c != k:
                w[c][k] = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0]))
    return w


@CHECKS
@given(st.data())
def test_cohen_kappa_weighted_or_not_is_the_textbook_one(data: st.DataObject) -> None:
    categories, rows = data.draw(rating_matrices())
    kind = data.draw(st.sampled_from([None, "linear", "quadratic", "matrix"]))
    q = len(categories)
    y1, y2 = [r[0] for r in rows], [r[1] for r in rows]
    a, b = pairs_of([[x, y] for x, y in zip(y1, y2, strict=True)], categories)[0]
    if kind == "matrix":
        weights: object = data.draw(agreement_matrices(q))
        agree = weights
    elif kind is None:
        weights, agree = None, None
    else:
        weights = kind
        agree = ref.linear_weights(q, 1 if kind == "linear" else 2) if q > 1 else [[1.0]]
    fast = cohen_kappa(y1, y2, labels=categories, weights=weights)  # type: ignore[arg-type]
    assert same(fast, ref.cohen_kappa(a, b, q, agree))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- proportions


@CHECKS
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
@example((0, 1))
@example((1, 1))
def test_the_wilson_interval_is_the_textbook_one(counts: tuple[int, int]) -> None:
    matching, units = counts
    fast = Score(units=units, matching=matching).wilson()
    assert fast is not None
    low, high = ref.wilson_interval(matching, units)
    assert close(fast[0], low) and close(fast[1], high)
    assert Score(units=0, matching=0).wilson() is None


VERDICTS = st.sampled_from(["supported", "unsupported", None])


@CHECKS
@given(
    st.lists(st.tuples(VERDICTS, VERDICTS, VERDICTS), max_size=60),
    st.sampled_from([None, True, False]),
    st.booleans(),
)
def test_mcnemar_is_the_textbook_test(
    triples: list[tuple[str | None, str | None, str | None]], exact: bool | None, correction: bool
) -> None:
    a, b, truth = ([t[i] for t in triples] for i in range(3))
    fast = mcnemar_test(a, b, truth, exact=exact, correction=correction)
    usable = [t for t in triples if None not in t]
    only_a = sum(1 for x, y, r in usable if x == r and y != r)
    only_b = sum(1 for x, y, r in usable if x != r and y == r)
    assert (fast.only_a_correct, fast.only_b_correct) == (only_a, only_b)
    assert fast.n == len(usable) and fast.excluded == len(triples) - len(usable)
    use_exact = only_a + only_b < 25 if exact is None else exact
    if not usable or (not use_exact and not only_a + only_b):
        assert fast.p_value is None and fast.undefined_reason  # 0/0
        return
    statistic, p_value = ref.mcnemar(only_a, only_b, exact=use_exact, correction=correction)
    assert close(fast.statistic, statistic) and close(fast.p_value, p_value)


# --------------------------------------------------------------------------- classification


@CHECKS
@given(
    st.integers(1, 5).flatmap(
        lambda q: st.tuples(
            st.just(CATEGORIES[:q]),
            st.lists(
                st.tuples(st.sampled_from(CATEGORIES[:q]), st.sampled_from(CATEGORIES[:q])),
                min_size=1,
                max_size=40,
            ),
        )
    )
)
@example((("a",), [("a", "a")]))  # one unit, one class
def test_class_scores_and_balanced_accuracy_are_the_textbook_ones(
    data: tuple[tuple[str, ...], list[tuple[str, str]]],
) -> None:
    labels, pairs = data
    report = classification_scores(
        y_true=[t for t, _ in pairs], y_pred=[p for _, p in pairs], labels=labels
    )
    index = {c: i for i, c in enumerate(labels)}
    confusion = [[0] * len(labels) for _ in labels]
    for t, p in pairs:
        confusion[index[t]][index[p]] += 1
    assert [list(row) for row in report.confusion] == confusion
    for fast, (precision, recall, f1) in zip(
        report.per_class, ref.class_scores(confusion), strict=True
    ):
        assert close(fast.precision, precision) and close(fast.recall, recall)
        assert close(fast.f1, f1)
    assert same(report.balanced_accuracy, ref.balanced_accuracy(confusion))
