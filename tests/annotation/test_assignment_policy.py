from __future__ import annotations

from collections import Counter

import pytest

from annotation.models import Assignment, Item, Project, assign, assignment_plan

ITEMS = list(range(100, 200))
PEOPLE = [1, 2, 3, 4]


def loads(plan: dict[int, list[int]]) -> Counter[int]:
    return Counter(p for people in plan.values() for p in people)


def test_overlap_items_get_exactly_k_annotators_and_the_rest_one() -> None:
    plan = assignment_plan(ITEMS, PEOPLE, k=3, fraction=0.2, seed=7)
    sizes = Counter(len(people) for people in plan.values())
    assert sizes == {3: 20, 1: 80}
    assert all(len(set(people)) == len(people) for people in plan.values())
    assert sorted(plan) == ITEMS


def test_the_load_is_balanced() -> None:
    plan = assignment_plan(ITEMS, PEOPLE, k=3, fraction=0.2, seed=7)
    total = 20 * 3 + 80
    assert sum(loads(plan).values()) == total
    assert max(loads(plan).values()) - min(loads(plan).values()) <= 1


def test_it_is_deterministic_for_a_seed_and_varies_with_it() -> None:
    one = assignment_plan(ITEMS, PEOPLE, k=2, fraction=0.3, seed=1)
    assert one == assignment_plan(
        list(reversed(ITEMS)), list(reversed(PEOPLE)), k=2, fraction=0.3, seed=1
    )
    overlap = {i for i, p in one.items() if len(p) == 2}
    other = {
        i
        for i, p in assignment_plan(ITEMS, PEOPLE, k=2, fraction=0.3, seed=2).items()
        if len(p) == 2
    }
    assert overlap != other


def test_the_papers_study_is_everyone_on_everything() -> None:
    plan = assignment_plan(ITEMS, PEOPLE, k=len(PEOPLE), fraction=1.0, seed=0)
    assert all(people == PEOPLE for people in plan.values())


def test_no_overlap_gives_every_item_to_one_person() -> None:
    plan = assignment_plan(ITEMS, PEOPLE, k=2, fraction=0.0, seed=0)
    assert all(len(p) == 1 for p in plan.values())
    assert set(loads(plan).values()) == {25}


@pytest.mark.parametrize(
    ("k", "fraction", "message"),
    [
        (0, 0.5, "k must be between 1 and 4"),
        (5, 0.5, "k must be between 1 and 4"),
        (2, 1.5, "between 0 and 1"),
    ],
)
def test_bad_policies_are_refused(k: int, fraction: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        assignment_plan(ITEMS, PEOPLE, k=k, fraction=fraction, seed=0)


def test_assign_creates_rows_once_and_randomises_list_order(
    alpha_items: list[Item], alpha: Project
) -> None:
    rows = Assignment.objects.in_project(alpha)
    assert rows.count() == 8  # 4 items x bob and carol
    assert assign(alpha_items, project=alpha, k=2, fraction=1.0, seed=1) == 0
    assert rows.count() == 8


def test_list_order_is_random_per_assignment(alpha: Project) -> None:
    from annotation.models import ClaimList, Document, System

    a = System.objects.create(project=alpha, name="s1")
    b = System.objects.create(project=alpha, name="s2")
    items = []
    for i in range(60):
        doc = Document.objects.create(project=alpha, external_id=f"o{i}", response="r")
        items.append(
            Item.objects.create(
                project=alpha,
                kind=Item.COMPARISON,
                document=doc,
                list_a=ClaimList.objects.create(document=doc, system=a),
                list_b=ClaimList.objects.create(document=doc, system=b),
            )
        )
    assign(items, project=alpha, k=2, fraction=1.0, seed=3)
    swapped = Counter(Assignment.objects.filter(item__in=items).values_list("swapped", flat=True))
    assert swapped[True] > 30 and swapped[False] > 30  # 120 fair coin flips
