"""The columnar answer layer (answers.read_answers) and the one place gold is decided
(gold.field_golds with the project's method)."""

from __future__ import annotations

import numpy as np
import pytest

from annotation import gold, reports
from annotation.answers import FieldCodes, read_answers
from annotation.gold import Gold, GoldColumn, field_golds, gold_values, label_rows
from annotation.models import Adjudication, Item, Project


def _codes(
    values: tuple[str, ...], matrix: list[list[int]], kind: str = "verification"
) -> FieldCodes:
    n = len(matrix)
    codes = np.array(matrix, dtype=np.int64)
    return FieldCodes(
        kind,
        "claim",
        "label",
        np.arange(1, n + 1, dtype=np.int64),
        ("claim",) * n,
        np.arange(10, 10 + codes.shape[1], dtype=np.int64),
        values,
        codes,
        values,
        codes,
    )


def test_each_field_is_a_units_by_annotators_matrix_of_codes(
    judged_comparisons: list[Item],
) -> None:
    """Per (kind, level, field): one row per unit in (item, unit) order, one column per
    annotator, -1 where no answer; the distinct rows and their counts give the matrix
    back; values are as the kind compares them, raw as stored (a swapped order shows
    list 1 as side b)."""
    project = judged_comparisons[0].project
    answers = read_answers(project)
    choice = answers.fields["comparison", "item", "choice"]
    assert choice.items.tolist() == sorted(i.pk for i in judged_comparisons)
    assert (choice.distinct[choice.row_of] == choice.codes).all()
    assert int(choice.counts.sum()) == len(choice.units)
    assert len({tuple(r) for r in choice.distinct.tolist()}) == len(choice.distinct)
    rows = {(r.item, r.annotator): r for r in label_rows(project) if r.field == "choice"}
    assert len(rows) == 8
    for u, item in enumerate(choice.items.tolist()):
        for j, annotator in enumerate(choice.annotators.tolist()):
            row = rows[item, annotator]
            assert choice.values[choice.codes[u, j]] == row.value
            assert choice.raw_values[choice.raw[u, j]] == row.raw
    assert any(r.value == "b" and r.raw == "1" for r in rows.values())  # swapped
    assert "justification" not in {f for _, _, f in answers.fields}  # not categorical


def test_values_are_numbered_in_item_unit_and_annotator_order(
    judged_comparisons: list[Item],
) -> None:
    """A field's codes number its values as first seen in (item, unit, annotator) order,
    whatever order the database returns a unit's answers in (the query sorts by
    annotator too): the same data gives the same codes on SQLite and PostgreSQL."""
    project = judged_comparisons[0].project
    choice = read_answers(project).fields["comparison", "item", "choice"]
    rows = sorted(
        (r.item, r.unit, r.annotator, r.value) for r in label_rows(project) if r.field == "choice"
    )
    assert list(choice.values) == list(dict.fromkeys(value for *_, value in rows))


def test_a_filter_and_a_kind_narrow_the_answers(judged_comparisons: list[Item]) -> None:
    from django.db.models import Q

    project = judged_comparisons[0].project
    bob = project.annotators().get(username="bob")
    only = read_answers(project, where=Q(annotator=bob))
    for codes in only.fields.values():
        assert codes.annotators.tolist() == [bob.pk]
        assert (codes.codes >= 0).all()
    assert read_answers(project, kind="segment").fields == {}


def test_a_conditional_field_is_compared_where_its_condition_holds(
    alpha: Project, alpha_segments: list[Item]
) -> None:
    """The error type of a segment counts on the units every annotator marked incorrect;
    a unit where one said correct is masked out, with the annotators left unanswered."""
    for n, assignment in enumerate(alpha_segments[0].assignments.order_by("pk")):
        values = {
            ("segment:0", "correct"): "false",
            ("segment:0", "error_type"): "irrelevant",
            ("segment:1", "correct"): ["false", "true"][n],
            ("segment:1", "error_type"): "irrelevant",
        }
        if n == 1:  # said correct: no error type
            del values["segment:1", "error_type"]
        assert assignment.submit(values, guideline_version=1)
    answers = read_answers(alpha)
    error = answers.fields["segment", "segment", "error_type"]
    assert error.units == ("segment:0", "segment:1")
    asked = answers.where(error)
    assert asked.units == ("segment:0",)
    assert (asked.codes >= 0).all() and asked.codes.shape == (1, 2)
    assert answers.where(answers.fields["segment", "segment", "correct"]) is not None


def test_majority_gold_decides_once_per_distinct_row_with_its_vote_share() -> None:
    """Unanimous, majority (confidence 2/3), a tie read by the kind's rule, and a tie
    without one (no gold); units of the same answers share the decision."""
    values = ("supported", "contradicted", "inconclusive-not-enough")
    codes = _codes(values, [[0, 0, 0], [0, 1, 0], [0, 1, -1], [0, 0, 0], [1, 0, 1]])
    golds = field_golds(codes)
    assert [g.value for g in golds] == [
        "supported",
        "supported",
        "inconclusive-not-enough",  # VeriScore's tie rule
        "supported",
        "contradicted",
    ]
    assert [g.provenance for g in golds] == [
        gold.UNANIMOUS,
        gold.MAJORITY,
        gold.TIE_RULE,
        gold.UNANIMOUS,
        gold.MAJORITY,
    ]
    assert [g.confidence for g in golds] == [1.0, 2 / 3, 0.0, 1.0, 2 / 3]
    assert golds[1].votes == {"supported": 2, "contradicted": 1}
    assert golds[0].votes is golds[3].votes  # one decision per distinct row
    tie = field_golds(_codes(("yes", "no"), [[0, 1]], kind="comparison"))
    assert tie[0].value is None and tie[0].provenance == gold.TIE and tie[0].confidence is None


def test_an_adjudication_overrides_the_method_on_its_unit_only() -> None:
    codes = _codes(("supported", "contradicted"), [[0, 1, 0], [0, 1, 0]])
    golds = field_golds(codes, {(2, "claim", "label"): ("contradicted", "checked")})
    assert golds[0] == Gold(
        1, "verification", "claim", "label", "supported", gold.MAJORITY,
        {"supported": 2, "contradicted": 1}, "", 2 / 3,
    )  # fmt: skip
    assert (golds[1].value, golds[1].provenance, golds[1].note, golds[1].confidence) == (
        "contradicted",
        gold.ADJUDICATED,
        "checked",
        1.0,
    )
    assert golds[1].votes == golds[0].votes  # what the annotators said, kept


def test_another_gold_method_plugs_in_at_one_place(
    judged_comparisons: list[Item], verification: list[Item], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A method is a function of a field's codes returning value, confidence and
    provenance per distinct row: gold_values and the report both follow it, and an
    adjudication still wins."""
    calls: list[tuple[str, str, str]] = []

    def first_answer(codes: FieldCodes) -> GoldColumn:
        calls.append((codes.kind, codes.level, codes.field))
        out = GoldColumn([], [], [], [])
        for row in codes.distinct.tolist():
            first = next(c for c in row if c >= 0)
            out.values.append(codes.values[first])
            out.confidences.append(0.5)
            out.provenances.append("first-answer")
            out.votes.append({})
        return out

    project = verification[0].project
    # the one place a method is chosen by name (the project's, a report's option)
    monkeypatch.setattr(gold, "gold_method", lambda *args, **kwargs: first_answer)
    [claim, *_] = [g for g in gold_values(project) if g.field == "label"]
    Adjudication.objects.create(item_id=claim.item, unit=claim.unit, field="label", value="x")
    golds = [g for g in gold_values(project) if g.field == "label"]
    assert {g.provenance for g in golds} == {"first-answer", gold.ADJUDICATED}
    assert {g.confidence for g in golds} == {0.5, 1.0}
    calls.clear()
    report = reports.build_report(project, bootstrap=0, with_charts=False)
    assert ("verification", "item", "label") in calls
    section = report.section("claim-labels")
    assert section is not None and "first-answer" in section.notes[0]


@pytest.mark.parametrize(
    ("units", "annotators", "largest"),
    [(0, 3, 2), (1, 1, 0), (200, 3, 3), (500, 5, 1), (60, 40, 4)],  # the last: > 2**62 keys
)
def test_unique_rows_is_numpys_unique_of_the_rows(
    units: int, annotators: int, largest: int
) -> None:
    """The one-integer-per-row shortcut gives np.unique(axis=0)'s rows, inverse and
    counts (its reference), also where the keys would overflow and it falls back."""
    from annotation.stats.inter_rater import unique_rows

    codes = np.random.default_rng(units).integers(-1, largest + 1, (units, annotators))
    rows, row_of, counts = unique_rows(codes)
    expected, inverse, n = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    assert np.array_equal(rows, expected) and np.array_equal(counts, n)
    assert np.array_equal(row_of, inverse.reshape(-1))
