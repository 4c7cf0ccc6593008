"""Scores of predictions against reference labels, for any label set. No database.

Sources (scikit-learn documentation examples, and Wikipedia worked examples):
- `classification_report`: y_true [0, 1, 2, 2, 2], y_pred [0, 0, 2, 2, 1]: precision
  0.50 0.00 1.00, recall 1.00 0.00 0.67, f1 0.67 0.00 0.80, accuracy 0.60, macro avg
  0.50 0.56 0.49, weighted avg 0.70 0.60 0.61.
- `precision_recall_fscore_support`: cat/dog/pig, macro (0.22..., 0.33..., 0.26...),
  micro (0.33..., 0.33..., 0.33...), weighted (0.22..., 0.33..., 0.26...).
- `fbeta_score`: y_true [0, 1, 2, 0, 1, 2], y_pred [0, 2, 1, 0, 0, 1], beta 0.5: macro
  0.238..., micro 0.333..., weighted 0.238..., per class [0.71, 0, 0].
- `matthews_corrcoef`: y_true [+1, +1, +1, -1], y_pred [+1, -1, +1, +1]: -0.33...
- Wikipedia "Phi coefficient" / "Matthews correlation coefficient", worked example:
  TP 6, FN 2, FP 1, TN 3 (12 pictures: 8 cats, 4 dogs): MCC = 16 / sqrt(1120) = 0.478.
"""

from __future__ import annotations

import math

import pytest

from annotation import stats
from tests.annotation.test_stats import approx


def test_scikit_learn_classification_report_example() -> None:
    report = stats.classification_scores(y_true=[0, 1, 2, 2, 2], y_pred=[0, 0, 2, 2, 1])
    assert [c.precision for c in report.per_class] == [approx(0.50, 2), 0.0, 1.0]
    assert [c.recall for c in report.per_class] == [1.0, 0.0, approx(0.67, 2)]
    assert [c.f1 for c in report.per_class] == [approx(0.67, 2), 0.0, approx(0.80, 2)]
    assert [c.support for c in report.per_class] == [1, 1, 3]
    assert report.accuracy.value == approx(0.60, 2)
    macro, weighted = report.macro, report.weighted
    assert (macro.precision, macro.recall, macro.f1) == (
        approx(0.50, 2),
        approx(0.56, 2),
        approx(0.49, 2),
    )
    assert (weighted.precision, weighted.recall, weighted.f1) == (
        approx(0.70, 2),
        approx(0.60, 2),
        approx(0.61, 2),
    )
    assert report.macro_f1.value == macro.f1


def test_scikit_learn_precision_recall_fscore_support_example_with_string_labels() -> None:
    y_true = ["cat", "dog", "pig", "cat", "dog", "pig"]
    y_pred = ["cat", "pig", "dog", "cat", "cat", "dog"]
    report = stats.classification_scores(y_true=y_true, y_pred=y_pred)
    assert report.labels == ("cat", "dog", "pig")
    # The docs print "0.22..., 0.33..., 0.26..." (doctest ellipsis): leading digits.
    for averages, expected in (
        (report.macro, ("0.22", "0.33", "0.26")),
        (report.micro, ("0.33", "0.33", "0.33")),
        (report.weighted, ("0.22", "0.33", "0.26")),
    ):
        values = (averages.precision, averages.recall, averages.f1)
        assert all(str(v).startswith(e) for v, e in zip(values, expected, strict=True)), values


def test_scikit_learn_fbeta_example() -> None:
    report = stats.classification_scores(
        y_true=[0, 1, 2, 0, 1, 2], y_pred=[0, 2, 1, 0, 0, 1], beta=0.5
    )
    # Printed "0.238...", "0.333...", "0.238...", [0.71..., 0., 0.]: leading digits.
    assert str(report.macro.f_beta).startswith("0.238")
    assert str(report.micro.f_beta).startswith("0.333")
    assert str(report.weighted.f_beta).startswith("0.238")
    f_beta = [c.f_beta for c in report.per_class]
    assert str(f_beta[0]).startswith("0.71") and f_beta[1:] == [0.0, 0.0]
    assert report.beta == 0.5


def test_matthews_correlation_binary_examples() -> None:
    sklearn_docs = stats.classification_scores(y_true=[1, 1, 1, -1], y_pred=[1, -1, 1, 1])
    assert sklearn_docs.mcc.value == approx(-0.33, 2)
    # Wikipedia: 8 cats (6 found), 4 dogs (1 taken for a cat).
    y_true = ["cat"] * 8 + ["dog"] * 4
    y_pred = ["cat"] * 6 + ["dog"] * 2 + ["cat"] + ["dog"] * 3
    assert stats.classification_scores(y_true=y_true, y_pred=y_pred).mcc.value == approx(0.478, 3)


def test_matthews_correlation_multiclass_is_gorodkins_rk() -> None:
    # Gorodkin (2004) R_K, as the scikit-learn user guide writes it, by hand on the
    # classification_report example: c = 3 correct of s = 5; predicted counts p = (2, 1, 2),
    # true counts t = (1, 1, 3): (c s - p.t) / sqrt((s^2 - p.p)(s^2 - t.t)) = 6 / sqrt(224).
    report = stats.classification_scores(y_true=[0, 1, 2, 2, 2], y_pred=[0, 0, 2, 2, 1])
    assert report.mcc.value == pytest.approx(6 / math.sqrt(224))


def test_mcc_with_one_class_only_is_undefined_in_words() -> None:
    report = stats.classification_scores(y_true=["a", "a"], y_pred=["a", "b"])
    assert report.mcc.value is None
    assert "every reference label is the same class" in report.mcc.undefined_reason


def test_verifier_keywords_follow_scikit_learn_and_positional_use_is_refused() -> None:
    ref = ["supported"] * 12 + ["unsupported"] * 10
    pred = ["supported"] * 5 + ["unsupported"] * 7 + ["supported"] * 3 + ["unsupported"] * 7
    report = stats.verifier_vs_reference(y_true=ref, y_pred=pred)
    # Precision is over what the verifier said, recall over the reference: 5/8 and 5/12.
    assert report.scores("supported").precision == pytest.approx(5 / 8)
    assert report.scores("supported").recall == pytest.approx(5 / 12)
    with pytest.raises(TypeError, match="by name: y_true="):
        stats.verifier_vs_reference(pred, ref)  # type: ignore[misc]


def test_any_label_set_integer_labels_and_a_declared_order() -> None:
    report = stats.verifier_vs_reference(
        y_true=[1, 0, 1, 1, 0], y_pred=[1, 0, 0, 1, 1], labels=[1, 0]
    )
    assert report.labels == (1, 0)
    assert report.confusion == ((2, 1), (1, 1))
    assert report.scores(1).precision == pytest.approx(2 / 3)


def test_a_label_set_that_is_not_ours_without_labels_says_how_to_score_it() -> None:
    with pytest.raises(ValueError, match="unknown verdict label '1'.*pass it as labels="):
        stats.verifier_vs_reference(y_true=[1, 0], y_pred=[1, 1])


def test_felm_true_false_labels_score_as_published() -> None:
    # FELM scores segments true/false; balanced accuracy is the mean recall of both classes.
    report = stats.verifier_vs_reference(
        y_true=["true", "true", "false", "false"],
        y_pred=["true", "false", "false", "false"],
        labels=["true", "false"],
    )
    assert report.balanced_accuracy.value == pytest.approx((1 / 2 + 1) / 2)


def test_factscore_labels_with_irrelevant_excluded() -> None:
    # FActScore's S / NS / IR: IR facts are not scored.
    report = stats.verifier_vs_reference(
        y_true=["S", "NS", "IR", "S"],
        y_pred=["S", "S", "S", "NS"],
        labels=["S", "NS"],
        exclude=["IR"],
    )
    assert report.n == 3
    assert report.excluded == {"labelled 'IR' (excluded)": 1}


def test_collapse_rule_per_call_turns_ternary_into_binary() -> None:
    rule = {"contradicted": "unsupported", "inconclusive": "unsupported"}
    y_true = ["supported", "contradicted", "inconclusive", "supported"]
    y_pred = ["supported", "inconclusive", "supported", "contradicted"]
    declared = stats.verifier_vs_reference(
        y_true=y_true, y_pred=y_pred, labels=["supported", "unsupported"], collapse=rule
    )
    assert declared.confusion == ((1, 1), (1, 1))
    # The built-in binary mode is the same rule (VeriScore Table 11).
    assert stats.verifier_vs_reference(y_true=y_true, y_pred=y_pred).confusion == (
        declared.confusion
    )
    # A stricter rule: inconclusive verdicts are left out instead of counted as unsupported.
    strict = stats.verifier_vs_reference(
        y_true=y_true,
        y_pred=y_pred,
        labels=["supported", "contradicted"],
        exclude=["inconclusive"],
    )
    assert strict.n == 2


def test_labels_outside_the_label_set_name_side_and_position() -> None:
    with pytest.raises(ValueError, match=r"y_pred\[1\] = 'maybe' is not one of the labels"):
        stats.classification_scores(y_true=["a", "b"], y_pred=["a", "maybe"], labels=["a", "b"])
    with pytest.raises(ValueError, match=r"collapsed to 'x'"):
        stats.classification_scores(
            y_true=["a", "b"], y_pred=["a", "b"], labels=["a", "b"], collapse={"b": "x"}
        )
    with pytest.raises(ValueError, match="2 predictions"):
        stats.classification_scores(y_true=["a"], y_pred=["a", "b"])


def test_nan_and_none_are_missing_on_either_side() -> None:
    report = stats.classification_scores(
        y_true=["a", float("nan"), "b", "a"], y_pred=["a", "a", None, "b"]
    )
    assert report.n == 2
    assert report.excluded == {
        "no reference label": 1,
        "no usable prediction (missing or unparsed)": 1,
    }


def test_string_labels_counted_per_distinct_pair_as_other_labels_one_by_one() -> None:
    """The same report (excluded reasons in the order of their first unit, disagreements
    in unit order) from the same labels spelt as strings and as numbers."""
    true = ["a", "b", None, "ir", "a", "c", "b", None, "a", "c"] * 3
    pred = ["a", "c", "a", "b", None, "c", "a", "ir", "b", "c"] * 3
    number = {"a": 1, "b": 2, "c": 3, "ir": 9, None: None}
    units = [f"u{i}" for i in range(len(true))]
    as_text = stats.classification_scores(y_true=true, y_pred=pred, exclude=("ir",), units=units)
    as_numbers = stats.classification_scores(
        y_true=[number[t] for t in true],
        y_pred=[number[p] for p in pred],
        exclude=(9,),
        units=units,
    )
    assert list(as_text.excluded.items()) == [
        ("no reference label", 6),
        ("labelled 'ir' (excluded)", 3),
        ("no usable prediction (missing or unparsed)", 3),
    ]
    assert list(as_numbers.excluded.values()) == list(as_text.excluded.values())
    assert [(d.unit, d.reference, d.predicted) for d in as_text.disagreements] == [
        (u, t, p)
        for u, t, p in zip(units, true, pred, strict=True)
        if None not in (t, p) and "ir" not in (t, p) and t != p
    ]
    assert [(d.unit, number[d.reference], number[d.predicted]) for d in as_text.disagreements] == [
        (d.unit, d.reference, d.predicted) for d in as_numbers.disagreements
    ]
    assert as_text.confusion == as_numbers.confusion and as_text.n == as_numbers.n == 18
