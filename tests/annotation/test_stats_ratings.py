"""Ratings layouts and the misuse cases of agreement(): each one an error or documented. No DB."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from annotation import stats
from tests.annotation.test_stats import KRIPPENDORFF_C, ONE_TO_FIVE, approx

# Krippendorff (2011) section C as the paper prints it: observers as rows.
BY_OBSERVER = [list(row) for row in zip(*KRIPPENDORFF_C, strict=True)]


def test_every_layout_gives_the_published_alpha() -> None:
    # Krippendorff (2011) section C: nominal alpha 0.743, whichever way the data comes in.
    layouts = [
        stats.Ratings.from_units_by_raters(KRIPPENDORFF_C),
        stats.Ratings.from_raters_by_units(BY_OBSERVER),
        stats.Ratings.from_long(
            (u, r, label)
            for u, row in enumerate(KRIPPENDORFF_C)
            for r, label in enumerate(row)
            if label is not None
        ),
        {u: dict(enumerate(row)) for u, row in enumerate(KRIPPENDORFF_C)},
    ]
    for ratings in layouts:
        report = stats.agreement(ratings, categories=ONE_TO_FIVE, bootstrap=0)
        assert report.krippendorff_alpha.value == approx(0.743, 3)


def test_a_raters_by_units_matrix_passed_bare_is_refused() -> None:
    # 4 observers x 12 units, passed where units x raters is expected.
    with pytest.raises(ValueError, match="4 rows and 12 columns.*Ratings.from_raters_by_units"):
        stats.agreement(BY_OBSERVER, categories=ONE_TO_FIVE, bootstrap=0)


def test_ragged_and_malformed_input_says_where() -> None:
    with pytest.raises(ValueError, match="row 0 has 2 entries but row 1 has 1"):
        stats.Ratings.from_units_by_raters([["a", "b"], ["a"]])
    with pytest.raises(ValueError, match="counts row 1 has 2 columns for 3 categories"):
        stats.Ratings.from_counts([[1, 1, 0], [2, 0]], categories=["a", "b", "c"])
    with pytest.raises(ValueError, match="counts row 0: 1.5 is not a count"):
        stats.Ratings.from_counts([[1.5, 0]], categories=["a", "b"])
    with pytest.raises(ValueError, match="must be 2 x 2"):
        stats.Ratings.from_table([[1, 2, 3], [4, 5, 6]], categories=["a", "b"])
    with pytest.raises(ValueError, match=r"row 2: expected \(unit, rater, label\)"):
        stats.Ratings.from_long([("u", "r", "a"), ("u", "s")])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="must be hashable"):
        stats.Ratings.from_units_by_raters([[["a"], "b"]])
    with pytest.raises(ValueError, match="repeated: \\['a'\\]"):
        stats.agreement([["a", "b"], ["a", "a"]], categories=["a", "b", "a"])


def test_nan_and_none_are_both_missing() -> None:
    with_none = stats.agreement(
        stats.Ratings.from_units_by_raters(KRIPPENDORFF_C), categories=ONE_TO_FIVE, bootstrap=0
    )
    numeric = [[np.nan if x is None else float(x) for x in row] for row in KRIPPENDORFF_C]
    with_nan = stats.agreement(stats.Ratings.from_units_by_raters(np.array(numeric)), bootstrap=0)
    assert with_nan.categories == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert with_nan.krippendorff_alpha.value == pytest.approx(with_none.krippendorff_alpha.value)
    assert with_nan.n_ratings == with_none.n_ratings == 41


def test_numeric_categories_are_inferred_in_numeric_order() -> None:
    # Labels 1..10 as text: sorted as text they would be 1, 10, 2, ...; ordinal alpha
    # needs 1, 2, ..., 10.
    rows = [[str(v), str(min(v + 1, 10))] for v in range(1, 11)] * 2
    report = stats.agreement(rows, level="ordinal", bootstrap=0)
    assert report.categories == tuple(str(v) for v in range(1, 11))
    declared = stats.agreement(
        rows, categories=[str(v) for v in range(1, 11)], level="ordinal", bootstrap=0
    )
    assert report.krippendorff_alpha.value == pytest.approx(declared.krippendorff_alpha.value)


def test_numeric_categories_declared_out_of_order_warn_for_ordinal_alpha() -> None:
    rows = [["1", "2"], ["2", "10"], ["10", "10"], ["1", "1"]]
    with pytest.warns(UserWarning, match="not in numeric order"):
        stats.agreement(rows, categories=sorted(["1", "2", "10"]), level="ordinal", bootstrap=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stats.agreement(rows, categories=["1", "2", "10"], level="ordinal", bootstrap=0)
        stats.agreement(rows, categories=sorted(["1", "2", "10"]), bootstrap=0)  # nominal


def test_ordinal_alpha_without_an_order_is_refused() -> None:
    with pytest.raises(ValueError, match="ordinal alpha needs the order"):
        stats.agreement([["low", "high"], ["high", "high"]], level="ordinal", bootstrap=0)


def test_labels_may_be_any_hashable_value() -> None:
    rows = [[True, True], [False, True], [False, False], [True, True]]
    report = stats.agreement(rows, categories=[False, True], bootstrap=0)
    assert report.percent_agreement.value == pytest.approx(0.75)
    assert report.label_distribution == {True: 5, False: 3}


def test_stats_package_imports_no_django() -> None:
    package = Path(stats.__file__).parent
    for module in package.glob("*.py"):
        source = module.read_text()
        assert "import django" not in source and "from django" not in source, module.name


def test_text_labels_are_counted_from_the_codes_as_counter_counts_them() -> None:
    # agreement() counts text labels from its encoded matrix: the same counts, and ties in
    # order of first appearance row by row, as label_distribution (Counter) gives them.
    rng = np.random.default_rng(3)
    labels = ["no", "yes", "maybe", None]
    matrix = [[labels[i] for i in row] for row in rng.integers(0, 4, size=(60, 3))]
    matrix[0] = ["z", "y", "x"]  # three labels seen once, first in this order
    matrix += [["z", "y", "x"], ["z", "y", "x"]]
    categories = ["maybe", "no", "x", "y", "yes", "z"]
    report = stats.agreement(
        stats.Ratings.from_units_by_raters(matrix), categories=categories, bootstrap=0
    )
    expected = stats.label_distribution(label for row in matrix for label in row)
    assert list(report.label_distribution.items()) == list(expected.items())
    assert list(report.label_distribution)[-3:] == ["z", "y", "x"]  # a tie, first seen first
    # text and None are kept as given: rows become tuples, nothing else changes
    ratings = stats.Ratings.from_units_by_raters(matrix)
    assert ratings.labels == tuple(tuple(row) for row in matrix)


def test_distinct_rows_are_read_by_value_and_survive_pickling() -> None:
    """The encoding reads each distinct row once: rows shared by units and copies of
    them are the same rows and give the same report, also after pickling."""
    import pickle

    from annotation.stats import agreement
    from annotation.stats.ratings import Ratings

    same, other = ("a", "a", "b"), ("b", None, "b")
    shared = Ratings(
        units=tuple(range(6)), raters=("x", "y", "z"), labels=(same, other, same, same, other, same)
    )
    copies = Ratings(
        units=tuple(range(6)),
        raters=("x", "y", "z"),
        labels=tuple(tuple(list(row)) for row in shared.labels),
    )
    assert shared.distinct == copies.distinct == ([same, other], [0, 1, 0, 0, 1, 0])
    assert agreement(shared, seed=3, bootstrap=50) == agreement(copies, seed=3, bootstrap=50)
    again = pickle.loads(pickle.dumps(shared))
    assert agreement(again, seed=3, bootstrap=50) == agreement(shared, seed=3, bootstrap=50)
    assert shared.categories_seen() == ("a", "b")
