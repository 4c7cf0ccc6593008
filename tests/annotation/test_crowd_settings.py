"""The researcher chooses the gold method per project (issue 39): the settings page, the
settings API, the report's options and `agreement_report --gold`; majority by default; a
bad name is a clear error listing the choices; only the project's researchers may."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Item, Project
from tests.annotation.api_helpers import token_client

CHOICES = "majority, dawid_skene, mace, glad"


def answered(items: list[Item], users: dict[str, User]) -> None:
    """bob and carol disagree on the first claim label, agree on the second."""
    first, second = items
    for user, value in ((users["bob"], "supported"), (users["carol"], "contradicted")):
        Assignment.objects.get(item=first, annotator=user).submit(
            {("item", "label"): value}, guideline_version=1
        )
        Assignment.objects.get(item=second, annotator=user).submit(
            {("item", "label"): "supported"}, guideline_version=1
        )


def test_the_settings_page_sets_the_gold_method(alpha: Project, users: dict[str, User]) -> None:
    page = Client()
    page.force_login(users["alice"])
    url = reverse("project_settings", args=[alpha.pk])
    shown = page.get(url).content.decode()
    assert 'name="gold_method"' in shown and "Dawid-Skene" in shown and "MACE" in shown
    form = {"name": "alpha", "description": "", "answer_max_chars": "10000"}
    page.post(url, {**form, "gold_method": "mace"})
    alpha.refresh_from_db()
    assert alpha.gold_method == "mace"
    page.post(url, form)  # left out: unchanged
    alpha.refresh_from_db()
    assert alpha.gold_method == "mace"
    refused = page.post(url, {**form, "gold_method": "wisdom"}).content.decode()
    assert "Unknown gold method wisdom; one of " + CHOICES in refused
    alpha.refresh_from_db()
    assert alpha.gold_method == "mace"


def test_the_api_reads_and_sets_the_gold_method(alpha: Project, users: dict[str, User]) -> None:
    api = token_client(users["alice"])
    url = f"/api/projects/{alpha.pk}/settings/"
    assert api.get(url).json()["gold_method"] == "majority"
    r = api.put(url, {"gold_method": "dawid_skene"}, format="json")
    assert r.status_code == 200 and r.json()["gold_method"] == "dawid_skene"
    for bad in ("wisdom", "", 3, None, "MACE"):
        r = api.put(url, {"gold_method": bad}, format="json")
        alpha.refresh_from_db()
        assert alpha.gold_method == "dawid_skene", bad
        if bad == "":
            continue  # an empty name leaves it as it is
        assert r.status_code == 400, (bad, r.content)
    r = api.put(url, {"gold_method": "wisdom"}, format="json")
    assert r.json()["field"] == "gold_method" and CHOICES in r.json()["message"]


@pytest.mark.parametrize("who", ["bob", "dave"])
def test_only_researchers_choose_the_gold_method(
    alpha: Project, users: dict[str, User], who: str
) -> None:
    api = token_client(users[who])
    r = api.put(f"/api/projects/{alpha.pk}/settings/", {"gold_method": "mace"}, format="json")
    assert r.status_code in (403, 404)
    page = Client()
    page.force_login(users[who])
    form = {"name": "alpha", "description": "", "answer_max_chars": "1", "gold_method": "mace"}
    assert page.post(reverse("project_settings", args=[alpha.pk]), form).status_code in (403, 404)
    assert page.get(reverse("report", args=[alpha.pk]) + "?gold=mace").status_code in (403, 404)
    assert api.get(f"/api/projects/{alpha.pk}/report/?gold=mace").status_code in (403, 404)
    alpha.refresh_from_db()
    assert alpha.gold_method == "majority"


def claim_golds(report: dict) -> dict:
    """The verifier table's gold counts are not needed: the claim-labels table counts
    the gold claim labels."""
    tables = {t["name"]: t for s in report["sections"] for t in s["tables"]}
    return {r["label"]: r["count"] for r in tables["claim-labels"]["rows"]}


def test_the_report_option_and_the_command_choose_the_method(
    alpha: Project, alpha_verification: list[Item], users: dict[str, User]
) -> None:
    answered(alpha_verification, users)
    api = token_client(users["alice"])
    url = f"/api/projects/{alpha.pk}/report/"
    r = api.get(url, {"gold": "wisdom"})
    assert r.status_code == 400 and CHOICES in r.json()["message"]
    default = api.get(url, {"bootstrap": 0}).json()
    chosen = api.get(url, {"bootstrap": 0, "gold": "majority"}).json()
    assert claim_golds(default) == claim_golds(chosen)
    page = Client()
    page.force_login(users["alice"])
    shown = page.get(reverse("report", args=[alpha.pk])).content.decode()
    assert 'name="gold"' in shown
    out = io.StringIO()
    call_command(
        "agreement_report",
        "alpha",
        "--gold",
        "dawid_skene",
        "--sensitivity",
        "--bootstrap",
        "0",
        stdout=out,
    )
    # the command fits the models itself: no "computing", every column filled
    sections = {s["slug"]: s for s in json.loads(out.getvalue())["sections"]}
    assert "gold-method" in sections and "gold-computing" not in sections
    [table] = sections["sensitivity"]["tables"]
    assert table["rows"] and all(r["MACE"] is not None for r in table["rows"])
    with pytest.raises(CommandError, match="Unknown gold method wisdom; one of " + CHOICES):
        call_command("agreement_report", "alpha", "--gold", "wisdom", stdout=io.StringIO())
