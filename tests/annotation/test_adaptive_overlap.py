"""Adaptive overlap (issue 30): one more annotator while an item's answers disagree, up to
m; who gets it; items outside the overlap fraction; two annotators finishing at once."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse

from annotation import kinds, reports
from annotation.models import AdaptiveOverlap, Answer, Assignment, Item, Membership, Project

from .api_helpers import token_client

JUSTIFICATION = "The first list covers every fact in the text."


def _choice_for(assignment: Assignment, side: str) -> str:
    """The position ("1" or "2") that means `side` ("a" or "b") on this annotator's page."""
    spec = kinds.get("comparison")
    return next(c for c in ("1", "2") if spec.comparable("choice", c, assignment.swapped) == side)


def _form(choice: str) -> dict[str, str]:
    return {"action": "submit", "choice": choice, "hard": "no", "justification": JUSTIFICATION}


def _post_page(user: User, assignment: Assignment, side: str) -> int:
    client = Client()
    client.force_login(user)
    url = reverse("assignment", args=[assignment.pk])
    return client.post(url, _form(_choice_for(assignment, side))).status_code


@pytest.fixture
def extra(alpha: Project) -> dict[str, User]:
    """Two more annotators of alpha: dave (one open item already) and frank (none)."""
    people = {}
    for name in ("dave", "frank"):
        user = User.objects.filter(username=name).first() or User.objects.create_user(name)
        alpha.add_member(user, Membership.ANNOTATOR).acknowledge()
        people[name] = user
    return people


@pytest.fixture
def policy(alpha: Project) -> AdaptiveOverlap:
    return AdaptiveOverlap.objects.create(
        project=alpha, kind="comparison", field="choice", start=2, up_to=3
    )


def _pair(item: Item) -> tuple[Assignment, Assignment]:
    first, second = item.assignments.order_by("pk")
    return first, second


def test_disagreement_adds_the_least_loaded_annotator_once(
    alpha_items: list[Item], users: dict[str, User], extra: dict[str, User], policy
) -> None:
    item, other = alpha_items[0], alpha_items[1]
    Assignment.objects.create(item=other, annotator=extra["dave"])  # dave has one open
    first, second = _pair(item)
    assert _post_page(first.annotator, first, "a") == 302
    assert item.assignments.count() == 2  # the other has not answered yet
    assert _post_page(second.annotator, second, "b") == 302
    added = item.assignments.exclude(pk__in=[first.pk, second.pk]).get()
    assert added.annotator == extra["frank"]  # least loaded, not dave
    assert added.status == Assignment.PENDING
    # the third answer settles nothing more: up_to is 3
    assert _post_page(extra["frank"], added, "a") == 302
    assert item.assignments.count() == 3


def test_agreement_adds_nobody(
    alpha_items: list[Item], extra: dict[str, User], policy: AdaptiveOverlap
) -> None:
    item = alpha_items[0]
    first, second = _pair(item)
    _post_page(first.annotator, first, "b")
    _post_page(second.annotator, second, "b")
    assert item.assignments.count() == 2


def test_items_outside_the_overlap_fraction_stay_single(
    alpha: Project, alpha_items: list[Item], extra: dict[str, User], policy: AdaptiveOverlap
) -> None:
    item = alpha_items[0]
    first, second = _pair(item)
    second.delete()  # as if the item had been outside the overlap fraction (k = 1)
    _post_page(first.annotator, first, "a")
    assert item.assignments.count() == 1


def test_no_policy_no_change(alpha_items: list[Item], extra: dict[str, User]) -> None:
    item = alpha_items[0]
    first, second = _pair(item)
    _post_page(first.annotator, first, "a")
    _post_page(second.annotator, second, "b")
    assert item.assignments.count() == 2


def test_through_the_api_too(
    alpha_items: list[Item], extra: dict[str, User], policy: AdaptiveOverlap
) -> None:
    item = alpha_items[0]
    for assignment, side in zip(_pair(item), ("a", "b"), strict=True):
        body = {
            "answers": [
                {"unit": "item", "field": "choice", "value": _choice_for(assignment, side)},
                {"unit": "item", "field": "hard", "value": "no"},
                {"unit": "item", "field": "justification", "value": JUSTIFICATION},
            ]
        }
        response = token_client(assignment.annotator).post(
            f"/api/assignments/{assignment.pk}/submit/", body, format="json"
        )
        assert response.status_code in (200, 201), response.content
    added = item.assignments.order_by("pk").last()
    assert added is not None and added.annotator == extra["dave"]  # both have no open item
    # blinding stays: the new annotator's API view names no system
    view = token_client(extra["dave"]).get(f"/api/assignments/{added.pk}/")
    assert view.status_code == 200
    assert "zz-secret" not in view.content.decode()


@pytest.mark.django_db(transaction=True)
def test_two_annotators_finishing_at_once_add_exactly_one(
    alpha_items: list[Item], extra: dict[str, User], policy: AdaptiveOverlap
) -> None:
    item = alpha_items[0]
    first, second = _pair(item)
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def finish(assignment: Assignment, side: str) -> None:
        barrier.wait()
        statuses.append(_post_page(assignment.annotator, assignment, side))
        connection.close()

    threads = [
        threading.Thread(target=finish, args=(first, "a")),
        threading.Thread(target=finish, args=(second, "b")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [302, 302]
    assert item.assignments.count() == 3


def test_the_policy_through_the_api(alpha: Project, users: dict[str, User]) -> None:
    url = f"/api/projects/{alpha.pk}/adaptive-overlap/"
    alice = token_client(users["alice"])
    assert alice.get(url).status_code == 404
    body = {"field": "comparison.choice", "start": 2, "up_to": 4}
    response = alice.put(url, body, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == body
    assert alice.get(url).json() == body
    policy = AdaptiveOverlap.objects.get(project=alpha)
    assert (policy.kind, policy.field, policy.start, policy.up_to) == ("comparison", "choice", 2, 4)
    assert alice.delete(url).status_code == 204
    assert not AdaptiveOverlap.objects.filter(project=alpha).exists()


@pytest.mark.parametrize(
    "body",
    [
        {"field": "comparison.choice", "start": 1, "up_to": 3},  # one answer cannot disagree
        {"field": "comparison.choice", "start": 3, "up_to": 3},
        {"field": "comparison.choice", "start": 2, "up_to": 1000},
        {"field": "comparison.justification", "start": 2, "up_to": 3},  # free text
        {"field": "segment.reason", "start": 2, "up_to": 3},  # free text on each segment
        {"field": "atomic.reason", "start": 2, "up_to": 3},
        {"field": "nothing.at.all", "start": 2, "up_to": 3},
        {"field": "comparison.choice", "start": "two", "up_to": 3},
        {"start": 2, "up_to": 3},
    ],
)
def test_absurd_policies_are_refused(
    alpha: Project, users: dict[str, User], body: dict[str, object]
) -> None:
    url = f"/api/projects/{alpha.pk}/adaptive-overlap/"
    response = token_client(users["alice"]).put(url, body, format="json")
    assert response.status_code == 400
    assert not AdaptiveOverlap.objects.filter(project=alpha).exists()


def test_only_the_projects_researchers_set_it(
    alpha: Project, beta: Project, users: dict[str, User]
) -> None:
    url = f"/api/projects/{alpha.pk}/adaptive-overlap/"
    body = {"field": "comparison.choice", "start": 2, "up_to": 3}
    assert token_client(None).put(url, body, format="json").status_code == 401
    for outsider in ("bob", "erin"):  # an annotator of alpha, a researcher of beta
        assert token_client(users[outsider]).put(url, body, format="json").status_code == 404
        assert token_client(users[outsider]).delete(url).status_code == 404
    assert not AdaptiveOverlap.objects.filter(project=alpha).exists()


def test_end_to_end_the_report_counts_what_it_did(
    alpha: Project, alpha_items: list[Item], users: dict[str, User], extra: dict[str, User]
) -> None:
    """Policy through the API, answers through the pages, the report through the API."""
    alice = token_client(users["alice"])
    body = {"field": "comparison.choice", "start": 2, "up_to": 3}
    url = f"/api/projects/{alpha.pk}/adaptive-overlap/"
    assert alice.put(url, body, format="json").status_code == 200
    for n, item in enumerate(alpha_items):
        first, second = _pair(item)
        _post_page(first.annotator, first, "a")
        _post_page(second.annotator, second, "b" if n == 0 else "a")  # item 0 disagrees
    added = alpha_items[0].assignments.order_by("pk").last()
    assert added is not None
    _post_page(added.annotator, added, "a")
    report = alice.get(f"/api/projects/{alpha.pk}/report/?bootstrap=20").json()
    section = next(s for s in report["sections"] if s["slug"] == "adaptive-overlap")
    summary = next(t for t in section["tables"] if t["name"] == "adaptive-overlap")["rows"][0]
    assert summary["items"] == 4 and summary["items escalated"] == 1
    assert summary["answers"] == 9 and summary["answers at fixed m"] == 12
    assert summary["units with k answers"] == 4
    assert summary["annotator-hours saved"] >= 0  # 3 answers at the median active time
    # first 2 answers: a/a three times, a/b once: p_o 0.75, p_e (7/8)^2 + (1/8)^2
    assert summary["Fleiss' kappa, first k answers"] == pytest.approx(-1 / 7)
    items = next(t for t in section["tables"] if t["name"] == "adaptive-overlap-items")["rows"]
    assert items == [{"item": alpha_items[0].pk, "annotators": 3}]
    page = Client()
    page.force_login(users["alice"])
    html = page.get(reverse("report", args=[alpha.pk]), {"bootstrap": 20}).content.decode()
    assert "Adaptive overlap" in html and "items escalated" in html


def test_an_answer_outside_the_fields_labels_is_left_out_with_a_note(
    alpha: Project, alpha_items: list[Item], extra: dict[str, User], policy: AdaptiveOverlap
) -> None:
    """A stored value the field does not declare (an import, an older form) leaves its unit
    out of the first-k kappa, said in a note, as the agreement section leaves it out; it
    used to make the section fail."""
    for item in alpha_items:
        for assignment in _pair(item):
            assert _post_page(assignment.annotator, assignment, "a") == 302
    odd = _pair(alpha_items[1])[0]
    assert Answer.objects.filter(assignment=odd, field="choice").update(value="3") == 1
    report = reports.build_report(alpha, bootstrap=0)
    section = report.section("adaptive-overlap")
    assert section is not None
    summary = section.tables[0].as_dicts()[0]
    assert summary["items"] == len(alpha_items)
    assert summary["units with k answers"] == len(alpha_items) - 1
    assert any(
        "1 of the first k answers were outside the field's labels" in n for n in section.notes
    )
    agreement = report.section("agreement-comparison-choice")
    assert agreement is not None
    assert "1 answer(s) outside the declared labels were left out." in agreement.notes


def test_a_policy_on_a_field_that_is_not_categorical_reports_no_kappa(
    alpha: Project, alpha_items: list[Item], extra: dict[str, User]
) -> None:
    """The admin takes any field name: a free-text one has no labels to compare, so the
    section has no kappa (it used to fail with a KeyError)."""
    AdaptiveOverlap.objects.create(
        project=alpha, kind="comparison", field="justification", start=2, up_to=3
    )
    for item in alpha_items:
        for assignment in _pair(item):
            assert _post_page(assignment.annotator, assignment, "a") == 302
    section = reports.build_report(alpha, bootstrap=0).section("adaptive-overlap")
    assert section is not None and section.tables
    summary = section.tables[0].as_dicts()[0]
    assert summary["items"] == len(alpha_items) and summary["units with k answers"] == 0
    assert summary["Fleiss' kappa, first k answers"] is None


# --------------------------------------------------------------------------- the page


def test_the_page_sets_and_turns_off_the_policy(alpha: Project, users: dict[str, User]) -> None:
    page = Client()
    page.force_login(users["alice"])
    url = reverse("adaptive_overlap", args=[alpha.pk])
    assert "Now: off." in page.get(url).content.decode()
    data = {"action": "save", "field": "comparison.choice", "start": "2", "up_to": "4"}
    assert page.post(url, data).status_code == 302
    policy = AdaptiveOverlap.objects.get(project=alpha)
    assert (policy.kind, policy.field, policy.start, policy.up_to) == ("comparison", "choice", 2, 4)
    assert "start with 2, up to 4" in page.get(url).content.decode()
    bad = page.post(url, {**data, "start": "5"})  # start above up_to
    assert bad.status_code == 200 and "Up to must be more than the start." in bad.content.decode()
    assert AdaptiveOverlap.objects.get(project=alpha).start == 2
    assert page.post(url, {"action": "off"}).status_code == 302
    assert not AdaptiveOverlap.objects.filter(project=alpha).exists()


def test_the_page_is_the_projects_researchers_only(
    alpha: Project, beta: Project, users: dict[str, User]
) -> None:
    url = reverse("adaptive_overlap", args=[alpha.pk])
    data = {"action": "save", "field": "comparison.choice", "start": "2", "up_to": "3"}
    assert Client().post(url, data).status_code == 302  # to the login page
    for outsider in ("bob", "erin"):
        page = Client()
        page.force_login(users[outsider])
        assert page.get(url).status_code == 404
        assert page.post(url, data).status_code == 404
        assert page.post(url, {"action": "off"}).status_code == 404
    assert not AdaptiveOverlap.objects.filter(project=alpha).exists()


def test_a_paused_or_untrained_hire_does_not_get_the_extra_item(
    alpha: Project, alpha_items: list[Item], extra: dict[str, User], policy: AdaptiveOverlap
) -> None:
    from annotation.hiring import Hire

    Assignment.objects.create(item=alpha_items[1], annotator=extra["dave"])  # dave: one open
    frank = alpha.memberships.get(user=extra["frank"])
    Hire.objects.create(membership=frank, passed_training=True, paused=True)
    item = alpha_items[0]
    first, second = _pair(item)
    _post_page(first.annotator, first, "a")
    _post_page(second.annotator, second, "b")
    assert item.assignments.order_by("pk").last().annotator == extra["dave"]
    Hire.objects.filter(membership=frank).update(paused=False, passed_training=False)
    item = alpha_items[2]
    first, second = _pair(item)
    _post_page(first.annotator, first, "a")
    _post_page(second.annotator, second, "b")
    assert item.assignments.order_by("pk").last().annotator == extra["dave"]


# --------------------------------------------------------------------------- the kinds' rules


def _segment_answers(**changes: str) -> dict[str, str]:
    answers = {
        "action": "submit",
        "correct__segment:0": "true",
        "correct__segment:1": "false",
        "error_type__segment:1": "knowledge error",
        "keep": "keep",
    }
    for position in (0, 1):  # an incorrect segment needs a reason and a link
        answers[f"reason__segment:{position}"] = "It contradicts the source."
        answers[f"links__segment:{position}"] = "https://en.wikipedia.org/wiki/Person_0"
    return answers | changes


def _segments_answered(
    alpha: Project, alpha_segments: list[Item], field: str, first: dict, second: dict
) -> Item:
    AdaptiveOverlap.objects.create(project=alpha, kind="segment", field=field, start=2, up_to=3)
    item = alpha_segments[0]
    for assignment, answers in zip(_pair(item), (first, second), strict=True):
        client = Client()
        client.force_login(assignment.annotator)
        response = client.post(reverse("assignment", args=[assignment.pk]), answers)
        assert response.status_code == 302
    return item


def test_segments_disagree_on_correct_per_segment(
    alpha: Project, alpha_segments: list[Item], extra: dict[str, User]
) -> None:
    """The segment kind's main field is read per segment: one segment judged apart is a
    disagreement, though the item-level field (keep) agrees."""
    other = _segment_answers(
        **{"correct__segment:0": "false", "error_type__segment:0": "irrelevant"}
    )
    item = _segments_answered(alpha, alpha_segments, "correct", _segment_answers(), other)
    assert item.assignments.count() == 3
    # the report's kappa on the first k answers counts the item's segments as units
    section = reports.build_report(alpha, bootstrap=0).section("adaptive-overlap")
    assert section is not None
    summary = section.tables[0].as_dicts()[0]
    assert summary["items escalated"] == 1 and summary["units with k answers"] == 2


def test_segment_error_types_compare_only_where_everyone_said_incorrect(
    alpha: Project, alpha_segments: list[Item], extra: dict[str, User]
) -> None:
    # segment 0: one annotator says incorrect (with a type), the other correct: a
    # disagreement on `correct`, not on the error type; segment 1: the same type
    other = _segment_answers(
        **{"correct__segment:0": "false", "error_type__segment:0": "irrelevant"}
    )
    item = _segments_answered(alpha, alpha_segments, "error_type", _segment_answers(), other)
    assert item.assignments.count() == 2


def test_segment_error_types_that_differ_add_one(
    alpha: Project, alpha_segments: list[Item], extra: dict[str, User]
) -> None:
    other = _segment_answers(**{"error_type__segment:1": "reasoning error"})
    item = _segments_answered(alpha, alpha_segments, "error_type", _segment_answers(), other)
    assert item.assignments.count() == 3


def test_widen_overlap_asks_the_registered_kinds_rule(
    alpha_items: list[Item], extra: dict[str, User], policy: AdaptiveOverlap, monkeypatch
) -> None:
    """The rule comes from the kinds registry: a kind whose rule calls these (agreeing)
    answers a disagreement gets one more annotator; the rule sees them unswapped."""
    spec = kinds.get("comparison")
    seen: list[tuple[str, list[dict[tuple[str, str], str]]]] = []

    def rule(field: str, answers: list[dict[tuple[str, str], str]]) -> bool:
        seen.append((field, answers))
        return True

    monkeypatch.setattr(spec, "disagrees", rule)
    item = alpha_items[0]
    first, second = _pair(item)
    _post_page(first.annotator, first, "a")
    _post_page(second.annotator, second, "a")
    assert item.assignments.count() == 3
    field, answers = seen[-1]
    assert field == "choice"
    assert [a[("item", "choice")] for a in answers] == ["a", "a"]  # whatever the page order


def test_the_main_field_of_each_kind_is_offered_first() -> None:
    from annotation import operations

    fields = [name for name, _ in operations.adaptive_fields()]
    for spec in kinds.all_specs():
        own = [f for f in fields if f.startswith(f"{spec.name}.")]
        assert own[0] == f"{spec.name}.{spec.main_field}"
        assert len(own) == len(spec.agreement)  # unit-level fields too
    assert fields.index("segment.correct") < fields.index("segment.keep")
