"""Issue 38 (low): answer text had no length limit (a 10 MB justification made the
adjudication page 10.2 MB). The one answer operation refuses a value longer than the
project's `answer_max_chars` (10,000 unless set), so the page, the API and the Label
Studio sync all get it, for drafts and submissions alike."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Answer, Assignment, Item, Membership
from annotation.operations import Action, Result, answer
from tests.annotation.api_helpers import token_client


def text(n: int) -> str:
    """A justification of exactly n characters (whole words, as the form asks)."""
    return ("List 1 covers every fact of the text. " * (n // 10 + 1))[: n - 1] + "."


def _body(text: str) -> dict[str, list[dict[str, str]]]:
    return {
        "answers": [
            {"unit": "item", "field": "choice", "value": "1"},
            {"unit": "item", "field": "hard", "value": "no"},
            {"unit": "item", "field": "justification", "value": text},
        ]
    }


def test_a_justification_over_10000_characters_is_refused(
    alpha_items: list[Item], users: dict[str, User]
) -> None:
    bob = users["bob"]
    first, second = Assignment.objects.filter(annotator=bob).order_by("pk")[:2]
    api = token_client(bob)
    r = api.post(f"/api/assignments/{first.pk}/submit/", _body(text(10_001)), format="json")
    assert r.status_code == 400, r.content
    assert "at most 10,000 characters" in r.content.decode()
    assert not Answer.objects.filter(assignment=first).exists()
    r = api.post(f"/api/assignments/{first.pk}/submit/", _body(text(10_000)), format="json")
    assert r.status_code in (200, 201), r.content
    # the page, a draft too
    client = Client()
    client.force_login(bob)
    url = reverse("assignment", args=[second.pk])
    form = {"choice": "1", "hard": "no", "justification": text(10_001)}
    page = client.post(url, {"action": "submit", **form})
    assert "at most 10,000 characters" in page.content.decode()
    second.refresh_from_db()
    assert second.status != Assignment.SUBMITTED
    membership = Membership.objects.get(user=bob, project=second.item.project)
    data = {"choice": "1", "hard": "no", "justification": text(10_001)}
    assert answer(second, membership, data, Action.DRAFT).result == Result.INVALID
    # a project may set another limit
    project = second.item.project
    project.answer_max_chars = 50
    project.save()
    membership = Membership.objects.select_related("project").get(pk=membership.pk)
    data["justification"] = text(51)
    assert answer(second, membership, data).result == Result.INVALID
    data["justification"] = text(50)
    assert answer(second, membership, data).result == Result.SUBMITTED
