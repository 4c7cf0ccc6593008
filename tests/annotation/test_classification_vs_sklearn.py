"""classification_scores derives every figure from one numpy confusion matrix (scikit-learn's
per-call input checks cost ~1 ms each, 180 calls a report): here each figure is checked
against scikit-learn's own function on the same labels, to 1e-12, on the released FActScore
human labels (real class shares) and on random label sets with absent classes."""

from __future__ import annotations

import json
import math
import random
import warnings

import numpy as np
import pytest
from sklearn import metrics

from annotation.stats.classification import ClassificationReport, classification_scores
from tests.conftest import peer_file


def _close(ours: float | None, theirs: float) -> None:
    if ours is None or math.isnan(theirs):
        assert ours is None or math.isnan(ours), (ours, theirs)
        return
    assert ours == pytest.approx(theirs, abs=1e-12, rel=0)


def _check(true: list[str], pred: list[str], labels: list[str], beta: float = 1.0) -> None:
    report = classification_scores(y_true=true, y_pred=pred, labels=labels, beta=beta)
    assert isinstance(report, ClassificationReport) and report.n == len(true)
    assert np.array_equal(
        np.array(report.confusion), metrics.confusion_matrix(true, pred, labels=labels)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for b, field in ((1.0, "f1"), (beta, "f_beta")):
            p, r, f, _ = metrics.precision_recall_fscore_support(
                true, pred, labels=labels, average=None, beta=b, zero_division=np.nan
            )
            for i, scores in enumerate(report.per_class):
                if scores.predicted:
                    _close(scores.precision, p[i])
                if scores.support:
                    _close(scores.recall, r[i])
                if scores.support + scores.predicted:
                    _close(getattr(scores, field), 0.0 if math.isnan(f[i]) else f[i])
            for average in ("macro", "weighted", "micro"):
                p, r, f, _ = metrics.precision_recall_fscore_support(
                    true, pred, labels=labels, average=average, beta=b, zero_division=np.nan
                )
                mine = getattr(report, average)
                _close(mine.precision, p)
                _close(mine.recall, r)
                _close(getattr(mine, field), f)
        _close(report.balanced_accuracy.value, metrics.balanced_accuracy_score(true, pred))
        if report.kappa.value is not None:
            _close(report.kappa.value, metrics.cohen_kappa_score(true, pred, labels=labels))
        if report.mcc is not None and report.mcc.value is not None:
            _close(report.mcc.value, metrics.matthews_corrcoef(true, pred))
    _close(report.accuracy.value, metrics.accuracy_score(true, pred))


def test_every_figure_equals_scikit_learns_on_the_released_factscore_labels() -> None:
    for name in ("ChatGPT", "InstructGPT", "PerplexityAI"):
        labels = [
            fact["label"]
            for line in peer_file(f"factscore_labeled/{name}.jsonl").read_text().splitlines()
            for annotation in json.loads(line)["annotations"] or []
            for fact in annotation.get("human-atomic-facts") or []
        ]
        assert set(labels) == {"S", "NS", "IR"}
        # a second "system": the labels shifted (real class shares, partial agreement)
        for shift in (1, 7):
            pred = labels[shift:] + labels[:shift]
            _check(labels, pred, ["S", "NS", "IR"])
            _check(labels, pred, ["S", "NS", "IR"], beta=0.5)
            binary = [(t, p) for t, p in zip(labels, pred, strict=True) if "IR" not in (t, p)]
            _check([t for t, _ in binary], [p for _, p in binary], ["S", "NS"], beta=2.0)


def test_every_figure_equals_scikit_learns_on_random_labels_with_absent_classes() -> None:
    rng = random.Random(0)
    classes = ["supported", "contradicted", "inconclusive", "unsupported"]
    for _ in range(40):
        k = rng.randint(2, 4)
        present = rng.sample(classes[:k], rng.randint(1, k))
        n = rng.randint(1, 60)
        true = [rng.choice(present) for _ in range(n)]
        pred = [rng.choice(present if rng.random() < 0.7 else classes[:k]) for _ in range(n)]
        _check(true, pred, classes[:k], beta=rng.choice([0.5, 1.0, 2.0]))
