"""The queue tells items apart (issue 13, defect 8)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Claim, Item, Project


def test_the_queue_names_each_items_kind_and_a_verification_items_claim(
    client: Client,
    alpha: Project,
    alpha_items: list[Item],
    alpha_verification: list[Item],
    users: dict[str, User],
) -> None:
    first, second = alpha_verification
    # two claims of one response: the response alone cannot tell them apart
    Claim.objects.filter(pk=first.claim_id).update(text="Person 0 was born in Paris.")
    Claim.objects.filter(pk=second.claim_id).update(text="Person 0 died in Rome.")
    for item in alpha_verification:
        item.document.response = "One response with many claims."
        item.document.save()
    client.force_login(users["bob"])
    body = client.get(reverse("queue", args=[alpha.pk])).content.decode()
    assert (
        '<td class="kind">Verification</td>' in body and '<td class="kind">Comparison</td>' in body
    )
    assert "Person 0 was born in Paris." in body and "Person 0 died in Rome." in body


def test_review_on_a_finished_queue_opens_the_first_item(
    client: Client, alpha: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    mine = list(Assignment.objects.filter(annotator=users["bob"]))
    for a in mine:
        a.skip("not today")
    client.force_login(users["bob"])
    body = client.get(reverse("queue", args=[alpha.pk])).content.decode()
    assert f'href="{reverse("assignment", args=[mine[0].pk])}" data-key="Enter">Review' in body
