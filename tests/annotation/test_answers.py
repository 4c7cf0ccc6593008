"""The columnar answer layer (answers.read_answers) and the one place gold is decided
(gold.field_golds with the project's method)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from annotation import gold, kinds, reports
from annotation.answers import Answers, FieldCodes, FieldKey, read_answers
from annotation.gold import Gold, GoldColumn, field_golds, gold_values, label_rows
from annotation.hiring.models import QualityItem, regular
from annotation.kinds import unit_type
from annotation.models import Adjudication, Answer, Assignment, Document, Item, Project


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


# --- read_answers against its plain reading, on random projects ---------------------

KINDS = [spec.name for spec in kinds.all_specs()]
# every kind's categorical fields (each one a field the other kinds do not compare; a
# segment's error type is asked only where `correct` is "false"), and a free-text one
FIELDS = sorted({f for spec in kinds.all_specs() for f in spec.categorical()}) + ["justification"]
UNITS = ["item", "evidence:1", "evidence:3", "segment:0"]
VALUES = ["1", "2", "true", "false", "a"]
ASSIGNMENT = st.tuples(
    st.booleans(),  # submitted (else pending)
    st.booleans(),  # swapped
    st.dictionaries(st.tuples(st.sampled_from(UNITS), st.sampled_from(FIELDS)),
                    st.sampled_from(VALUES), max_size=6),
)  # fmt: skip
ITEM = st.tuples(
    st.sampled_from(KINDS),
    st.sampled_from(["Biography", "ELI5"]),  # its document's domain
    st.booleans(),  # a known-answer check (never counts)
    st.dictionaries(st.integers(0, 3), ASSIGNMENT, max_size=4),  # annotator -> assignment
)
PROJECT = st.lists(ITEM, max_size=6)
MIXED = [
    ("comparison", "ELI5", False, {
        0: (True, True, {("item", "choice"): "1", ("item", "hard"): "2"}),  # swapped: b
        1: (True, False, {("item", "choice"): "1", ("item", "label"): "a"}),
    }),
    ("verification", "Biography", False, {
        0: (True, False, {("evidence:1", "stance"): "a", ("evidence:3", "stance"): "1"}),
        2: (True, True, {("evidence:3", "stance"): "1", ("item", "label"): "true"}),
    }),
    ("segment", "ELI5", False, {
        1: (True, False, {("segment:0", "correct"): "false", ("segment:0", "error_type"): "a"}),
        3: (True, False, {("segment:0", "correct"): "true", ("item", "choice"): "2"}),
    }),
]  # fmt: skip


def _build(project: Project, people: list[User], data: list[Any]) -> None:
    for n, (kind, domain, check, assignments) in enumerate(data):
        document = Document.objects.create(
            project=project, external_id=f"d{n}", domain=domain, response="Text."
        )
        item = Item.objects.create(project=project, kind=kind, document=document)
        if check:
            QualityItem.objects.create(item=item, role=QualityItem.ROLES[1][0])
        for person, (submitted, swapped, answers) in assignments.items():
            status = Assignment.SUBMITTED if submitted else Assignment.PENDING
            assignment = Assignment.objects.create(
                item=item, annotator=people[person], status=status, swapped=swapped
            )
            Answer.objects.bulk_create(
                Answer(assignment=assignment, unit=unit, field=fld, value=value)
                for (unit, fld), value in answers.items()
            )


def _field_codes(
    key: FieldKey, units: dict[tuple[int, str], dict[int, tuple[str, str]]],
    values: list[str], raws: list[str],
) -> FieldCodes:  # fmt: skip
    annotators = sorted({a for answers in units.values() for a in answers})

    def matrix(which: int, names: list[str]) -> Any:
        return np.array(
            [
                [names.index(answers[a][which]) if a in answers else -1 for a in annotators]
                for answers in units.values()
            ],
            dtype=np.int64,
        ).reshape(len(units), len(annotators))

    items = np.array([item for item, _ in units], dtype=np.int64)
    names = tuple(unit for _, unit in units)
    return FieldCodes(
        *key, items, names, np.array(annotators, dtype=np.int64),
        tuple(values), matrix(0, values), tuple(raws), matrix(1, raws),
    )  # fmt: skip


def plain_answers(project: Project, kind: str | None = None, where: Q | None = None) -> Answers:
    """read_answers as plainly as it can be written: the answers through the ORM, sorted
    in Python by (item, unit, field, annotator), and laid out one at a time."""
    items = Item.objects.filter(regular("pk"), project=project).select_related("document")
    info = {i.pk: (i.kind, i.document.domain) for i in items if kind in (None, i.kind)}
    compared = {spec.name: spec.categorical(project) for spec in kinds.all_specs()}
    asked = {f for fields in compared.values() for f in fields}  # by some kind
    submitted = Assignment.objects.filter(where or Q(), status=Assignment.SUBMITTED)
    rows = sorted(
        (a.item_id, answer.unit, answer.field, a.annotator_id, a.swapped, answer.value)
        for a in submitted.filter(item__in=list(info)).prefetch_related("answers")
        for answer in a.answers.all()
        if answer.field in asked
    )
    domains: dict[int, str] = {}
    values: dict[tuple[str, str], tuple[dict[str, None], dict[str, None]]] = {}
    units: dict[FieldKey, dict[tuple[int, str], dict[int, tuple[str, str]]]] = {}
    for item, unit, fld, annotator, swapped, value in rows:
        of_kind, domains[item] = info[item]
        if fld not in compared[of_kind]:
            continue
        comparable = kinds.get(of_kind).comparable(fld, value, swapped)
        seen = values.setdefault((of_kind, fld), ({}, {}))
        seen[0].setdefault(comparable)
        seen[1].setdefault(value)
        key = (of_kind, unit_type(unit), fld)
        units.setdefault(key, {}).setdefault((item, unit), {})[annotator] = (comparable, value)
    return Answers(
        {
            key: _field_codes(key, answers, *map(list, values[key[0], key[2]]))
            for key, answers in units.items()
        },
        domains,
    )


def _assert_same(got: Answers, expected: Answers) -> None:
    assert list(got.domains.items()) == list(expected.domains.items())
    assert list(got.fields) == list(expected.fields)
    for key, codes in expected.fields.items():
        for f in dataclasses.fields(FieldCodes):
            mine, theirs = getattr(got.fields[key], f.name), getattr(codes, f.name)
            if isinstance(theirs, np.ndarray):
                assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, (key, f.name)
                assert (mine == theirs).all(), (key, f.name)
            else:
                assert mine == theirs, (key, f.name)


def test_read_answers_is_the_plain_reading_of_the_answers(users: dict[str, User]) -> None:
    """On random projects (every kind, swapped comparisons, fields a kind does not
    compare, units of several levels, annotators missing on some units, pending
    assignments and known-answer checks left out, empty and one-unit projects), with a
    report's filters and a kind: the same fields in the same order, the same codes
    (numbered as first seen in (item, unit, annotator) order) and domains as the plain
    reading."""
    people = [users[name] for name in ("bob", "carol", "dave", "erin")]
    wheres = [
        None,
        Q(annotator_id__in=[people[0].pk, people[2].pk]),
        Q(swapped=True),
        Q(item__document__domain__in=["ELI5"]),
    ]

    @given(data=PROJECT, where=st.sampled_from(wheres), kind=st.sampled_from([None, *KINDS]))
    @example(data=MIXED, where=None, kind=None)
    @example(data=MIXED, where=wheres[1], kind="verification")
    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(data: list[Any], where: Q | None, kind: str | None) -> None:
        with transaction.atomic():
            project = Project.objects.create(name="random")
            _build(project, people, data)
            _assert_same(read_answers(project), plain_answers(project))
            _assert_same(read_answers(project, kind=kind, where=where),
                         plain_answers(project, kind, where))  # fmt: skip
            transaction.set_rollback(True)

    check()
