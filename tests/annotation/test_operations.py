"""The operations every surface shares (annotation/operations.py, the report options form,
the policy rules, the user-scoped querysets): the page, the API and the command line give
the same answer because they call the same code."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from annotation.models import Adjudication, Assignment, Item, Membership, Project
from annotation.operations import AdjudicationError, adjudicate, asked
from annotation.reports.options import MAX_BOOTSTRAP, ReportOptionsForm
from tests.conftest import SYSTEM_A, SYSTEM_B


def api(user: User) -> Client:
    token, _ = Token.objects.get_or_create(user=user)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}")


# --- the assignment policy: one set of rules -------------------------------------------


@pytest.mark.parametrize(
    ("k", "fraction", "message"),
    [("3", "0.5", "k must be between 1 and 2"), ("2", "1.5", "between 0 and 1")],
)
def test_page_api_and_command_refuse_a_bad_policy_alike(
    alpha: Project, users: dict[str, User], k: str, fraction: str, message: str
) -> None:
    systems = {s.name: s.pk for s in alpha.systems.all()}
    data = {"system_a": systems[SYSTEM_A], "system_b": systems[SYSTEM_B]}
    data.update(k=k, fraction=fraction, seed="0")
    page = Client()
    page.force_login(users["alice"])
    response = page.post(reverse("project_items", args=[alpha.pk, "comparison"]), data, follow=True)
    assert message in response.content.decode()
    body = api(users["alice"]).post(
        f"/api/projects/{alpha.pk}/items/comparison/", data, content_type="application/json"
    )
    assert body.status_code == 400 and message in body.json()["message"]
    with pytest.raises(CommandError, match=message):
        args = ["alpha", "comparison", SYSTEM_A, SYSTEM_B, "--k", k, "--fraction", fraction]
        call_command("create_items", *args)
    assert not Item.objects.filter(project=alpha).exists()


# --- adjudication ------------------------------------------------------------------------


def test_adjudication_accepts_only_units_the_item_asks(
    alpha: Project, verification: list[Item], users: dict[str, User]
) -> None:
    item = verification[0]
    assert asked(item) == [("evidence:1", "stance"), ("evidence:2", "stance"), ("item", "label")]
    for unit in ("evidence:3", "segment:1", "anything"):
        with pytest.raises(AdjudicationError, match="evidence:1, evidence:2"):
            adjudicate(item=item, unit=unit, field="stance", value="supports", by=users["alice"])
    client = Client()
    client.force_login(users["alice"])
    url = reverse("adjudication", args=[alpha.pk])
    response = client.post(
        url, {"item": item.pk, "unit": "evidence:9", "field": "stance", "value": "supports"}
    )
    assert response.status_code == 302 and not Adjudication.objects.exists()
    client.post(
        url, {"item": item.pk, "unit": "evidence:2", "field": "stance", "value": "supports"}
    )
    assert Adjudication.objects.get().unit == "evidence:2"


# --- report options: one form, one bootstrap limit ------------------------------------------


def test_page_api_and_command_share_the_report_options(
    alpha: Project, users: dict[str, User]
) -> None:
    assert ReportOptionsForm({"bootstrap": MAX_BOOTSTRAP}, project=alpha).is_valid()
    too_many = str(MAX_BOOTSTRAP + 1)
    page = Client()
    page.force_login(users["alice"])
    assert page.get(reverse("report", args=[alpha.pk]), {"bootstrap": too_many}).status_code == 404
    response = api(users["alice"]).get(f"/api/projects/{alpha.pk}/report/", {"bootstrap": too_many})
    assert response.status_code == 400 and response.json()["field"] == "bootstrap"
    with pytest.raises(CommandError, match="bootstrap"):
        call_command("agreement_report", "alpha", "--bootstrap", too_many)
    with pytest.raises(CommandError, match="domains"):
        call_command("agreement_report", "alpha", "--domain", "no-such-domain")
    data = api(users["alice"]).get(
        f"/api/projects/{alpha.pk}/report/", {"bootstrap": "0", "seed": "3", "names": "1"}
    )
    assert data.status_code == 200
    assert (data.json()["bootstrap_resamples"], data.json()["seed"]) == (0, 3)
    assert data.json()["annotators"] == "usernames"


# --- user-scoped querysets -----------------------------------------------------------------


def test_querysets_scope_projects_and_assignments_to_the_user(
    alpha: Project, beta: Project, alpha_items: list[Item], users: dict[str, User]
) -> None:
    assert list(Project.objects.for_researcher(users["alice"])) == [alpha]
    assert list(Project.objects.for_researcher(users["bob"])) == []
    assert list(Project.objects.visible_to(users["bob"])) == [alpha]
    assert Assignment.objects.visible_to(users["bob"]).count() == 4
    Membership.objects.filter(project=alpha, user=users["bob"]).delete()
    assert Assignment.objects.visible_to(users["bob"]).count() == 0
    users["dave"].is_superuser = True
    assert set(Project.objects.for_researcher(users["dave"])) == {alpha, beta}
