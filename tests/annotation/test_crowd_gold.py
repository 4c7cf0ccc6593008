"""The gold seam's annotator models (issue 39): Dawid-Skene, MACE and GLAD as
GoldMethods on a field's codes, checked against `stats.crowd`'s own functions (which
test_stats_crowd.py checks against Dawid & Skene 1979 and crowd-kit's toy data)."""

from __future__ import annotations

import numpy as np
import pytest

from annotation import gold
from annotation.answers import FieldCodes
from annotation.models import Project
from annotation.stats import crowd
from tests.annotation.test_stats_crowd import SIMPLE, SIMPLE_TRUTH, TOY


def field_codes(rows: list[tuple[str, str, str]]) -> FieldCodes:
    """A verification item-label field from (unit, annotator, label) rows: unit "t1"
    is item 1, annotators numbered in order of first appearance."""
    units = sorted({u for u, _, _ in rows})
    annotators = list(dict.fromkeys(a for _, a, _ in rows))
    values = tuple(dict.fromkeys(label for _, _, label in rows))
    codes = np.full((len(units), len(annotators)), -1, np.int64)
    for u, a, label in rows:
        codes[units.index(u), annotators.index(a)] = values.index(label)
    return FieldCodes(
        "verification",
        "item",
        "label",
        np.arange(1, len(units) + 1, dtype=np.int64),
        tuple("item" for _ in units),
        np.arange(1, len(annotators) + 1, dtype=np.int64),
        values,
        codes,
        values,
        codes.copy(),
    )


def by_unit(rows: list[tuple[str, str, str]], golds: list[gold.Gold]) -> dict[str, gold.Gold]:
    units = sorted({u for u, _, _ in rows})
    return {units[g.item - 1]: g for g in golds}


@pytest.mark.parametrize(
    ("method", "function"), [("dawid_skene", crowd.dawid_skene), ("glad", crowd.glad)]
)
def test_model_gold_is_the_crowd_estimate(method: str, function: object) -> None:
    golds = by_unit(SIMPLE, gold.field_golds(field_codes(SIMPLE), method=method))
    expected = function(SIMPLE)  # type: ignore[operator]
    assert {u: g.value for u, g in golds.items()} == SIMPLE_TRUTH
    for unit, g in golds.items():
        assert g.method == method and g.provenance == method
        assert g.confidence == pytest.approx(expected.units[unit].confidence, abs=1e-9)


def test_mace_gold_finds_the_truth() -> None:
    golds = gold.field_golds(
        field_codes(SIMPLE), method=gold.model_gold("mace")
    )  # crowd-kit's defaults: 10 restarts, 50 iterations, seed 0
    assert {u: g.value for u, g in by_unit(SIMPLE, golds).items()} == SIMPLE_TRUTH
    assert all(0 < (g.confidence or 0) <= 1 for g in golds)


def test_majority_by_name_is_todays_gold() -> None:
    codes = field_codes(TOY)
    assert gold.field_golds(codes) == gold.field_golds(codes, method=gold.majority_gold)
    assert all(g.method == "majority" for g in gold.field_golds(codes))


@pytest.mark.parametrize("method", ["majority", "dawid_skene", "mace", "glad"])
def test_an_adjudicated_value_is_gold_whatever_the_model_says(method: str) -> None:
    codes = field_codes(TOY)
    free = by_unit(TOY, gold.field_golds(codes, method=method))
    other = "no" if free["t4"].value == "yes" else "yes"
    adjudicated = {(4, "item", "label"): (other, "checked the source")}
    golds = by_unit(TOY, gold.field_golds(codes, adjudicated, method=method))
    assert (golds["t4"].value, golds["t4"].confidence, golds["t4"].method) == (
        other,
        1.0,
        gold.ADJUDICATED,
    )
    assert golds["t4"].provenance == gold.ADJUDICATED


def test_adjudicated_values_anchor_dawid_skene_only() -> None:
    codes = field_codes(TOY)
    known = {(1, "item", "label"): ("no", "")}  # t1, against the model's "yes"
    free = by_unit(TOY, gold.field_golds(codes, method="dawid_skene"))
    anchored = by_unit(TOY, gold.field_golds(codes, known, method="dawid_skene"))
    # crowd-kit's DS with t1's true label (crowd.dawid_skene with `known`)
    expected = crowd.dawid_skene(TOY, {"t1": "no"})
    for unit in ("t2", "t3", "t4", "t5"):
        assert anchored[unit].value == expected.units[unit].label
        assert anchored[unit].confidence == pytest.approx(expected.units[unit].confidence)
    assert anchored["t2"].confidence != pytest.approx(free["t2"].confidence, abs=1e-6)
    # MACE and GLAD cannot take them: fitted on the answers alone, never an error
    for method in ("mace", "glad"):
        fitted = by_unit(TOY, gold.field_golds(codes, known, method=method))
        alone = by_unit(TOY, gold.field_golds(codes, method=method))
        assert [fitted[u].confidence for u in ("t2", "t3", "t4", "t5")] == [
            alone[u].confidence for u in ("t2", "t3", "t4", "t5")
        ]


def test_units_with_the_same_answers_share_the_posterior_unless_adjudicated() -> None:
    rows = SIMPLE + [("zz1", a, label) for _, a, label in SIMPLE if _ == "eec"]
    codes = field_codes(rows)
    golds = by_unit(rows, gold.field_golds(codes, method="dawid_skene"))
    assert (golds["zz1"].value, golds["zz1"].confidence) == (
        golds["eec"].value,
        golds["eec"].confidence,
    )
    # the first unit of the row adjudicated: its twin still gets the model's posterior
    unit = sorted({u for u, _, _ in rows}).index("eec") + 1
    adjudicated = {(unit, "item", "label"): ("chicken", "")}
    golds = by_unit(rows, gold.field_golds(codes, adjudicated, method="dawid_skene"))
    assert golds["eec"].value == "chicken"
    assert golds["zz1"].value == "goose" and golds["zz1"].method == "dawid_skene"


def test_a_bad_method_name_is_refused_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="majority, dawid_skene, mace, glad"):
        gold.field_golds(field_codes(TOY), method="wisdom")


def test_the_project_choices_are_the_gold_methods() -> None:
    field = Project._meta.get_field("gold_method")
    assert tuple(value for value, _ in field.choices) == gold.METHODS  # type: ignore[union-attr]
    assert field.default == gold.METHOD_MAJORITY


def test_check_items_anchor_dawid_skene(
    alpha: Project, alpha_verification: list, users: dict
) -> None:
    """bob answers the known-answer item like its reference, carol does not; on the real
    item they disagree: majority has a tie (VeriScore's rule), Dawid-Skene anchored by the
    check believes bob."""
    from annotation.hiring.models import CHECK, QualityItem
    from annotation.models import Assignment

    check, real = alpha_verification
    QualityItem.objects.create(item=check, role=CHECK, reference={"item.label": "supported"})
    for user, on_check, on_real in (
        (users["bob"], "supported", "supported"),
        (users["carol"], "contradicted", "contradicted"),
    ):
        for item, value in ((check, on_check), (real, on_real)):
            Assignment.objects.get(item=item, annotator=user).submit(
                {("item", "label"): value}, guideline_version=1
            )
    label = {(g.item, g.field): g for g in gold.gold_values(alpha)}[(real.pk, "label")]
    assert (label.value, label.provenance, label.method) == (
        "inconclusive-not-enough",
        gold.TIE_RULE,
        "majority",
    )
    alpha.gold_method = "dawid_skene"
    alpha.save()
    label = {(g.item, g.field): g for g in gold.gold_values(alpha)}[(real.pk, "label")]
    assert (label.value, label.method) == ("supported", "dawid_skene")
    assert label.confidence is not None and label.confidence > 0.5
    # MACE cannot take the check: fitted on the answers alone, never an error
    label = {(g.item, g.field): g for g in gold.gold_values(alpha, method="mace")}[
        (real.pk, "label")
    ]
    assert label.method == "mace"
