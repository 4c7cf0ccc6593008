"""The annotator page (issue 39): per annotator by pseudonym, for the project's researchers
only; its tables as CSV and JSON, and the API. An annotator never sees another's labels
or reliability, a hired worker sees nothing of it, researchers of another project get 404."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotation import kinds
from annotation.hiring import Invite
from annotation.models import Assignment, Item, Project
from annotation.reports.annotators import annotator_tables
from tests.annotation.api_helpers import token_client
from tests.annotation.test_hiring import hire_of, invite, join

__all__ = ["invite"]  # the fixture

DRILL = "kind=comparison&field=choice"


def _pseudonym(project: Project, user: User) -> str:
    return project.memberships.get(user=user).pseudonym


def test_tables_per_annotator(
    alpha: Project, judged_comparisons: list[Item], users: dict[str, User]
) -> None:
    summary, kappa, confusion = annotator_tables(alpha)
    bob, carol = _pseudonym(alpha, users["bob"]), _pseudonym(alpha, users["carol"])
    rows = {row["annotator"]: row for row in summary.as_dicts()}
    assert set(rows) == {bob, carol}
    assert rows[bob]["items_done"] == 4 and rows[bob]["median_active_s"] == 30.0
    assert rows[bob]["careless"] == "no"
    assert "comparison:" in str(rows[bob]["mace_competence"])
    # Cohen's kappa against scikit-learn's on the labels as the kind compares them
    spec = kinds.get("comparison")
    labels: dict[str, list[str]] = {bob: [], carol: []}
    for item in sorted(judged_comparisons, key=lambda i: i.pk):
        for user in ("bob", "carol"):
            a = Assignment.objects.get(item=item, annotator=users[user])
            value = a.answers.get(unit="item", field="choice").value
            labels[_pseudonym(alpha, users[user])].append(
                spec.comparable("choice", value, a.swapped)
            )
    (row,) = kappa.as_dicts()
    assert (row["n_units"], row["kind"]) == (4, "comparison")
    first, second = sorted([bob, carol])
    assert row["kappa"] == pytest.approx(cohen_kappa_score(labels[first], labels[second]))
    assert row["disagreements_url"] == (
        reverse("disagreements", args=[alpha.pk])
        + f"?kind=comparison&field=choice&a={row['annotator_a']}&b={row['annotator_b']}"
    )
    # Dawid-Skene: one row per (annotator, true, given); each true label's row sums to 1
    sums: dict[tuple[str, str], float] = {}
    for r in confusion.as_dicts():
        key = (str(r["annotator"]), str(r["true_label"]))
        sums[key] = sums.get(key, 0.0) + float(r["probability"] or 0)
    assert sums and all(s == pytest.approx(1.0) for s in sums.values())


def test_page_exports_and_api_for_the_researcher(
    alpha: Project, judged_comparisons: list[Item], users: dict[str, User]
) -> None:
    client = Client()
    client.force_login(users["alice"])
    page = client.get(reverse("annotators", args=[alpha.pk]))
    assert page.status_code == 200
    assert _pseudonym(alpha, users["bob"]) in page.content.decode()
    drill = reverse("disagreements", args=[alpha.pk]) + "?kind=comparison&amp;field=choice"
    assert f'<a href="{drill}' in page.content.decode()  # each pair: one click to its units
    assert "bob" not in page.content.decode().replace("bob-", "")  # pseudonyms, not names
    csv = client.get(reverse("annotators_table", args=[alpha.pk, "annotators", "csv"]))
    assert csv.status_code == 200 and csv.content.decode().startswith("annotator,items_done")
    data = json.loads(
        client.get(reverse("annotators_table", args=[alpha.pk, "annotator_kappa", "json"])).content
    )
    assert data["rows"][0]["n_units"] == 4
    assert (
        client.get(reverse("annotators_table", args=[alpha.pk, "nope", "csv"])).status_code == 404
    )
    assert (
        client.get(reverse("annotators_table", args=[alpha.pk, "annotators", "tex"])).status_code
        == 404
    )
    api = token_client(users["alice"]).get(reverse("api_annotators", args=[alpha.pk]))
    assert api.status_code == 200
    assert [t["name"] for t in api.json()] == [
        "annotators",
        "annotator_kappa",
        "annotator_confusion",
    ]
    hiring_page = client.get(reverse("hiring", args=[alpha.pk])).content.decode()
    assert reverse("annotators", args=[alpha.pk]) in hiring_page


@pytest.mark.parametrize("who", ["bob", "erin", "dave"])
def test_annotators_and_other_researchers_get_404(
    alpha: Project, judged_comparisons: list[Item], users: dict[str, User], who: str
) -> None:
    # bob: an annotator of alpha; erin: beta's researcher; dave: beta's annotator
    client = Client()
    client.force_login(users[who])
    for url in (
        reverse("annotators", args=[alpha.pk]),
        reverse("annotators_table", args=[alpha.pk, "annotators", "csv"]),
        reverse("annotators_table", args=[alpha.pk, "annotator_confusion", "json"]),
        reverse("disagreements", args=[alpha.pk]) + "?" + DRILL,
        reverse("disagreements", args=[alpha.pk]) + "?" + DRILL + "&format=csv",
    ):
        assert client.get(url).status_code == 404, url
    drill = reverse("api_disagreements", args=[alpha.pk]) + "?" + DRILL
    assert token_client(users[who]).get(drill).status_code == 404
    assert (
        token_client(users[who]).get(reverse("api_annotators", args=[alpha.pk])).status_code == 404
    )


def test_a_hired_worker_sees_nothing_of_it(invite: Invite, users: dict[str, User]) -> None:
    client = Client()
    join(client, invite, PROLIFIC_PID="w-curious")
    hire = hire_of(client)
    project = invite.project
    for url in (
        reverse("annotators", args=[project.pk]),
        reverse("annotators_table", args=[project.pk, "annotators", "json"]),
        reverse("disagreements", args=[project.pk]) + "?" + DRILL + "&format=json",
        reverse("api_disagreements", args=[project.pk]) + "?" + DRILL,
    ):
        assert client.get(url).status_code == 404
    assert (
        token_client(hire.membership.user)
        .get(reverse("api_annotators", args=[project.pk]))
        .status_code
        == 404
    )


def test_anonymous_is_sent_to_log_in(alpha: Project) -> None:
    response = Client().get(reverse("annotators", args=[alpha.pk]))
    assert response.status_code == 302 and "login" in response["Location"]


def test_hired_workers_are_shown_by_pseudonym(invite: Invite, users: dict[str, User]) -> None:
    worker = Client()
    join(worker, invite, PROLIFIC_PID="w-secret-id-77")
    hire = hire_of(worker)
    alice = Client()
    alice.force_login(users["alice"])
    page = alice.get(reverse("annotators", args=[invite.project.pk])).content.decode()
    assert hire.membership.pseudonym in page
    assert "w-secret-id-77" not in page


# --------------------------------------------------------------- disagreement drill-down
# judged_comparisons (conftest CHOICES), as stored sides: item 1 bob a, carol b; item 2
# both a; item 3 bob b, carol a; item 4 both a. So items 1 and 3 are the disagreements.


@pytest.mark.parametrize(
    "extra", ["", "&category=a", "&category=b", "&a={bob}&b={carol}", "&a={carol}&b={bob}"]
)
def test_drill_down_lists_the_units_behind_a_figure(
    alpha: Project, judged_comparisons: list[Item], users: dict[str, User], extra: str
) -> None:
    items = sorted(judged_comparisons, key=lambda i: i.pk)
    bob, carol = _pseudonym(alpha, users["bob"]), _pseudonym(alpha, users["carol"])
    client = Client()
    client.force_login(users["alice"])
    url = (
        reverse("disagreements", args=[alpha.pk]) + "?" + DRILL + extra.format(bob=bob, carol=carol)
    )
    data = json.loads(client.get(url + "&format=json").content)
    rows = data["rows"]
    assert [r["item"] for r in rows] == [items[0].pk, items[2].pk]
    assert [(r[bob], r[carol]) for r in rows] == [("a", "b"), ("b", "a")]
    for r in rows:
        assert r["gold_provenance"]  # a tie of two: the kind's rule, said so
        assert r["adjudication_url"].startswith(reverse("adjudication", args=[alpha.pk]))
        assert f"#unit-{r['item']}-item-choice" in r["adjudication_url"]
    page = client.get(url)
    assert page.status_code == 200 and bob in page.content.decode()
    csv = client.get(url + "&format=csv").content.decode().splitlines()
    assert len(csv) == 3 and csv[0].startswith("item,unit,")
    api = token_client(users["alice"]).get(
        reverse("api_disagreements", args=[alpha.pk])
        + "?"
        + DRILL
        + extra.format(bob=bob, carol=carol)
    )
    assert api.status_code == 200 and api.json()["rows"] == rows


def test_drill_down_category_nobody_disputes_is_empty(
    alpha: Project, judged_comparisons: list[Item], users: dict[str, User]
) -> None:
    client = Client()
    client.force_login(users["alice"])
    url = reverse("disagreements", args=[alpha.pk]) + "?kind=comparison&field=hard&category=maybe"
    assert json.loads(client.get(url + "&format=json").content)["rows"] == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("kind=nope&field=choice", "kind"),
        ("kind=comparison&field=justification", "field"),
        ("kind=comparison&field=choice&a=someone", "a"),
    ],
)
def test_drill_down_refuses_a_bad_figure(
    alpha: Project, judged_comparisons: list[Item], users: dict[str, User], query: str, field: str
) -> None:
    client = Client()
    client.force_login(users["alice"])
    assert client.get(reverse("disagreements", args=[alpha.pk]) + "?" + query).status_code == 400
    api = token_client(users["alice"]).get(
        reverse("api_disagreements", args=[alpha.pk]) + "?" + query
    )
    assert api.status_code == 400 and api.json()["field"] == field


def test_drill_down_escapes_hostile_pseudonyms_in_the_query(
    alpha: Project, judged_comparisons: list[Item], users: dict[str, User]
) -> None:
    client = Client()
    client.force_login(users["alice"])
    url = reverse("disagreements", args=[alpha.pk])
    page = client.get(
        url, {"kind": "comparison", "field": "choice", "a": "<script>x</script>", "b": "=1+1"}
    )
    assert page.status_code == 200
    body = page.content.decode()
    assert "<script>x</script>" not in body and "&lt;script&gt;" in body
    data = json.loads(
        client.get(
            url, {"kind": "comparison", "field": "choice", "a": "x", "b": "y", "format": "json"}
        ).content
    )
    assert data["rows"] == []  # nobody of those names: no units, not an error
