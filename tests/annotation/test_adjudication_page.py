"""The adjudication page reads as researchers need it (issue 13, defect 7)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Adjudication, Assignment, Item, Project
from annotation.views import adjudication as adjudication_view


@pytest.fixture
def split(
    alpha: Project, alpha_items: list[Item], alpha_verification: list[Item], users: dict[str, User]
) -> Item:
    """bob and carol prefer the same system's list, each writing about their own order;
    they disagree on a claim label ("inconclusive-not-enough" vs "supported")."""
    comparison = alpha_items[0]
    bob_a = Assignment.objects.get(item=comparison, annotator=users["bob"])
    carol_a = Assignment.objects.get(item=comparison, annotator=users["carol"])
    Assignment.objects.filter(pk=bob_a.pk).update(swapped=False)
    Assignment.objects.filter(pk=carol_a.pk).update(swapped=True)
    bob_a.refresh_from_db()
    carol_a.refresh_from_db()
    bob_a.submit(
        {
            ("item", "choice"): "1",
            ("item", "hard"): "no",
            ("item", "justification"): "List 1 covers more.",
        },
        guideline_version=1,
    )
    carol_a.submit(
        {
            ("item", "choice"): "1",
            ("item", "hard"): "yes",
            ("item", "justification"): "List 1 covers more.",
        },
        guideline_version=1,
    )
    v = alpha_verification[0]
    Assignment.objects.get(item=v, annotator=users["bob"]).submit(
        {("item", "label"): "inconclusive-not-enough"}, guideline_version=1
    )
    Assignment.objects.get(item=v, annotator=users["carol"]).submit(
        {("item", "label"): "supported"}, guideline_version=1
    )
    return comparison


def test_answers_read_as_list_a_b_with_each_notes_order_and_labels(
    client: Client, alpha: Project, users: dict[str, User], split: Item
) -> None:
    client.force_login(users["alice"])
    body = client.get(reverse("adjudication", args=[alpha.pk])).content.decode()
    assert "<td>List A</td>" in body and "<td>List B</td>" in body
    assert "<td>a</td>" not in body and "<td>b</td>" not in body
    assert "(saw List A as List 1, List B as List 2)</span> List 1 covers more." in body
    assert "(saw List B as List 1, List A as List 2)</span> List 1 covers more." in body
    assert "Inconclusive (not enough information)" in body
    assert "<td>inconclusive-not-enough</td>" not in body
    # no gold yet (a tie on "choice"): nothing preselected
    assert '<option value="" selected>choose…</option>' in body


def test_filters_by_field_and_pages(
    client: Client,
    alpha: Project,
    users: dict[str, User],
    split: Item,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client.force_login(users["alice"])
    url = reverse("adjudication", args=[alpha.pk])
    body = client.get(url + "?field=hard").content.decode()
    assert f"unit-{split.pk}-item-hard" in body and f"unit-{split.pk}-item-choice" not in body
    monkeypatch.setattr(adjudication_view, "PER_PAGE", 1)
    first = client.get(url).content.decode()
    assert "Page 1 of 3" in first and "page=2" in first
    third = client.get(url + "?page=3").content.decode()
    assert (
        "Page 3 of 3" in third
        and first.count('class="dispute"') == third.count('class="dispute"') == 1
    )


def test_setting_gold_with_htmx_answers_the_unit_only(
    client: Client, alpha: Project, users: dict[str, User], split: Item
) -> None:
    client.force_login(users["alice"])
    url = reverse("adjudication", args=[alpha.pk])
    response = client.post(
        url,
        {"item": split.pk, "unit": "item", "field": "choice", "value": "b"},
        HTTP_HX_REQUEST="true",
    )
    body = response.content.decode()
    assert body.lstrip().startswith(f'<section class="dispute" id="unit-{split.pk}-item-choice"')
    assert "Gold set." in body and "<strong>List B</strong>" in body
    assert Adjudication.objects.get(item=split, field="choice").value == "b"
    refused = client.post(
        url,
        {"item": split.pk, "unit": "item", "field": "choice", "value": ""},
        HTTP_HX_REQUEST="true",
    )
    assert "Choose a gold value" in refused.content.decode()
    assert Adjudication.objects.get(item=split, field="choice").value == "b"


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_setting_gold_keeps_the_place_on_the_page(
    page, alpha: Project, users: dict[str, User], split: Item
) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from tests.browser import login

    login(page, "alice")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/p/{alpha.pk}/adjudication/")
    page.wait_for_load_state("load")
    section = f"#unit-{split.pk}-item-hard"
    page.locator(f"{section} select[name=value]").select_option("yes")
    page.locator(f"{section} button").scroll_into_view_if_needed()
    before = page.evaluate("window.scrollY")
    assert before > 0
    page.locator(f"{section} button").press("Enter")
    page.wait_for_selector(f"{section} [role=status]")
    assert abs(page.evaluate("window.scrollY") - before) < 50  # not back at the top
    assert page.url.endswith("/adjudication/")


def test_a_project_without_disagreements(
    client: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    client.force_login(users["alice"])
    response = client.get(reverse("adjudication", args=[alpha.pk]))
    assert response.status_code == 200 and "No disagreements" in response.content.decode()


def test_an_atomic_fact_is_adjudicated_with_its_response_sentence_source_and_labels(
    client: Client, demo: Project
) -> None:
    """Issue 29: the page showed only the fact. On the demo's FActScore biographies."""
    from annotation.kinds.atomic import sentence_pieces

    item = demo.items.filter(kind=Item.ATOMIC).order_by("pk").first()
    assert item is not None and item.list_a is not None
    fact = item.list_a.claims.order_by("position").first()
    assert fact is not None and fact.sentence
    first, second = demo.annotators()[:2]
    for user, label in ((first, "supported"), (second, "irrelevant")):
        a, _ = Assignment.objects.get_or_create(item=item, annotator=user)
        a.save_draft({(f"fact:{fact.position}", "label"): label}, guideline_version=1)
        Assignment.objects.filter(pk=a.pk).update(status=Assignment.SUBMITTED)
    imported = list(fact.verdicts.values_list("system__name", "label"))
    assert imported  # FActScore's own S / NS / IR for the fact
    client.force_login(demo.created_by)
    body = client.get(reverse("adjudication", args=[demo.pk]), {"kind": Item.ATOMIC}).content
    text = body.decode()
    assert fact.text in text
    assert f"<mark>{fact.sentence}</mark>" in text.replace("&#x27;", "'").replace("&quot;", '"')
    assert item.document.response.split("\n")[0][:60] in text.replace("&#x27;", "'")
    for system, label in imported:
        assert f"{system}: <strong>{label}</strong>" in text
    assert f"None was given (topic: {item.document.metadata['topic']})." in text
    # the page's sentence marks: found where it is, in order, the text kept whole
    pieces, found = sentence_pieces(item.document.response, [fact.sentence])
    assert "".join(p["text"] for p in pieces) == item.document.response
    assert found[fact.sentence.strip()] == 1
