"""Issue 38: training drawn per worker from a pool, and the one "careless" definition
(stats.careless) able to pause or screen out."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation import hiring
from annotation.hiring import Invite
from annotation.models import Assignment, Item, Project
from annotation.stats.careless import careless
from tests.annotation.test_hiring import answer, hire_of, invite, join, set_policy

__all__ = ["invite"]  # the fixture


def test_too_fast_is_under_a_third_of_the_projects_median() -> None:
    medians = {"comparison": 90.0}
    assert not careless({"comparison": [31, 30, 40]}, medians, []).careless
    found = careless({"comparison": [10, 29, 12]}, medians, [])
    assert found.fast_kinds == ("comparison",) and "under 33%" in found.reasons[0]
    assert not careless({"comparison": [10]}, {}, []).careless  # no project median yet
    assert careless({"comparison": [10]}, {}, [], min_seconds=15).careless  # the policy's


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["a"] * 9, None),  # fewer than 10 items: nothing to say
        (["a"] * 9 + ["b"], "a"),  # 9 of 10
        (["a"] * 8 + ["b", "b"], None),  # 8 of 10
        (["b", "a", "b"] + ["a"] * 9 + ["b"], "a"),  # a window in the middle
        (["a", "b"] * 10, None),
    ],
)
def test_the_same_label_on_nine_of_ten_consecutive_items(
    labels: list[str], expected: str | None
) -> None:
    assert careless({}, {}, labels).same_label == expected


def test_training_is_drawn_per_worker_from_the_pool(
    alpha: Project, alpha_items: list[Item]
) -> None:
    for item in alpha_items:
        hiring.mark(item, hiring.TRAINING, {"item.choice": "a", "item.hard": "no"}, "A.")
    set_policy(alpha, training_per_person=2)
    invite = Invite.objects.create(project=alpha, items_per_person=0)
    drawn = set()
    for n in range(12):
        hire = hiring.join(invite, {"PROLIFIC_PID": f"w-{n}"})
        mine = frozenset(
            Assignment.objects.filter(annotator=hire.membership.user).values_list(
                "item_id", flat=True
            )
        )
        assert len(mine) == 2 and mine <= {i.pk for i in alpha_items}
        drawn.add(mine)
    assert len(drawn) > 1  # 6 possible pairs; twelve workers all drawing one: (1/6)^11


def test_careless_answering_screens_out_when_the_policy_says_so(
    invite: Invite, alpha_items: list[Item]
) -> None:
    set_policy(
        invite.project, careless_action="screen_out", careless_run=2, careless_same_share=1.0
    )
    invite.items_per_person = 3
    invite.save()
    client = Client()
    join(client, invite, PROLIFIC_PID="w-same")
    hire = hire_of(client)
    mine = list(Assignment.objects.filter(annotator=hire.membership.user).order_by("position"))
    answer(client, mine[0], choice_side="a")  # training, right
    for a in mine[1:3]:  # the same list number twice in a row
        answer(client, a, choice="1")
    hire.refresh_from_db()
    assert hire.paused and hiring.status(hire) == hiring.SCREENED_OUT
    assert not Assignment.objects.filter(annotator=hire.membership.user).open().exists()
