"""The exports that carry gold say by which method and how sure (issue 39): the long
answer table's `gold_method` and `gold_confidence` columns (page and API), and the gold
API's `method` and `confidence`; annotators get none of it."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from annotation.models import Adjudication, Item, Project
from tests.annotation.api_helpers import token_client
from tests.annotation.test_crowd_settings import answered


def test_the_long_export_names_the_method_and_its_confidence(
    alpha: Project, alpha_verification: list[Item], users: dict[str, User]
) -> None:
    answered(alpha_verification, users)
    first, second = alpha_verification
    page = Client()
    page.force_login(users["alice"])
    url = reverse("project_export", args=[alpha.pk, "csv"])
    rows = list(csv.DictReader(io.StringIO(page.get(url).content.decode())))
    labels = {(int(r["item"]), r["annotator"]): r for r in rows if r["field"] == "label"}
    assert {r["gold_method"] for r in labels.values()} == {"majority"}
    agreed = [r for (item, _), r in labels.items() if item == second.pk]
    assert {(r["gold"], r["gold_confidence"]) for r in agreed} == {("supported", "1.0")}
    tied = [r for (item, _), r in labels.items() if item == first.pk]
    # VeriScore's tie rule: inconclusive, with the share of answers that gave it (none)
    assert {(r["gold"], r["gold_confidence"]) for r in tied} == {("inconclusive-not-enough", "0.0")}
    alpha.gold_method = "dawid_skene"
    alpha.save()
    Adjudication.objects.create(item=first, unit="item", field="label", value="contradicted")
    rows = token_client(users["alice"]).get(f"/api/projects/{alpha.pk}/answers/").json()["results"]
    labels = {r["item"]: r for r in rows if r["field"] == "label"}
    assert (labels[first.pk]["gold_method"], labels[first.pk]["gold_confidence"]) == (
        "adjudicated",
        1.0,
    )
    assert labels[second.pk]["gold_method"] == "dawid_skene"
    assert 0.5 < labels[second.pk]["gold_confidence"] <= 1.0
    golds = token_client(users["alice"]).get(f"/api/projects/{alpha.pk}/gold/").json()["results"]
    by_item = {g["item"]: g for g in golds if g["field"] == "label"}
    assert by_item[first.pk]["method"] == "adjudicated" and by_item[first.pk]["confidence"] == 1.0
    assert by_item[second.pk]["method"] == "dawid_skene"


@pytest.mark.parametrize("who", ["bob", "dave"])
def test_annotators_get_no_gold_nor_its_method(
    alpha: Project, alpha_verification: list[Item], users: dict[str, User], who: str
) -> None:
    answered(alpha_verification, users)
    page = Client()
    page.force_login(users[who])
    assert page.get(reverse("project_export", args=[alpha.pk, "csv"])).status_code in (403, 404)
    api = token_client(users[who])
    assert api.get(f"/api/projects/{alpha.pk}/gold/").status_code in (403, 404)
    assert api.get(f"/api/projects/{alpha.pk}/answers/").status_code in (403, 404)
