"""A researcher's own distances and agreement weights per agreement field (issue 44):
stored in the project's settings from the page and the API, checked against the field's
categories, and used by the report (alpha with the distance, Cohen's weighted kappa per
pair with the weights, each with its D_o and D_e), with each coefficient's parts."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation import reports, stats
from annotation.models import Item, Project
from annotation.reports.agreement import field_codes
from annotation.reports.queries import report_data
from annotation.reports.tables import Filters

from .api_helpers import token_client

# verification.stance: supports, contradicts, inconclusive
STANCE_DISTANCE = [[0, 1, 0.25], [1, 0, 0.25], [0.25, 0.25, 0]]
STANCE_WEIGHTS = [[1, 0, 0.5], [0, 1, 0.5], [0.5, 0.5, 1]]
SETTING = {"verification.stance": {"distance": STANCE_DISTANCE, "weights": STANCE_WEIGHTS}}


def _url(project: Project) -> str:
    return f"/api/projects/{project.pk}/agreement-weights/"


def test_api_stores_and_returns_them(alpha: Project, users: dict[str, User]) -> None:
    client = token_client(users["alice"])
    body = client.get(_url(alpha)).json()
    assert body["agreement_weights"] == {}
    assert body["fields"]["verification.stance"] == ["supports", "contradicts", "inconclusive"]
    response = client.put(_url(alpha), SETTING, format="json")
    assert response.status_code == 200, response.content
    alpha.refresh_from_db()
    assert alpha.agreement_weights == {
        "verification.stance": {
            "distance": [[float(x) for x in r] for r in STANCE_DISTANCE],
            "weights": [[float(x) for x in r] for r in STANCE_WEIGHTS],
        }
    }
    assert client.put(_url(alpha), {}, format="json").status_code == 200  # cleared
    alpha.refresh_from_db()
    assert alpha.agreement_weights == {}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"verification.stance": {"distance": [[0, 1], [1, 0]]}}, "categories are 3"),
        ({"verification.stance": {"distance": [[1, 1, 1], [1, 0, 1], [1, 1, 0]]}}, "diagonal"),
        ({"verification.stance": {"distance": [[0, 1, 2], [1, 0, 1], [1, 1, 0]]}}, "symmetric"),
        ({"verification.stance": {"weights": [[0, 0, 0], [0, 1, 0], [0, 0, 1]]}}, "diagonal"),
        ({"verification.stance": {"weights": [[1, 2, 0], [0, 1, 0], [0, 0, 1]]}}, "0 and 1"),
        ({"verification.nothing": {"distance": [[0]]}}, "not an agreement field"),
        ({"verification.stance": {"distance": "0 1"}}, "square matrix"),
        ({"verification.stance": {"distance": [[0, True], [True, 0]]}}, "square matrix"),
        ({"verification.stance": {"cost": [[0]]}}, "neither"),
        ({"verification.stance": {}}, "expected"),
        ([1, 2], "expected"),
    ],
)
def test_api_refuses_bad_matrices(alpha: Project, users: dict[str, User], value, message) -> None:
    response = token_client(users["alice"]).put(_url(alpha), value, format="json")
    assert response.status_code == 400
    assert message in response.json()["message"]
    alpha.refresh_from_db()
    assert alpha.agreement_weights == {}


def test_only_the_projects_researchers(alpha: Project, users: dict[str, User]) -> None:
    assert token_client(None).get(_url(alpha)).status_code == 401
    for name in ("bob", "erin"):  # an annotator of it; another researcher
        client = token_client(users[name])
        assert client.get(_url(alpha)).status_code == 404
        assert client.put(_url(alpha), SETTING, format="json").status_code == 404
    alpha.refresh_from_db()
    assert alpha.agreement_weights == {}


def test_page_stores_them(alpha: Project, users: dict[str, User], client) -> None:
    url = reverse("project_agreement_weights", args=[alpha.pk])
    client.force_login(users["bob"])
    assert client.get(url).status_code == 404
    client.force_login(users["alice"])
    page = client.get(url).content.decode()
    assert "verification.stance: supports, contradicts, inconclusive" in page
    response = client.post(
        url,
        {
            "verification.stance__distance": "0 1 0.25\n1 0 0.25\n0.25, 0.25, 0",
            "verification.stance__weights": "",
        },
    )
    assert response.status_code == 302
    alpha.refresh_from_db()
    assert alpha.agreement_weights == {
        "verification.stance": {"distance": [[0, 1, 0.25], [1, 0, 0.25], [0.25, 0.25, 0]]}
    }
    page = client.get(url).content.decode()
    assert "0 1 0.25" in page  # shown again as stored
    bad = client.post(url, {"verification.stance__distance": "0 1\n1 0"})
    assert bad.status_code == 200 and "categories are 3" in bad.content.decode()
    bad = client.post(url, {"verification.stance__distance": "0 x"})
    assert "numbers, one row per line" in bad.content.decode()
    alpha.refresh_from_db()
    assert len(alpha.agreement_weights["verification.stance"]["distance"]) == 3


def _rows(section: reports.Section, name: str) -> list[dict[str, object]]:
    return next(t for t in section.tables if t.name == name).as_dicts()


def test_report_uses_them(verification: list[Item], users: dict[str, User]) -> None:
    project = verification[0].project
    before = reports.cached_report(project, bootstrap=50)
    slug = "agreement-verification-stance"
    table_names = [t.name for t in before.section(slug).tables]
    assert f"{slug}-weighted-kappa" not in table_names
    token_client(users["alice"]).put(_url(project), SETTING, format="json")
    project.refresh_from_db()
    after = reports.cached_report(project, bootstrap=50)  # the save bumped the data version
    section = after.section(slug)
    alpha = next(
        r for r in _rows(section, f"{slug}-coefficients") if "alpha" in str(r["coefficient"])
    )
    assert alpha["coefficient"] == "Krippendorff's alpha (custom distance)"
    # the same as stats.agreement with that distance on the field's units
    data = report_data(
        project,
        filters=Filters(),
        names={u.pk: u.username for u in users.values()},
        bootstrap=0,
        seed=0,
        k_rule="upper",
        with_charts=False,
    )
    codes = field_codes(data, "verification", "evidence", "stance")
    assert codes is not None
    units = {
        f"{item}/{unit}": {
            data.names[a]: codes.values[c]
            for a, c in zip(codes.annotators.tolist(), row, strict=True)
            if c >= 0
        }
        for item, unit, row in zip(
            codes.items.tolist(), codes.units, codes.codes.tolist(), strict=True
        )
    }
    expected = stats.agreement(
        units,
        categories=["supports", "contradicts", "inconclusive"],
        distance=STANCE_DISTANCE,
        bootstrap=0,
    ).krippendorff_alpha
    assert alpha["value"] == pytest.approx(expected.value)
    assert (alpha["D_o"], alpha["D_e"]) == pytest.approx((expected.d_o, expected.d_e))
    weighted = _rows(section, f"{slug}-weighted-kappa")
    assert len(weighted) == 1 and weighted[0]["shared units"] == 8
    a = [units[u][n] for u in units for n in ("bob",) if n in units[u]]
    b = [units[u]["carol"] for u in units if "bob" in units[u]]
    direct = stats.cohen_kappa(
        a, b, labels=["supports", "contradicts", "inconclusive"], weights=STANCE_WEIGHTS
    )
    assert weighted[0]["weighted kappa"] == pytest.approx(direct.value)
    assert (weighted[0]["D_o"], weighted[0]["D_e"]) == pytest.approx((direct.d_o, direct.d_e))
    # each coefficient's parts, in the tables the exports serve
    coincidences = _rows(section, f"{slug}-alpha-coincidences")
    assert [r["category"] for r in coincidences] == ["supports", "contradicts", "inconclusive"]
    assert coincidences[0]["delta² to inconclusive"] == 0.25
    assert sum(float(r["pairable values n_c"]) for r in coincidences) == 16  # 8 units x 2
    assert len(_rows(section, f"{slug}-fleiss-units")) == 8
    shares = _rows(section, f"{slug}-fleiss-categories")
    assert sum(float(r["p_j"]) for r in shares) == pytest.approx(1)


def test_a_stored_matrix_the_categories_outgrew_fails_its_section_only(
    verification: list[Item],
) -> None:
    """A matrix stored for other categories (an edit of the kind's labels) fails that
    field's section with the reason, not the report."""
    project = verification[0].project
    Project.objects.filter(pk=project.pk).update(
        agreement_weights={"verification.stance": {"distance": [[0, 1], [1, 0]]}}
    )
    project.refresh_from_db()
    report = reports.build_report(project, bootstrap=0)
    failed = report.section("agreement-verification-stance")
    assert "categories are 3" in " ".join(failed.notes)
    assert report.section("agreement-verification-label") is not None


def test_page_escapes_the_researchers_category_names(
    alpha: Project, users: dict[str, User], client
) -> None:
    """Error types are the researcher's text: the page shows them escaped."""
    alpha.error_types = ["<script>alert(1)</script>", "other"]
    alpha.save(update_fields=["error_types"])
    client.force_login(users["alice"])
    page = client.get(reverse("project_agreement_weights", args=[alpha.pk])).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
