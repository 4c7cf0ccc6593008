"""Ratings in, whatever their layout: one explicit constructor per layout.

A bare matrix does not say whether its rows are units or raters, and reading one as
the other gives a wrong coefficient without an error. So the constructors name the
layout (`from_units_by_raters`, `from_raters_by_units`, `from_counts`, `from_table`,
`from_long`), and `as_ratings` refuses a bare matrix whose shape suggests the other
layout. Labels are any hashable values; None and NaN both mark a missing rating.
"""

from __future__ import annotations

import math
import numbers
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np

Label = Hashable


def is_missing(value: object) -> bool:
    """None, float NaN (Python, numpy or pandas) and pandas' NA are missing ratings."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN is the one value not equal to itself
    except (TypeError, ValueError):
        return type(value).__name__ == "NAType"  # pandas.NA refuses bool()


def _clean(value: Any, where: str) -> Label | None:
    if is_missing(value):
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()  # numpy scalars -> Python, so 1 and np.int64(1) are one label
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"{where}: a label must be hashable, not {type(value).__name__}") from None
    return value  # type: ignore[no-any-return]


def as_number(value: object) -> float | None:
    """The value as a number when it is one (or a string that parses as one), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


@dataclass(frozen=True)
class Ratings:
    """A units x raters matrix of categorical labels; None marks a missing rating.

    `anonymous_raters` is True when the columns are not people (a counts table says
    how many raters chose each category, not who): coefficients that need to know who
    rated what (pairwise kappas, Conger's kappa) are then undefined.
    """

    units: tuple[Hashable, ...]
    raters: tuple[Hashable, ...]
    labels: tuple[tuple[Label | None, ...], ...]
    anonymous_raters: bool = False

    def __post_init__(self) -> None:
        if len(self.labels) != len(self.units):
            raise ValueError(f"{len(self.labels)} rows of labels for {len(self.units)} units")
        if type(self.labels) is not tuple or any(type(row) is not tuple for row in self.labels):
            object.__setattr__(self, "labels", tuple(map(tuple, self.labels)))
        try:
            rows = self.distinct[0]
        except TypeError:  # an unhashable label, named when the labels are cleaned below
            rows = list(self.labels)
        if set(map(len, rows)) - {len(self.raters)}:  # then name the first
            for unit, row in zip(self.units, self.labels, strict=True):
                if len(row) != len(self.raters):
                    raise ValueError(
                        f"unit {unit!r} has {len(row)} labels for {len(self.raters)} raters"
                    )
        if len(set(self.units)) != len(self.units):
            raise ValueError("unit ids must be unique")
        if len(set(self.raters)) != len(self.raters):
            raise ValueError("rater ids must be unique")
        if set(map(type, chain.from_iterable(rows))) <= {str, type(None)}:
            return  # text and None need no cleaning (the common case)
        cleaned = tuple(
            tuple(
                _clean(label, f"unit {unit!r}, rater {rater!r}")
                for rater, label in zip(self.raters, row, strict=True)
            )
            for unit, row in zip(self.units, self.labels, strict=True)
        )
        object.__setattr__(self, "labels", cleaned)
        self.__dict__.pop("distinct", None)  # of the rows given, not these

    @classmethod
    def from_long(cls, rows: Iterable[tuple[Hashable, Hashable, Label | None]]) -> Ratings:
        """Build from long-format rows (unit, rater, label), one row per answer."""
        cells: dict[tuple[Hashable, Hashable], Label | None] = {}
        units: dict[Hashable, None] = {}
        raters: dict[Hashable, None] = {}
        for number, row in enumerate(rows, start=1):
            if len(row) != 3:
                raise ValueError(f"row {number}: expected (unit, rater, label), got {row!r}")
            unit, rater, label = row
            if (unit, rater) in cells:
                raise ValueError(f"rater {rater!r} has more than one label for unit {unit!r}")
            cells[unit, rater] = label
            units.setdefault(unit)
            raters.setdefault(rater)
        return cls(
            units=tuple(units),
            raters=tuple(raters),
            labels=tuple(tuple(cells.get((u, r)) for r in raters) for u in units),
        )

    @classmethod
    def from_units_by_raters(
        cls,
        matrix: Sequence[Sequence[Label | None]],
        *,
        units: Sequence[Hashable] | None = None,
        raters: Sequence[Hashable] | None = None,
    ) -> Ratings:
        """One row per unit, one column per rater (irrCAC's and irr's raw-data layout)."""
        rows = [list(row) for row in matrix]
        width = _width(rows, "unit")
        return cls(
            units=tuple(units) if units is not None else tuple(range(len(rows))),
            raters=tuple(raters) if raters is not None else tuple(range(width)),
            labels=tuple(tuple(row) for row in rows),
        )

    @classmethod
    def from_raters_by_units(
        cls,
        matrix: Sequence[Sequence[Label | None]],
        *,
        raters: Sequence[Hashable] | None = None,
        units: Sequence[Hashable] | None = None,
    ) -> Ratings:
        """One row per rater, one column per unit (Krippendorff's and NLTK's layout)."""
        rows = [list(row) for row in matrix]
        width = _width(rows, "rater")
        return cls.from_units_by_raters(
            [[row[u] for row in rows] for u in range(width)], units=units, raters=raters
        )

    @classmethod
    def from_counts(cls, table: Sequence[Sequence[int]], *, categories: Sequence[Label]) -> Ratings:
        """Units x categories: how many raters put each unit in each category.

        Fleiss' (1971) and irrCAC's `*.dist` layout. Who gave which rating is not known,
        so the raters are anonymous slots.
        """
        rows = [list(row) for row in table]
        categories = list(categories)
        for number, row in enumerate(rows):
            if len(row) != len(categories):
                raise ValueError(
                    f"counts row {number} has {len(row)} columns for {len(categories)} categories"
                )
            for count in row:
                if isinstance(count, bool) or not float(count).is_integer() or count < 0:
                    raise ValueError(
                        f"counts row {number}: {count!r} is not a count (a whole number >= 0)"
                    )
        labels = [
            [c for c, k in zip(categories, row, strict=True) for _ in range(int(k))] for row in rows
        ]
        width = max((len(row) for row in labels), default=0)
        return cls(
            units=tuple(range(len(rows))),
            raters=tuple(range(width)),
            labels=tuple(tuple(row + [None] * (width - len(row))) for row in labels),
            anonymous_raters=True,
        )

    @classmethod
    def from_table(
        cls,
        table: Sequence[Sequence[int]],
        *,
        categories: Sequence[Label],
        raters: tuple[Hashable, Hashable] = ("A", "B"),
    ) -> Ratings:
        """A two-rater contingency table: rows are rater A's category, columns rater B's."""
        rows = [list(row) for row in table]
        categories = list(categories)
        if len(rows) != len(categories) or any(len(row) != len(categories) for row in rows):
            shape = f"{len(rows)} x {', '.join(sorted({str(len(row)) for row in rows}))}"
            raise ValueError(
                f"a contingency table for {len(categories)} categories must be "
                f"{len(categories)} x {len(categories)}, not {shape}"
            )
        pairs = [
            (a, b)
            for a, row in zip(categories, rows, strict=True)
            for b, count in zip(categories, row, strict=True)
            for _ in range(int(count))
        ]
        return cls.from_units_by_raters(pairs, raters=raters)

    @classmethod
    def from_mapping(cls, mapping: Mapping[Hashable, Mapping[Hashable, Label | None]]) -> Ratings:
        """Build from {unit: {rater: label}}."""
        for unit, row in mapping.items():
            if not isinstance(row, Mapping):
                raise TypeError(
                    f"unit {unit!r}: expected a mapping {{rater: label}}, got {type(row).__name__}"
                )
        return cls.from_long(
            (unit, rater, label) for unit, row in mapping.items() for rater, label in row.items()
        )

    def categories_seen(self) -> tuple[Label, ...]:
        """The labels used, numerically ordered when they are all numbers."""
        # the distinct rows hold every label, in first-seen order
        seen = [x for x in dict.fromkeys(chain.from_iterable(self.distinct[0])) if x is not None]
        return order_categories(seen)

    @cached_property
    def distinct(self) -> tuple[list[tuple[Label | None, ...]], list[int]]:
        """The distinct rows of labels in order of first appearance, and each unit's
        position among them: what holds for a row holds for every unit with it."""
        position: dict[tuple[Label | None, ...], int] = {}
        row_of = [position.setdefault(row, len(position)) for row in self.labels]
        return list(position), row_of


def square_matrix(values: Any, size: int, what: str) -> Any:
    """A researcher's category x category matrix as floats, checked: square, one row and
    one column per category (`size`), finite. `what` names it in the errors."""
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(
            f"the {what} must be a square matrix, not {' x '.join(map(str, matrix.shape))}"
        )
    if len(matrix) != size:
        raise ValueError(
            f"the {what} matrix is {len(matrix)} x {len(matrix)}; the categories are {size} "
            "(one row and one column per category, in their order)"
        )
    if not np.isfinite(matrix).all():
        raise ValueError(f"the {what} must hold finite numbers")
    return matrix


def order_categories(labels: Iterable[Label]) -> tuple[Label, ...]:
    """Numbers (or numeric strings) in numeric order, so "10" comes after "2"; else by text."""
    labels = list(labels)
    numbers_ = [as_number(label) for label in labels]
    if labels and all(n is not None for n in numbers_):
        keyed = [(n or 0.0, i) for i, n in enumerate(numbers_)]
        return tuple(labels[i] for _, i in sorted(keyed))
    return tuple(sorted(labels, key=str))


def label_set(declared: Iterable[Label] | None, seen: Iterable[Label]) -> tuple[Label, ...]:
    """The declared labels, checked; without them the labels seen, in `order_categories` order."""
    if declared is None:
        return order_categories(seen)
    if isinstance(declared, str | bytes):
        raise TypeError("the label set must be a sequence of labels, not a single string")
    labels = tuple(declared)
    repeated = [label for label, n in Counter(labels).items() if n > 1]
    if repeated:
        raise ValueError(f"labels must be unique; repeated: {repeated}")
    return labels


def _width(rows: list[list[Any]], what: str) -> int:
    widths = {len(row) for row in rows}
    if len(widths) > 1:
        first = len(rows[0])
        bad = next(i for i, row in enumerate(rows) if len(row) != first)
        raise ValueError(
            f"ragged matrix: {what} row 0 has {first} entries but row {bad} has "
            f"{len(rows[bad])}; mark a missing rating with None, do not leave it out"
        )
    return widths.pop() if widths else 0


RatingsInput = (
    Ratings | Sequence[Sequence[Label | None]] | Mapping[Hashable, Mapping[Hashable, Label | None]]
)


def as_ratings(data: RatingsInput) -> Ratings:
    """A Ratings, a {unit: {rater: label}} mapping, or a units x raters matrix.

    A bare matrix with more columns than rows is refused: read as units x raters it
    would have more raters than units, which almost always means it is raters x units.
    Say which with `Ratings.from_units_by_raters` or `Ratings.from_raters_by_units`.
    """
    if isinstance(data, Ratings):
        return data
    if isinstance(data, Mapping):
        return Ratings.from_mapping(data)
    if isinstance(data, str | bytes):
        raise TypeError("ratings must be a matrix, a mapping or a Ratings, not a string")
    rows = [list(row) for row in data]
    width = _width(rows, "unit")
    if width > len(rows):
        raise ValueError(
            f"a bare matrix is read as units x raters, but this one has {len(rows)} rows and "
            f"{width} columns: more raters than units, so it is probably raters x units. "
            "Say which: Ratings.from_raters_by_units(matrix) or "
            "Ratings.from_units_by_raters(matrix)"
        )
    return Ratings.from_units_by_raters(rows)


def label_distribution(
    labels: Iterable[Label | None], times: Iterable[int] | None = None
) -> dict[Label, int]:
    """Counts of each label, most frequent first (ties in order of first appearance);
    missing labels are not counted. `times`: how many times each of `labels` counts (the
    units with a distinct row of labels), once each without it."""
    counts: Counter[Label | None] = Counter()
    if times is None:
        counts.update(labels)
    else:
        for label, n in zip(labels, times, strict=True):
            counts[label] += n
    for label in [label for label in counts if is_missing(label)]:
        del counts[label]
    return dict(counts.most_common())
