"""Truth from a crowd (issue 39): one label per unit from many annotators' labels, by
majority vote or by an annotator model that learns each annotator's reliability and
weighs their labels by it. Plain data in and out, no Django; the models are crowd-kit's
(Toloka's library), which no caller ever sees: pandas stays inside this module.

- `majority`: the most frequent label; its confidence is its vote share (a tie gives the
  caller's tie label, as `stats.majority` does). No reliability per annotator.
- `dawid_skene`: Dawid & Skene (1979): a confusion matrix per annotator and a prior per
  label, fitted by EM. Known true labels (check items, adjudicated values) anchor it:
  crowd-kit fixes those units' posteriors at every EM step
  (`DawidSkene.fit(data, true_labels)`).
- `mace`: MACE (Hovy et al., 2013): each annotator knows the answer with probability
  `competence`, else guesses by their own strategy. crowd-kit's MACE takes no true
  labels, so it cannot be anchored: known labels are refused, never silently dropped.
- `glad`: GLAD (Whitehill et al., 2009): an ability `alpha` per annotator and a difficulty
  per unit. crowd-kit's GLAD takes no true labels either: refused the same way.

Labels come as `(unit, annotator, label)` tuples; one annotator may label one unit more
than once (Dawid & Skene's observer 1 rated each patient three times): every label
counts. Units, annotators and labels are any hashable values. The crowd-kit package is
the `crowd` extra (pyproject.toml); it is imported when a model is fitted, so the rest of
`stats` works without it.
"""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, SupportsFloat, SupportsInt, cast

import numpy as np
import numpy.typing as npt

from .inter_rater import TIE
from .inter_rater import majority as majority_vote
from .ratings import Label, is_missing, order_categories

if TYPE_CHECKING:
    import pandas as pd

MAJORITY = "majority"
DAWID_SKENE = "dawid_skene"
MACE = "mace"
GLAD = "glad"
METHODS = (MAJORITY, DAWID_SKENE, MACE, GLAD)
# The methods that take known true labels (crowd-kit's MACE and GLAD cannot).
ANCHORED = (MAJORITY, DAWID_SKENE)

LabelRow = tuple[Hashable, Hashable, Label]


@dataclass(frozen=True)
class UnitEstimate:
    """One unit's estimate: the chosen label, its posterior (for majority: its vote
    share), and the posterior of every label (majority: every label's vote share)."""

    label: Label
    confidence: float
    posterior: Mapping[Label, float]
    n_labels: int  # the labels given on the unit, repeats counted


@dataclass(frozen=True)
class Reliability:
    """One annotator's reliability under a model; the fields of other models are None.

    `confusion[true][given]` = P(annotator gives `given` | the true label is `true`)
    (Dawid-Skene); `competence` = P(the annotator knows the answer rather than guesses)
    (MACE); `alpha` = GLAD's ability (0: random; larger: better; negative: adversarial)."""

    n_labels: int
    confusion: Mapping[Label, Mapping[Label, float]] | None = None
    competence: float | None = None
    alpha: float | None = None


@dataclass(frozen=True)
class CrowdEstimate:
    method: str
    labels: tuple[Label, ...]  # every label seen, in `order_categories` order
    units: Mapping[Hashable, UnitEstimate]
    annotators: Mapping[Hashable, Reliability]  # empty for majority
    priors: Mapping[Label, float] = field(default_factory=dict)  # Dawid-Skene's class priors


# --------------------------------------------------------------------------- data in


@contextmanager
def _library() -> Iterator[None]:
    """crowd-kit 1.4.2 calls pandas in ways pandas 3 deprecates (inplace=, copy=): their
    warnings are the library's, not the caller's."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"crowdkit(\.|$)")
        yield


def _rows(labels: Iterable[LabelRow]) -> list[LabelRow]:
    rows = []
    for n, row in enumerate(labels, 1):
        try:
            unit, annotator, label = row
        except (TypeError, ValueError):
            raise ValueError(f"label {n}: expected (unit, annotator, label), got {row!r}") from None
        if is_missing(label):
            raise ValueError(
                f"label {n}: unit {unit!r}, annotator {annotator!r} has no label;"
                " leave unanswered units out"
            )
        rows.append((unit, annotator, label))
    return rows


def _refuse_known(method: str, known: Mapping[Any, Any] | None) -> None:
    if known and method not in ANCHORED:
        raise ValueError(
            f"{method} cannot take known true labels (crowd-kit's {method.upper()} has no"
            " such input); only Dawid-Skene is anchored by them"
        )


def _check_known(
    known: Mapping[Any, Label] | None, method: str, units: Collection[Hashable], seen: set[Label]
) -> dict[Hashable, Label]:
    _refuse_known(method, known)
    for unit, label in (known or {}).items():
        if unit not in units:
            raise ValueError(f"known label for unit {unit!r}, which has no labels")
        if label not in seen:
            raise ValueError(f"known label {label!r} of unit {unit!r} was never given")
    return dict(known or {})


def _frame(
    rows: list[LabelRow], labels: tuple[Label, ...]
) -> tuple[pd.DataFrame, list[Hashable], list[Hashable]]:
    """Integer codes for units, annotators and labels (crowd-kit then never meets a tuple
    or a mixed-type id); the code lists map back."""
    import pandas as pd

    units: dict[Hashable, int] = {}
    annotators: dict[Hashable, int] = {}
    label_code = {label: i for i, label in enumerate(labels)}
    codes = [
        (
            units.setdefault(unit, len(units)),
            annotators.setdefault(annotator, len(annotators)),
            label_code[label],
        )
        for unit, annotator, label in rows
    ]
    frame = pd.DataFrame(codes, columns=["task", "worker", "label"])
    return frame, list(units), list(annotators)


def _code(value: object) -> int:
    """A task, worker or label code of crowd-kit's frames (we number them 0..n-1; pandas
    types them as any hashable)."""
    return int(cast(SupportsInt, value))


# --------------------------------------------------------------------------- methods


def majority(
    labels: Iterable[LabelRow],
    known: Mapping[Any, Label] | None = None,
    *,
    tie: Label = TIE,
) -> CrowdEstimate:
    """The most frequent label per unit (today's gold rule); confidence = its vote share.
    A tie for first place gives `tie` with the tied labels' share. A known label wins on
    its unit with confidence 1."""
    rows = _rows(labels)
    seen = order_categories({label for _, _, label in rows})
    by_unit: dict[Hashable, list[Label]] = defaultdict(list)
    for unit, _, label in rows:
        by_unit[unit].append(label)
    anchors = _check_known(known, MAJORITY, by_unit, set(seen))
    units = {}
    for unit, given in by_unit.items():
        vote = majority_vote(given, tie=tie)
        shares = {label: n / vote.n_votes for label, n in vote.distribution.items()}
        if unit in anchors:
            units[unit] = UnitEstimate(anchors[unit], 1.0, shares, len(given))
            continue
        top = max(shares.values())
        units[unit] = UnitEstimate(vote.label, shares.get(vote.label, top), shares, len(given))
    return CrowdEstimate(MAJORITY, seen, units, {})


# crowd-kit's class of each annotator model and the options we fit it with (its defaults,
# written here so that a new version of the library cannot change them unseen)
_MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    DAWID_SKENE: ("DawidSkene", {"n_iter": 100, "tol": 1e-5}),
    MACE: ("MACE", {"n_restarts": 10, "n_iter": 50, "method": "vb", "random_state": 0}),
    GLAD: ("GLAD", {"n_iter": 100, "tol": 1e-5}),
}
MODELS = tuple(_MODELS)  # the annotator models (`posteriors`)


def _options(method: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """`method`'s options: ours (`_MODELS`) with `options` over them; an option the model
    does not have is a TypeError naming it, whether or not there is anything to fit."""
    name, defaults = _MODELS[method]
    if unknown := sorted(set(options) - set(defaults)):
        raise TypeError(f"{method}: no option {unknown}; its options are {sorted(defaults)}")
    return {**defaults, **options}


def _fit(
    method: str, frame: pd.DataFrame, truth: pd.Series | None, options: Mapping[str, Any]
) -> Any:
    """`method`'s crowd-kit model fitted on a (task, worker, label) frame of codes;
    `truth` (task -> label code) anchors Dawid-Skene."""
    from crowdkit import aggregation

    settings = _options(method, options)
    with _library():
        model = getattr(aggregation, _MODELS[method][0])(**settings)
        return model.fit(frame, truth) if method == DAWID_SKENE else model.fit(frame)


def _estimate(
    method: str,
    labels: Iterable[LabelRow],
    known: Mapping[Any, Label] | None,
    options: Mapping[str, Any],
) -> CrowdEstimate:
    """An annotator model fitted on the labels, read back to the callers' ids: each unit's
    posterior and each annotator's reliability as the model has it."""
    import pandas as pd

    _options(method, options)
    rows = _rows(labels)
    seen = order_categories({label for _, _, label in rows})
    counts = Counter(unit for unit, _, _ in rows)
    anchors = _check_known(known, method, counts, set(seen))
    if not rows:
        return CrowdEstimate(method, (), {}, {})
    frame, unit_ids, annotator_ids = _frame(rows, seen)
    truth = None
    if anchors:
        code = {unit: i for i, unit in enumerate(unit_ids)}
        truth = pd.Series(
            {code[unit]: seen.index(label) for unit, label in anchors.items()}, dtype="int64"
        )
    model = _fit(method, frame, truth, options)
    # worker code -> the model's figures for that annotator
    figures: dict[int, dict[str, Any]]
    priors: dict[Label, float] = {}
    if method == DAWID_SKENE:
        figures = {}
        for worker, matrix in model.errors_.groupby(level="worker"):
            table = matrix.droplevel("worker")  # rows: the label given; columns: the true label
            confusion = {
                seen[_code(true)]: {
                    seen[_code(given)]: float(cast(SupportsFloat, table.at[given, true]))
                    for given in sorted(table.index)
                }
                for true in sorted(table.columns)
            }
            figures[_code(worker)] = {"confusion": confusion}
        priors = {seen[_code(label)]: float(p) for label, p in sorted(model.priors_.items())}
    elif method == MACE:
        # crowd-kit numbers workers by pd.factorize(data["worker"]): first appearance, which
        # is _frame's own numbering, so row i of spamming_ is worker i.
        figures = {i: {"competence": float(p)} for i, p in enumerate(model.spamming_[:, 1])}
    else:
        figures = {_code(worker): {"alpha": float(a)} for worker, a in model.alphas_.items()}
    per_annotator = Counter(annotator for _, annotator, _ in rows)
    annotators = {
        annotator_ids[w]: Reliability(per_annotator[annotator_ids[w]], **f)
        for w, f in figures.items()
    }
    units = {}
    for task, row in model.probas_.sort_index().iterrows():
        posterior = {seen[_code(code)]: float(p) for code, p in sorted(row.items())}
        # crowd-kit's own choice (idxmax: a tie goes to the label first in category order)
        chosen = max(seen, key=lambda label: (posterior.get(label, 0.0), -seen.index(label)))
        unit = unit_ids[_code(task)]
        units[unit] = UnitEstimate(chosen, posterior.get(chosen, 0.0), posterior, counts[unit])
    return CrowdEstimate(method, seen, units, annotators, priors)


def dawid_skene(
    labels: Iterable[LabelRow], known: Mapping[Any, Label] | None = None, **options: Any
) -> CrowdEstimate:
    """Dawid & Skene (1979) by crowd-kit's `DawidSkene` (`options`: its n_iter, 100, and
    tol, 1e-5), initialised by the majority vote's shares as in the paper (eq. 3.1).
    `known`: unit -> its true label (check items, adjudicated values); crowd-kit holds
    those units' posteriors at the known label through every EM step, so they anchor each
    annotator's confusion matrix."""
    return _estimate(DAWID_SKENE, labels, known, options)


def mace(
    labels: Iterable[LabelRow], known: Mapping[Any, Label] | None = None, **options: Any
) -> CrowdEstimate:
    """MACE (Hovy et al., 2013) by crowd-kit's `MACE` (`options`: its n_restarts, 10,
    n_iter, 50, method, "vb": variational Bayes, and random_state, 0, fixed so the same
    labels give the same estimate). Per annotator: `competence`, the posterior probability
    that they know rather than guess (crowd-kit's `spamming_[:, 1]`). MACE cannot take
    known true labels: crowd-kit's MACE has no such input, so `known` raises ValueError
    rather than being ignored."""
    return _estimate(MACE, labels, known, options)


def glad(
    labels: Iterable[LabelRow], known: Mapping[Any, Label] | None = None, **options: Any
) -> CrowdEstimate:
    """GLAD (Whitehill et al., 2009) by crowd-kit's `GLAD` (`options`: its n_iter, 100,
    and tol, 1e-5). Per annotator: `alpha`, their ability. GLAD cannot take known true
    labels: crowd-kit's GLAD has no such input, so `known` raises ValueError rather than
    being ignored."""
    return _estimate(GLAD, labels, known, options)


def estimate(
    method: str,
    labels: Iterable[LabelRow],
    known: Mapping[Any, Label] | None = None,
    **options: Any,
) -> CrowdEstimate:
    """The named method (`METHODS`); `options` go to its function (e.g. MACE's
    `n_restarts`)."""
    if method == MAJORITY:
        return majority(labels, known, **options)
    if method not in _MODELS:
        raise ValueError(f"unknown aggregation method {method!r}; one of {', '.join(METHODS)}")
    return _estimate(method, labels, known, options)


def posteriors(
    method: str,
    units: npt.NDArray[np.int64],
    annotators: npt.NDArray[np.int64],
    labels: npt.NDArray[np.int64],
    n_labels: int,
    known: Mapping[int, int] | None = None,
    **options: Any,
) -> npt.NDArray[np.float64]:
    """The posterior of each label on each unit under an annotator model (`MODELS`), for
    labels already coded as integers: one label per entry of the three equal-length
    arrays (unit 0..n-1, annotator, label 0..n_labels-1; a unit may have several labels
    by one annotator). Returns units x n_labels (a unit with no label: a row of zeros).
    `known`: unit -> its true label code, which anchors Dawid-Skene only (MACE and GLAD
    refuse it, as `mace` and `glad` do). The same crowd-kit models and options as
    `dawid_skene`, `mace`, `glad`; no per-row Python work, for 100,000-unit fields."""
    import pandas as pd

    if method not in MODELS:
        raise ValueError(f"unknown annotator model {method!r}; one of {', '.join(MODELS)}")
    _refuse_known(method, known)
    _options(method, options)
    out = np.zeros((int(units.max(initial=-1)) + 1, n_labels))
    if not len(units):
        return out
    frame = pd.DataFrame({"task": units, "worker": annotators, "label": labels})
    truth = pd.Series(dict(known), dtype="int64") if known else None
    probas = _fit(method, frame, truth, options).probas_
    rows = probas.index.to_numpy(dtype=np.int64)
    columns = probas.columns.to_numpy(dtype=np.int64)
    out[np.ix_(rows, columns)] = probas.to_numpy(dtype=np.float64)
    return out
