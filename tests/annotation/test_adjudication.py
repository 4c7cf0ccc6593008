from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.gold import ADJUDICATED, MAJORITY, TIE, TIE_RULE, UNANIMOUS, gold_values
from annotation.models import Adjudication, Assignment, Item, Membership, Project
from tests.conftest import SYSTEM_A, SYSTEM_B


def answer(user: User, item: Item, values: dict[tuple[str, str], str]) -> None:
    Assignment.objects.get(item=item, annotator=user).submit(values, guideline_version=1)


@pytest.fixture
def third(alpha: Project, users: dict[str, User]) -> User:
    """dave joins alpha as a third annotator of the first verification item."""
    alpha.add_member(users["dave"], Membership.ANNOTATOR)
    return users["dave"]


def test_gold_provenance(
    alpha: Project, alpha_verification: list[Item], users: dict[str, User], third: User
) -> None:
    first, second = alpha_verification
    Assignment.objects.create(item=first, annotator=third)
    bob, carol = users["bob"], users["carol"]
    answer(bob, first, {("item", "label"): "supported", ("evidence:1", "stance"): "supports"})
    answer(carol, first, {("item", "label"): "supported", ("evidence:1", "stance"): "supports"})
    answer(third, first, {("item", "label"): "contradicted", ("evidence:1", "stance"): "supports"})
    answer(bob, second, {("item", "label"): "supported", ("evidence:1", "stance"): "supports"})
    answer(
        carol, second, {("item", "label"): "contradicted", ("evidence:1", "stance"): "contradicts"}
    )
    golds = {(g.item, g.unit, g.field): g for g in gold_values(alpha)}
    assert (
        golds[(first.pk, "item", "label")].value,
        golds[(first.pk, "item", "label")].provenance,
    ) == ("supported", MAJORITY)
    assert golds[(first.pk, "evidence:1", "stance")].provenance == UNANIMOUS
    # VeriScore's rule: a tie on the claim label is inconclusive ...
    tie = golds[(second.pk, "item", "label")]
    assert (tie.value, tie.provenance) == ("inconclusive-not-enough", TIE_RULE)
    # ... other ties have no gold until a researcher decides
    assert (
        golds[(second.pk, "evidence:1", "stance")].value,
        golds[(second.pk, "evidence:1", "stance")].provenance,
    ) == (None, TIE)
    Adjudication.objects.create(
        item=second,
        unit="item",
        field="label",
        value="contradicted",
        note="Result 1 is about another person.",
    )
    adjudicated = {(g.item, g.unit, g.field): g for g in gold_values(alpha)}[
        (second.pk, "item", "label")
    ]
    assert (adjudicated.value, adjudicated.provenance, adjudicated.note) == (
        "contradicted",
        ADJUDICATED,
        "Result 1 is about another person.",
    )


def test_comparison_gold_is_about_the_side_not_the_position(
    alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    item = alpha_items[0]
    bob_a = Assignment.objects.get(item=item, annotator=users["bob"])
    carol_a = Assignment.objects.get(item=item, annotator=users["carol"])
    # both prefer the list of system A, whichever position it had on their screen
    for a in (bob_a, carol_a):
        position = "2" if a.swapped else "1"
        a.submit({("item", "choice"): position, ("item", "hard"): "no"}, guideline_version=1)
    gold = {(g.unit, g.field): g for g in gold_values(alpha) if g.item == item.pk}[
        ("item", "choice")
    ]
    assert (gold.value, gold.provenance) == ("a", UNANIMOUS)


@pytest.fixture
def disputed(
    alpha: Project, alpha_verification: list[Item], alpha_items: list[Item], users: dict[str, User]
) -> list[Item]:
    first, second = alpha_verification
    answer(users["bob"], first, {("item", "label"): "supported"})
    answer(users["carol"], first, {("item", "label"): "contradicted"})
    answer(users["bob"], second, {("item", "label"): "supported"})
    answer(users["carol"], second, {("item", "label"): "supported"})
    comparison = alpha_items[0]
    for user, choice in ((users["bob"], "1"), (users["carol"], "1")):
        Assignment.objects.get(item=comparison, annotator=user).submit(
            {
                ("item", "choice"): choice,
                ("item", "justification"): "Because list one is more complete.",
            },
            guideline_version=1,
        )
    return [first, second, comparison]


def test_the_page_lists_disagreements_hardest_first_under_pseudonyms(
    client: Client, alpha: Project, users: dict[str, User], disputed: list[Item]
) -> None:
    client.force_login(users["alice"])
    body = client.get(reverse("adjudication", args=[alpha.pk])).content.decode()
    first, second, comparison = disputed
    assert f"unit-{first.pk}-item-label" in body
    assert f"unit-{second.pk}-item-label" not in body  # everyone agreed
    assert "bob" not in body and "carol" not in body
    assert "A1" in body and "A2" in body
    # the comparison choices differ in side only when the two saw different orders
    swapped = {a.swapped for a in Assignment.objects.filter(item=comparison)}
    assert (f"unit-{comparison.pk}-item-choice" in body) == (len(swapped) == 2)
    assert SYSTEM_A not in body and SYSTEM_B not in body
    revealed = client.get(reverse("adjudication", args=[alpha.pk]) + "?reveal=1").content.decode()
    if len(swapped) == 2:
        assert SYSTEM_A in revealed


def test_the_researcher_sets_the_gold_value(
    client: Client, alpha: Project, users: dict[str, User], disputed: list[Item]
) -> None:
    client.force_login(users["alice"])
    first = disputed[0]
    url = reverse("adjudication", args=[alpha.pk])
    client.post(url, {"item": first.pk, "unit": "item", "field": "label", "value": "maybe"})
    assert not Adjudication.objects.exists()
    client.post(
        url,
        {
            "item": first.pk,
            "unit": "item",
            "field": "label",
            "value": "contradicted",
            "note": "Result 2 says 1901.",
        },
    )
    adj = Adjudication.objects.get()
    assert (adj.value, adj.note, adj.by) == ("contradicted", "Result 2 says 1901.", users["alice"])
    client.post(url, {"item": first.pk, "unit": "item", "field": "label", "value": "supported"})
    assert Adjudication.objects.get().value == "supported"
    rows = list(
        csv.DictReader(
            io.StringIO(
                client.get(reverse("project_export", args=[alpha.pk, "csv"])).content.decode()
            )
        )
    )
    labels = [r for r in rows if r["item"] == str(first.pk) and r["field"] == "label"]
    assert {(r["gold"], r["gold_provenance"]) for r in labels} == {("supported", ADJUDICATED)}
    agreed = [r for r in rows if r["item"] == str(disputed[1].pk) and r["field"] == "label"]
    assert {(r["gold"], r["gold_provenance"]) for r in agreed} == {("supported", UNANIMOUS)}


@pytest.mark.parametrize("who", ["bob", "dave", "erin"])
def test_only_the_projects_researchers_adjudicate(
    client: Client,
    alpha: Project,
    beta: Project,
    users: dict[str, User],
    disputed: list[Item],
    who: str,
) -> None:
    client.force_login(users[who])
    url = reverse("adjudication", args=[alpha.pk])
    assert client.get(url).status_code == 404
    assert (
        client.post(
            url, {"item": disputed[0].pk, "unit": "item", "field": "label", "value": "supported"}
        ).status_code
        == 404
    )
    assert not Adjudication.objects.exists()


def test_anonymous_users_are_sent_to_log_in(client: Client, alpha: Project) -> None:
    response = client.get(reverse("adjudication", args=[alpha.pk]))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
