"""Predictions scored against reference labels, for any label set.

Precision, recall, F1 and F-beta per class and averaged as in scikit-learn's
classification report (macro, weighted, micro), accuracy, balanced accuracy, Cohen's
kappa and the Matthews correlation coefficient, all from scikit-learn. Arguments are
named as scikit-learn names them (`y_true` is the reference, `y_pred` the system) and
must be passed by name, because swapping them silently swaps precision and recall.

Labels are any hashable values, in the order of `labels=`. A collapse rule (a mapping
label -> label, e.g. VeriScore's ternary -> binary) is applied to both sides first;
labels in `exclude` (e.g. FActScore's IR) and missing labels (None, NaN) leave the
unit out and are counted in `excluded`. A label outside the label set is an error
that names its position.

Verifier verdicts: `normalise_verdict` reads the spellings of the published datasets,
`verifier_vs_reference` scores a verifier's verdicts against reference labels (binary
or ternary, as VeriScore Table 11), `response_labels` per response, and `mcnemar_test`
compares two verifiers on the same reference (statsmodels; exact below
MCNEMAR_EXACT_BELOW discordant pairs).
"""

from __future__ import annotations

import functools
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, starmap
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt
import sklearn
from sklearn import metrics
from statsmodels.stats.contingency_tables import mcnemar

from .coefficient import Coefficient
from .ratings import (
    Label,
    is_missing,
    label_set,
)

# VeriScore (Song et al. 2024), Table 11: contradicted and inconclusive count as unsupported.
VERISCORE_BINARY: dict[Label, Label] = {
    "contradicted": "unsupported",
    "inconclusive": "unsupported",
}


@dataclass(frozen=True)
class ClassScores:
    label: Label
    precision: float | None
    recall: float | None
    f1: float | None
    support: int
    predicted: int
    undefined_reason: str | None = None
    f_beta: float | None = None


@dataclass(frozen=True)
class ScoreAverages:
    """Precision, recall, F1 and F-beta averaged over classes, as scikit-learn averages.

    macro: unweighted mean over the classes where the score is defined; weighted: mean
    weighted by support; micro: from the pooled counts (equals accuracy when every
    class is in the label set).
    """

    average: str
    precision: float | None
    recall: float | None
    f1: float | None
    f_beta: float | None
    note: str | None = None


class Disagreement(NamedTuple):  # a tuple: tens of thousands per report, made fast
    unit: Hashable
    reference: Label
    predicted: Label


@dataclass(frozen=True)
class ClassificationReport:
    """Predictions scored against reference labels.

    `confusion[i][j]` counts units whose reference is `labels[i]` and prediction
    `labels[j]`. `macro_f1` is the unweighted mean of the per-class F1 scores. For
    VeriScore's Table 11 layout use macro_f1, supported_f1 and unsupported_f1; note that
    in the published table "Overall F1" equals "S. F1" in every row, i.e. VeriScore's
    overall figure is the F1 of the supported class over all items, not a macro mean.
    `disagreements` lists the scored units where prediction and reference differ.
    """

    mode: str
    labels: tuple[Label, ...]
    n: int
    excluded: dict[str, int]
    per_class: tuple[ClassScores, ...]
    accuracy: Coefficient
    macro_f1: Coefficient
    balanced_accuracy: Coefficient
    kappa: Coefficient
    confusion: tuple[tuple[int, ...], ...]
    disagreements: tuple[Disagreement, ...]
    mcc: Coefficient | None = None
    macro: ScoreAverages | None = None
    weighted: ScoreAverages | None = None
    micro: ScoreAverages | None = None
    beta: float = 1.0

    def scores(self, label: Label) -> ClassScores:
        for scores in self.per_class:
            if scores.label == label:
                return scores
        raise KeyError(label)

    @property
    def supported_f1(self) -> float | None:
        return self.scores("supported").f1

    @property
    def unsupported_f1(self) -> float | None:
        """Only in binary mode (VeriScore Table 11's "U. F1")."""
        return self.scores("unsupported").f1


NO_UNITS = "no unit has both a usable prediction and a reference label"


def classification_scores(
    *,
    y_true: Sequence[Label | None],
    y_pred: Sequence[Label | None],
    labels: Sequence[Label] | None = None,
    collapse: Mapping[Label, Label] | None = None,
    exclude: Collection[Label] = (),
    beta: float = 1.0,
    units: Sequence[Hashable] | None = None,
    name: str = "",
) -> ClassificationReport:
    """Score `y_pred` against `y_true` over `labels` (default: the labels seen, sorted)."""
    if isinstance(y_true, str | bytes) or isinstance(y_pred, str | bytes):
        raise TypeError("y_true and y_pred must be sequences of labels, not strings")
    if len(y_true) != len(y_pred):
        raise ValueError(
            f"{len(y_pred)} predictions (y_pred) for {len(y_true)} references (y_true)"
        )
    unit_ids = tuple(units) if units is not None else tuple(range(len(y_true)))
    if len(unit_ids) != len(y_true):
        raise ValueError(f"{len(unit_ids)} unit ids for {len(y_true)} labels")
    if beta <= 0:
        raise ValueError(f"beta must be positive, not {beta!r}")
    rule = dict(collapse or {})

    def mapped(value: Any) -> Label | None:
        return None if is_missing(value) else rule.get(value, value)

    true, pred = map_each(y_true, mapped), map_each(y_pred, mapped)
    # each distinct (reference, prediction) pair with its count, in the order of its first
    # unit, and why it is left out (None: scored)
    pairs = Counter(zip(true, pred, strict=True))
    why = {pair: _reason(*pair, exclude) for pair in pairs}
    excluded: Counter[str] = Counter()
    for pair, count in pairs.items():
        if (reason := why[pair]) is not None:
            excluded[reason] += count
    scored = {pair: count for pair, count in pairs.items() if why[pair] is None}
    labels_ = label_set(labels, {value for pair in scored for value in pair})
    allowed = {*labels_, *exclude, None}
    if labels is not None and not {value for pair in pairs for value in pair} <= allowed:
        for position, row in enumerate(zip(y_true, y_pred, true, pred, strict=True)):
            for side, raw, value in (("y_true", row[0], row[2]), ("y_pred", row[1], row[3])):
                if value not in allowed:
                    shown = f"{raw!r}" + (f" (collapsed to {value!r})" if value != raw else "")
                    raise ValueError(
                        f"{side}[{position}] = {shown} is not one of the labels {list(labels_)}"
                    )
    # the units of the scored pairs whose labels differ (a few pairs: looked up at C speed)
    differ = {pair for pair in scored if pair[0] != pair[1]}
    disagreements = tuple(
        starmap(
            Disagreement,
            compress(
                zip(unit_ids, true, pred, strict=True),
                map(differ.__contains__, zip(true, pred, strict=True)),
            ),
        )
    )
    # The codes _report hands scikit-learn are int64 arrays it builds itself: the
    # library's documented switch skips re-validating them on each of its ~10 calls.
    with sklearn.config_context(skip_parameter_validation=True, assume_finite=True):
        return _report(scored, disagreements, labels_, dict(excluded), beta, name)


def map_each(values: Sequence[Any], fn: Callable[[Any], Label | None]) -> list[Label | None]:
    """[fn(v) for v in values], fn once per distinct value: a report's labels are a few
    strings repeated thousands of times, looked up at C speed. Values other than strings
    and None go through fn one by one (fn tells 1 and True apart, NaN, ...)."""
    try:
        distinct = dict.fromkeys(values)
    except TypeError:  # unhashable: fn says what it makes of them
        return [fn(v) for v in values]
    if not all(v is None or type(v) is str for v in distinct):
        return [fn(v) for v in values]
    table = {v: fn(v) for v in distinct}
    if all(table[v] is v for v in distinct):  # fn keeps every value: a copy
        return list(values)
    return list(map(table.__getitem__, values))


def _reason(t: Label | None, p: Label | None, exclude: Collection[Label]) -> str | None:
    """Why a unit with reference `t` and prediction `p` is left out; None: it is scored."""
    if t is None:
        return "no reference label"
    if p is None:
        return "no usable prediction (missing or unparsed)"
    if t in exclude or p in exclude:
        label = t if t in exclude else p
        return (
            "marked irrelevant (IR)" if label == "irrelevant" else f"labelled {label!r} (excluded)"
        )
    return None


def _report(
    scored: dict[tuple[Label, Label], int],
    disagreements: tuple[Disagreement, ...],
    labels: tuple[Label, ...],
    excluded: dict[str, int],
    beta: float,
    name: str,
) -> ClassificationReport:
    k = len(labels)
    code = {label: i for i, label in enumerate(labels)}
    # scikit-learn gets each distinct (reference, prediction) pair once, weighted by how
    # many units have it (sample_weight: sums of whole numbers, exact); each pair is one
    # cell of the confusion matrix
    true = np.array([code[t] for t, _ in scored], dtype=np.int64)
    pred = np.array([code[p] for _, p in scored], dtype=np.int64)
    weight = np.array(list(scored.values()), dtype=np.int64)
    confusion = np.zeros((k, k), dtype=np.int64)
    confusion[true, pred] = weight
    n = int(weight.sum())
    if n:
        macro, weighted, micro = (
            _averages(true, pred, weight, labels, confusion, beta, average)
            for average in ("macro", "weighted", "micro")
        )
        accuracy = Coefficient("Accuracy", float(np.trace(confusion)) / n, n_units=n)
        macro_f1 = Coefficient("Macro F1", macro.f1, note=macro.note, n_units=n)
        balanced = _balanced_accuracy(true, pred, weight, confusion, labels)
        kappa = _kappa(true, pred, weight, labels)
        mcc = _mcc(true, pred, weight, confusion)
    else:
        macro = weighted = micro = ScoreAverages("", None, None, None, None, NO_UNITS)
        accuracy, macro_f1, balanced, kappa, mcc = (
            Coefficient(title, None, undefined_reason=NO_UNITS)
            for title in ("Accuracy", "Macro F1", "Balanced accuracy", "Cohen's kappa", "MCC")
        )
    return ClassificationReport(
        mode=name,
        labels=labels,
        n=n,
        excluded=excluded,
        per_class=_per_class(true, pred, weight, confusion, labels, beta),
        accuracy=accuracy,
        macro_f1=macro_f1,
        balanced_accuracy=balanced,
        kappa=kappa,
        confusion=tuple(tuple(int(x) for x in row) for row in confusion),
        disagreements=disagreements,
        mcc=mcc,
        macro=macro,
        weighted=weighted,
        micro=micro,
        beta=beta,
    )


def _number(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _scores(
    true: npt.NDArray[np.int64],
    pred: npt.NDArray[np.int64],
    weight: npt.NDArray[np.int64],
    k: int,
    average: str | None,
    beta: float,
) -> tuple[Any, Any, Any, Any]:
    """scikit-learn's precision, recall, F1 and F-beta (with beta 1, the F1 itself)."""

    def call(b: float) -> Any:
        return metrics.precision_recall_fscore_support(
            true,
            pred,
            labels=list(range(k)),
            average=average,
            beta=b,
            zero_division=np.nan,
            sample_weight=weight,
        )

    p, r, f1, _ = call(1.0)
    return p, r, f1, f1 if beta == 1 else call(beta)[2]


def _per_class(
    true: npt.NDArray[np.int64],
    pred: npt.NDArray[np.int64],
    weight: npt.NDArray[np.int64],
    confusion: npt.NDArray[np.int64],
    labels: tuple[Label, ...],
    beta: float,
) -> tuple[ClassScores, ...]:
    if len(true):
        precision, recall, f1, f_beta = _scores(true, pred, weight, len(labels), None, beta)
    else:
        precision = recall = f1 = f_beta = np.full(len(labels), np.nan)
    result = []
    for i, label in enumerate(labels):
        support = int(confusion[i, :].sum())
        predicted = int(confusion[:, i].sum())
        reasons = []
        if not predicted:
            reasons.append(f"precision: never predicted {label!r}")
        if not support:
            reasons.append(f"recall: no reference label is {label!r}")
        # F is 2tp / (support + predicted): defined unless the class never occurs at all.
        defined_f = bool(support + predicted)
        result.append(
            ClassScores(
                label,
                _number(precision[i]) if predicted else None,
                _number(recall[i]) if support else None,
                (_number(f1[i]) or 0.0) if defined_f else None,
                support,
                predicted,
                "; ".join(reasons) or None,
                (_number(f_beta[i]) or 0.0) if defined_f else None,
            )
        )
    return tuple(result)


def _averages(
    true: npt.NDArray[np.int64],
    pred: npt.NDArray[np.int64],
    weight: npt.NDArray[np.int64],
    labels: tuple[Label, ...],
    confusion: npt.NDArray[np.int64],
    beta: float,
    average: str,
) -> ScoreAverages:
    p, r, f1, fb = _scores(true, pred, weight, len(labels), average, beta)
    note = None
    absent = [
        str(label)
        for i, label in enumerate(labels)
        if not confusion[i, :].sum() and not confusion[:, i].sum()
    ]
    if average == "macro" and absent:
        note = (
            f"mean over {len(labels) - len(absent)} classes; {', '.join(absent)} never occurs "
            "in either labelling and has no F1"
        )
    return ScoreAverages(average, _number(p), _number(r), _number(f1), _number(fb), note)


def _balanced_accuracy(
    true: npt.NDArray[np.int64],
    pred: npt.NDArray[np.int64],
    weight: npt.NDArray[np.int64],
    confusion: npt.NDArray[np.int64],
    labels: tuple[Label, ...],
) -> Coefficient:
    present = [str(label) for i, label in enumerate(labels) if confusion[i, :].sum()]
    note = (
        f"mean recall over the {len(present)} classes present in the reference "
        f"({', '.join(present)})"
        if len(present) < len(labels)
        else None
    )
    with warnings.catch_warnings():
        # sklearn warns when a predicted class is absent from the reference; the note says so.
        warnings.simplefilter("ignore", UserWarning)
        value = float(metrics.balanced_accuracy_score(true, pred, sample_weight=weight))
    return Coefficient("Balanced accuracy", value, note=note, n_units=int(weight.sum()))


def _kappa(
    true: npt.NDArray[np.int64],
    pred: npt.NDArray[np.int64],
    weight: npt.NDArray[np.int64],
    labels: tuple[Label, ...],
) -> Coefficient:
    name = "Cohen's kappa"
    if len(set(true.tolist()) | set(pred.tolist())) == 1:
        return Coefficient(
            name,
            None,
            undefined_reason=f"prediction and reference both say {labels[int(true[0])]!r} on "
            f"all {int(weight.sum())} units: expected agreement is 1, so kappa is 0/0",
            n_units=int(weight.sum()),
        )
    codes = list(range(len(labels)))
    value = float(metrics.cohen_kappa_score(true, pred, labels=codes, sample_weight=weight))
    return Coefficient(name, value, n_units=int(weight.sum()))


def _mcc(
    true: npt.NDArray[np.int64],
    pred: npt.NDArray[np.int64],
    weight: npt.NDArray[np.int64],
    confusion: npt.NDArray[np.int64],
) -> Coefficient:
    """Matthews (1975), Gorodkin's (2004) R_K for more than two classes (scikit-learn)."""
    name = "Matthews correlation (MCC)"
    n = int(weight.sum())
    rows, cols = confusion.sum(axis=1), confusion.sum(axis=0)
    if n * n == (rows**2).sum() or n * n == (cols**2).sum():
        side = "reference" if n * n == (rows**2).sum() else "prediction"
        return Coefficient(
            name,
            None,
            undefined_reason=f"every {side} label is the same class, so MCC is 0/0",
            n_units=n,
        )
    return Coefficient(
        name, float(metrics.matthews_corrcoef(true, pred, sample_weight=weight)), n_units=n
    )


# --------------------------------------------------------------------------- verdict labels

Mode = Literal["binary", "ternary"]

SUPPORTED = "supported"
UNSUPPORTED = "unsupported"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
IRRELEVANT = "irrelevant"
BINARY_LABELS: tuple[str, ...] = (SUPPORTED, UNSUPPORTED)
TERNARY_LABELS: tuple[str, ...] = (SUPPORTED, CONTRADICTED, INCONCLUSIVE)

# Below this many discordant pairs McNemar's chi-square approximation is poor, so the
# exact binomial version is used (the rule of thumb in the statsmodels docs).
MCNEMAR_EXACT_BELOW = 25


# --------------------------------------------------------------------------- verifier


_VERDICT_SPELLINGS = {
    "supported": SUPPORTED,
    "s": SUPPORTED,
    "unsupported": UNSUPPORTED,
    "not supported": UNSUPPORTED,
    "ns": UNSUPPORTED,
    "contradicted": CONTRADICTED,
    "inconclusive": INCONCLUSIVE,
    "inconclusive-not-enough": INCONCLUSIVE,
    "inconclusive-conflicting": INCONCLUSIVE,
    "ir": IRRELEVANT,
    "irrelevant": IRRELEVANT,
}
_NO_VERDICT = {"", "unparsed", "error"}


def normalise_verdict(label: str | None, *, mode: Mode | None = None) -> str | None:
    """One canonical spelling for a verdict label, or None when there is no usable label.

    Accepts our labels (supported, contradicted, inconclusive, inconclusive-not-enough,
    inconclusive-conflicting, unsupported), VeriScore's "Supported." / "Unsupported." /
    "Contradicted." / "Inconclusive." and FActScore's S / NS / IR, in any case.
    "unparsed", "error" and empty strings give None. IR gives "irrelevant" in every
    mode. With mode="binary", contradicted and inconclusive become unsupported; with
    mode="ternary", a bare "unsupported" is an error because it does not say which.
    """
    if label is None:
        return None
    return _normalised(label, mode)


@functools.lru_cache(maxsize=4096)  # a report reads each spelling thousands of times
def _normalised(label: str, mode: Mode | None) -> str | None:
    key = label.strip().lower().rstrip(".").strip()
    if key in _NO_VERDICT:
        return None
    try:
        canonical = _VERDICT_SPELLINGS[key]
    except KeyError:
        raise ValueError(f"unknown verdict label {label!r}") from None
    if mode == "binary" and canonical in (CONTRADICTED, INCONCLUSIVE):
        return UNSUPPORTED
    if mode == "ternary" and canonical == UNSUPPORTED:
        raise ValueError(
            f"{label!r} is a binary label: it does not say contradicted or inconclusive; "
            "use mode='binary'"
        )
    return canonical


VerifierReport = ClassificationReport


def verifier_vs_reference(
    *args: object,
    y_true: Sequence[Label | None] | None = None,
    y_pred: Sequence[Label | None] | None = None,
    mode: Mode | None = None,
    labels: Sequence[Label] | None = None,
    collapse: Mapping[Label, Label] | None = None,
    exclude: Collection[Label] | None = None,
    beta: float = 1.0,
    units: Sequence[Hashable] | None = None,
) -> VerifierReport:
    """A verifier's labels (`y_pred`) scored against reference labels (`y_true`).

    Precision, recall, F1 and F-beta per class and averaged (macro, weighted, micro),
    accuracy, balanced accuracy, Cohen's kappa, MCC and the confusion matrix.

    Without `labels`, the labels are our verdicts in any of their spellings (see
    `normalise_verdict`), and `mode` picks the collapse rule: "binary" (the default,
    VeriScore's Table 11: contradicted and inconclusive count as unsupported) or
    "ternary". With `labels`, any label set is scored as given (binary, FELM's
    true/false, a dataset's own), after the optional `collapse` mapping; a `collapse`
    mapping also replaces `mode`'s rule for our verdicts. Units without a usable label
    (missing, NaN, "unparsed", "error") or with a label in `exclude` (default: IR,
    "irrelevant") are left out and counted in `excluded`.
    """
    if args:
        raise TypeError(
            "verifier_vs_reference takes its labels by name: y_true= (the reference, e.g. "
            "human labels) and y_pred= (the verifier), as scikit-learn names them"
        )
    if y_true is None or y_pred is None:
        raise TypeError("verifier_vs_reference needs y_true= and y_pred=")
    if labels is not None:
        if mode is not None:
            raise ValueError("mode names a rule for our verdict labels; with labels= use collapse=")
        return classification_scores(
            y_true=y_true,
            y_pred=y_pred,
            labels=labels,
            collapse=collapse,
            exclude=() if exclude is None else exclude,
            beta=beta,
            units=units,
            name="custom" if collapse else "as labelled",
        )
    if mode not in (None, "binary", "ternary"):
        raise ValueError(f"mode must be 'binary' or 'ternary', not {mode!r}")
    name: str
    if collapse is None:
        rule: Mapping[Label, Label] = VERISCORE_BINARY if mode in (None, "binary") else {}
        name = mode or "binary"
    else:
        rule, name = collapse, mode or "custom"
    kinds = [SUPPORTED, UNSUPPORTED, CONTRADICTED, INCONCLUSIVE]
    image = [rule.get(k, k) for k in kinds if k != UNSUPPORTED or k in rule.values()]
    verdict_labels = tuple(dict.fromkeys(image))
    true = map_each(y_true, lambda x: _verdict(x, rule, verdict_labels))
    pred = map_each(y_pred, lambda x: _verdict(x, rule, verdict_labels))
    return classification_scores(
        y_true=true,
        y_pred=pred,
        labels=verdict_labels,
        exclude=(IRRELEVANT,) if exclude is None else exclude,
        beta=beta,
        units=units,
        name=name,
    )


def _verdict(
    label: Label | None, rule: Mapping[Label, Label], labels: tuple[Label, ...]
) -> Label | None:
    if is_missing(label):
        return None
    try:
        canonical = normalise_verdict(label if isinstance(label, str) else str(label))
    except ValueError as error:
        raise ValueError(
            f"{error}; to score another label set, pass it as labels=[...] (and a collapse= "
            "mapping if some labels count as others)"
        ) from None
    if canonical is None or canonical == IRRELEVANT:
        return canonical
    value = rule.get(canonical, canonical)
    if value not in labels:
        raise ValueError(
            f"{label!r} is a binary label: it does not say contradicted or inconclusive; "
            "use mode='binary'"
            if canonical == UNSUPPORTED
            else f"{label!r} is not one of the labels {list(labels)}"
        )
    return value


def response_labels(
    segment_labels: Sequence[str | None], response_ids: Sequence[Hashable]
) -> dict[Hashable, str | None]:
    """Response-level labels from segment labels, as FELM scores responses.

    A response is unsupported when any of its segments is; supported when every
    segment is; None (no usable label) otherwise. Binary only: a response with one
    contradicted and one inconclusive segment has no single ternary label.
    """
    if len(segment_labels) != len(response_ids):
        raise ValueError(f"{len(segment_labels)} labels for {len(response_ids)} response ids")
    labels = map_each(segment_labels, lambda label: normalise_verdict(label, mode="binary"))
    found: dict[Hashable, set[Label | None]] = defaultdict(set)
    for label, response in zip(labels, response_ids, strict=True):
        found[response].add(label)
    # any unsupported segment: unsupported; only supported ones (IR aside): supported; a
    # segment without a label, or only IR: None
    return {
        response: UNSUPPORTED
        if UNSUPPORTED in given
        else SUPPORTED
        if given - {IRRELEVANT} == {SUPPORTED}
        else None
        for response, given in found.items()
    }


# --------------------------------------------------------------------------- McNemar


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test between two verifiers scored against the same reference.

    `only_a_correct` and `only_b_correct` are the discordant pairs. `method` is
    "exact" (binomial, used below 25 discordant pairs) or "chi-square" (without
    continuity correction unless asked).
    """

    n: int
    both_correct: int
    only_a_correct: int
    only_b_correct: int
    both_wrong: int
    excluded: int
    method: str | None
    statistic: float | None
    p_value: float | None
    undefined_reason: str | None = None


def mcnemar_test(
    pred_a: Sequence[str | None],
    pred_b: Sequence[str | None],
    ref: Sequence[str | None],
    *,
    mode: Mode = "binary",
    exact: bool | None = None,
    correction: bool = False,
    collapse: Mapping[Label, Label] | None = None,
) -> McNemarResult:
    """`collapse`, when given, replaces `mode`'s rule (as in `verifier_vs_reference`)."""
    if not len(pred_a) == len(pred_b) == len(ref):
        raise ValueError("pred_a, pred_b and ref must have the same length")
    table = np.zeros((2, 2), dtype=np.int64)
    excluded = 0

    def verdict(label: str | None) -> Label | None:
        if collapse is None:
            return normalise_verdict(label, mode=mode)
        canonical = normalise_verdict(label)
        return None if canonical is None else collapse.get(canonical, canonical)

    # each distinct (a, b, reference) once: a few label triples repeated per unit
    for (a_raw, b_raw, r_raw), count in Counter(zip(pred_a, pred_b, ref, strict=True)).items():
        a, b, r = (verdict(x) for x in (a_raw, b_raw, r_raw))
        if a is None or b is None or r is None or IRRELEVANT in (a, b, r):
            excluded += count
            continue
        table[int(a != r), int(b != r)] += count
    n = int(table.sum())

    def result(
        method: str | None, statistic: float | None, p_value: float | None, reason: str | None
    ) -> McNemarResult:
        return McNemarResult(
            n=n,
            both_correct=int(table[0, 0]),
            only_a_correct=int(table[0, 1]),
            only_b_correct=int(table[1, 0]),
            both_wrong=int(table[1, 1]),
            excluded=excluded,
            method=method,
            statistic=statistic,
            p_value=p_value,
            undefined_reason=reason,
        )

    if not n:
        return result(
            None, None, None, "no unit has usable labels from both verifiers and the reference"
        )
    discordant = int(table[0, 1] + table[1, 0])
    use_exact = discordant < MCNEMAR_EXACT_BELOW if exact is None else exact
    if not use_exact and not discordant:
        return result(
            "chi-square",
            None,
            None,
            "no discordant pairs: the chi-square statistic is 0/0 (use the exact test)",
        )
    test = mcnemar(table, exact=use_exact, correction=correction)
    return result(
        "exact" if use_exact else "chi-square", float(test.statistic), float(test.pvalue), None
    )
