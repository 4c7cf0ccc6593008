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
from collections import defaultdict
from collections.abc import Hashable, Iterable, Iterator, Mapping
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


def _check_known(
    known: Mapping[Any, Label] | None, method: str, units: set[Hashable], seen: set[Label]
) -> dict[Hashable, Label]:
    if not known:
        return {}
    if method not in ANCHORED:
        raise ValueError(
            f"{method} cannot take known true labels (crowd-kit's {method.upper()} has no"
            " such input); only Dawid-Skene is anchored by them"
        )
    for unit, label in known.items():
        if unit not in units:
            raise ValueError(f"known label for unit {unit!r}, which has no labels")
        if label not in seen:
            raise ValueError(f"known label {label!r} of unit {unit!r} was never given")
    return dict(known)


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


def _unit_estimates(probas: pd.DataFrame, data: _Data) -> dict[Hashable, UnitEstimate]:
    out = {}
    for task, row in probas.sort_index().iterrows():
        labels = data.labels
        posterior = {labels[_code(code)]: float(p) for code, p in sorted(row.items())}
        # crowd-kit's own choice (idxmax: a tie goes to the label first in category order)
        chosen = max(labels, key=lambda label: (posterior.get(label, 0.0), -labels.index(label)))
        unit = data.unit_ids[_code(task)]
        out[unit] = UnitEstimate(chosen, posterior.get(chosen, 0.0), posterior, data.counts[unit])
    return out


@dataclass(frozen=True)
class _Data:
    """The labels checked and coded for crowd-kit (see `_frame`)."""

    labels: tuple[Label, ...]
    counts: dict[Hashable, int]  # labels per unit
    per_annotator: dict[Hashable, int]  # labels per annotator
    anchors: dict[Hashable, Label]
    frame: pd.DataFrame
    unit_ids: list[Hashable]
    annotator_ids: list[Hashable]


def _prepare(
    labels: Iterable[LabelRow], known: Mapping[Any, Label] | None, method: str
) -> _Data | None:
    """The rows checked, known labels checked for `method`; None when there are none."""
    rows = _rows(labels)
    seen = order_categories({label for _, _, label in rows})
    counts = _counts(rows)
    anchors = _check_known(known, method, set(counts), set(seen))
    if not rows:
        return None
    frame, unit_ids, annotator_ids = _frame(rows, seen)
    return _Data(seen, counts, _per_annotator(rows), anchors, frame, unit_ids, annotator_ids)


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
    anchors = _check_known(known, MAJORITY, set(by_unit), set(seen))
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


def dawid_skene(
    labels: Iterable[LabelRow],
    known: Mapping[Any, Label] | None = None,
    *,
    n_iter: int = 100,
    tol: float = 1e-5,
) -> CrowdEstimate:
    """Dawid & Skene (1979) by crowd-kit's `DawidSkene(n_iter, tol)`, initialised by the
    majority vote's shares as in the paper (eq. 3.1). `known`: unit -> its true label
    (check items, adjudicated values); crowd-kit holds those units' posteriors at the known
    label through every EM step, so they anchor each annotator's confusion matrix."""
    from crowdkit.aggregation import DawidSkene

    data = _prepare(labels, known, DAWID_SKENE)
    if data is None:
        return CrowdEstimate(DAWID_SKENE, (), {}, {})
    seen, anchors = data.labels, data.anchors
    true_labels = None
    if anchors:
        import pandas as pd

        code = {unit: i for i, unit in enumerate(data.unit_ids)}
        true_labels = pd.Series(
            {code[unit]: seen.index(label) for unit, label in anchors.items()}, dtype="int64"
        )
    with _library():
        model = DawidSkene(n_iter=n_iter, tol=tol).fit(data.frame, true_labels)
    assert model.probas_ is not None and model.errors_ is not None and model.priors_ is not None
    annotators = {}
    per_annotator = data.per_annotator
    for worker, matrix in model.errors_.groupby(level="worker"):
        table = matrix.droplevel("worker")  # rows: the label given; columns: the true label
        confusion = {
            seen[_code(true)]: {
                seen[_code(given)]: float(cast(SupportsFloat, table.at[given, true]))
                for given in sorted(table.index)
            }
            for true in sorted(table.columns)
        }
        annotator = data.annotator_ids[_code(worker)]
        annotators[annotator] = Reliability(per_annotator[annotator], confusion=confusion)
    priors = {seen[_code(label)]: float(p) for label, p in sorted(model.priors_.items())}
    units = _unit_estimates(model.probas_, data)
    return CrowdEstimate(DAWID_SKENE, seen, units, annotators, priors)


def mace(
    labels: Iterable[LabelRow],
    known: Mapping[Any, Label] | None = None,
    *,
    n_restarts: int = 10,
    n_iter: int = 50,
    method: str = "vb",
    random_state: int = 0,
) -> CrowdEstimate:
    """MACE (Hovy et al., 2013) by crowd-kit's `MACE` (variational Bayes by default, a
    fixed `random_state`, so the same labels give the same estimate). Per annotator:
    `competence`, the posterior probability that they know rather than guess (crowd-kit's
    `spamming_[:, 1]`). MACE cannot take known true labels: crowd-kit's MACE has no such
    input, so `known` raises ValueError rather than being ignored."""
    from crowdkit.aggregation import MACE as MaceModel

    data = _prepare(labels, known, MACE)
    if data is None:
        return CrowdEstimate(MACE, (), {}, {})
    with _library():
        model = MaceModel(
            n_restarts=n_restarts, n_iter=n_iter, method=method, random_state=random_state
        ).fit(data.frame)
    assert model.probas_ is not None
    # crowd-kit numbers workers by pd.factorize(data["worker"]): first appearance, which
    # is _frame's own numbering, so row i of spamming_ is annotator_ids[i].
    per_annotator = data.per_annotator
    annotators = {
        annotator: Reliability(per_annotator[annotator], competence=float(model.spamming_[i, 1]))
        for i, annotator in enumerate(data.annotator_ids)
    }
    units = _unit_estimates(model.probas_, data)
    return CrowdEstimate(MACE, data.labels, units, annotators)


def glad(
    labels: Iterable[LabelRow],
    known: Mapping[Any, Label] | None = None,
    *,
    n_iter: int = 100,
    tol: float = 1e-5,
) -> CrowdEstimate:
    """GLAD (Whitehill et al., 2009) by crowd-kit's `GLAD(n_iter, tol)`. Per annotator:
    `alpha`, their ability. GLAD cannot take known true labels: crowd-kit's GLAD has no
    such input, so `known` raises ValueError rather than being ignored."""
    from crowdkit.aggregation import GLAD as GladModel

    data = _prepare(labels, known, GLAD)
    if data is None:
        return CrowdEstimate(GLAD, (), {}, {})
    with _library():
        model = GladModel(n_iter=n_iter, tol=tol).fit(data.frame)
    assert model.probas_ is not None
    per_annotator = data.per_annotator
    annotators = {
        data.annotator_ids[_code(worker)]: Reliability(
            per_annotator[data.annotator_ids[_code(worker)]],
            alpha=float(alpha),
        )
        for worker, alpha in model.alphas_.items()
    }
    units = _unit_estimates(model.probas_, data)
    return CrowdEstimate(GLAD, data.labels, units, annotators)


def estimate(
    method: str,
    labels: Iterable[LabelRow],
    known: Mapping[Any, Label] | None = None,
    **options: Any,
) -> CrowdEstimate:
    """The named method (`METHODS`); `options` go to its function (e.g. MACE's
    `n_restarts`)."""
    functions: dict[str, Any] = {
        MAJORITY: majority,
        DAWID_SKENE: dawid_skene,
        MACE: mace,
        GLAD: glad,
    }
    if method not in functions:
        raise ValueError(f"unknown aggregation method {method!r}; one of {', '.join(METHODS)}")
    result: CrowdEstimate = functions[method](labels, known, **options)
    return result


MODELS = (DAWID_SKENE, MACE, GLAD)  # the annotator models (`posteriors`)


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
    refuse it, as `mace` and `glad` do). The same crowd-kit models and defaults as
    `dawid_skene`, `mace`, `glad`; no per-row Python work, for 100,000-unit fields."""
    import pandas as pd
    from crowdkit.aggregation import GLAD as GladModel
    from crowdkit.aggregation import MACE as MaceModel
    from crowdkit.aggregation import DawidSkene

    if method not in MODELS:
        raise ValueError(f"unknown annotator model {method!r}; one of {', '.join(MODELS)}")
    if known and method not in ANCHORED:
        raise ValueError(
            f"{method} cannot take known true labels (crowd-kit's {method.upper()} has no"
            " such input); only Dawid-Skene is anchored by them"
        )
    n_units = int(units.max(initial=-1)) + 1
    out = np.zeros((n_units, n_labels))
    if not len(units):
        return out
    frame = pd.DataFrame({"task": units, "worker": annotators, "label": labels})
    with _library():
        if method == DAWID_SKENE:
            truth = pd.Series(dict(known), dtype="int64") if known else None
            model: Any = DawidSkene(
                n_iter=options.get("n_iter", 100), tol=options.get("tol", 1e-5)
            ).fit(frame, truth)
        elif method == MACE:
            model = MaceModel(
                n_restarts=options.get("n_restarts", 10),
                n_iter=options.get("n_iter", 50),
                method=options.get("method", "vb"),
                random_state=options.get("random_state", 0),
            ).fit(frame)
        else:
            model = GladModel(n_iter=options.get("n_iter", 100), tol=options.get("tol", 1e-5)).fit(
                frame
            )
    probas = model.probas_
    rows = probas.index.to_numpy(dtype=np.int64)
    columns = probas.columns.to_numpy(dtype=np.int64)
    out[np.ix_(rows, columns)] = probas.to_numpy(dtype=np.float64)
    return out


ADJUDICATED = "adjudicated"


@dataclass(frozen=True)
class Decision:
    """One unit's gold: the label, the method that chose it (`ADJUDICATED` when a
    researcher decided it) and its confidence (1 for an adjudicated value)."""

    label: Label
    method: str
    confidence: float


def decide(
    unit_labels: Iterable[LabelRow],
    adjudicated: Mapping[Any, Label],
    method: str,
    **options: Any,
) -> dict[Hashable, Decision]:
    """Gold per unit: an adjudicated value wins whatever the model says; every other unit
    gets the method's label. Dawid-Skene also learns from the adjudicated values (they
    anchor its confusion matrices); MACE and GLAD cannot take them, so they are fitted on
    the labels alone and the adjudicated values replace their answers afterwards. A unit
    adjudicated but never labelled still gets its adjudicated value."""
    rows = _rows(unit_labels)
    labelled = {unit for unit, _, _ in rows}
    seen = {label for _, _, label in rows}
    anchors = {
        unit: label
        for unit, label in adjudicated.items()
        if unit in labelled and label in seen and method in ANCHORED
    }
    fitted = estimate(method, rows, anchors or None, **options)
    out: dict[Hashable, Decision] = {
        unit: Decision(unit_estimate.label, method, unit_estimate.confidence)
        for unit, unit_estimate in fitted.units.items()
    }
    for unit, label in adjudicated.items():
        out[unit] = Decision(label, ADJUDICATED, 1.0)
    return out


def _counts(rows: list[LabelRow]) -> dict[Hashable, int]:
    counts: dict[Hashable, int] = defaultdict(int)
    for unit, _, _ in rows:
        counts[unit] += 1
    return dict(counts)


def _per_annotator(rows: list[LabelRow]) -> dict[Hashable, int]:
    counts: dict[Hashable, int] = defaultdict(int)
    for _, annotator, _ in rows:
        counts[annotator] += 1
    return dict(counts)
