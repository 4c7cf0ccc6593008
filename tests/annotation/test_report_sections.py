"""A report survives a failing section; verifier collapse rules declared per project."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from annotation import reports, stats
from annotation.models import Item, Project


def _boom(*args: object, **kwargs: object) -> None:
    raise RuntimeError("forced failure for the test")


def test_a_failing_section_shows_its_error_and_the_rest_is_intact(
    verification: list[Item], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = verification[0].project
    intact = reports.build_report(project, bootstrap=0)
    monkeypatch.setitem(reports.SECTIONS, "verifiers", reports.SectionBuilder("Verifiers", _boom))
    report = reports.build_report(project, bootstrap=0)
    failed = report.section("verifiers")
    assert failed is not None
    assert failed.error == "RuntimeError: forced failure for the test"
    assert failed.tables == ()
    others = [s for s in report.sections if s.slug != "verifiers"]
    assert [s.slug for s in others] == [s.slug for s in intact.sections if s.slug != "verifiers"]
    assert report.table("agreement-overview") == intact.table("agreement-overview")


def test_one_failing_agreement_field_keeps_the_other_fields(
    verification: list[Item], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = stats.agreement

    def fails_on_stance(ratings: stats.RatingsInput, **kwargs: object) -> stats.AgreementReport:
        if "supports" in kwargs["categories"]:  # type: ignore[operator]
            raise RuntimeError("stance went wrong")
        return real(ratings, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(stats, "agreement", fails_on_stance)
    report = reports.build_report(verification[0].project, bootstrap=0)
    stance = report.section("agreement-verification-stance")
    assert stance is not None and stance.error == "RuntimeError: stance went wrong"
    label = report.section("agreement-verification-label")
    assert label is not None and label.error is None and label.tables
    fields = [r["field"] for r in report.table("agreement-overview").as_dicts()]
    assert "label" in fields and "stance" not in fields


def test_the_report_page_shows_the_failed_section(
    client: Client,
    users: dict[str, User],
    verification: list[Item],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(reports.SECTIONS, "verifiers", reports.SectionBuilder("Verifiers", _boom))
    client.force_login(users["alice"])
    response = client.get(reverse("report", args=[verification[0].project.pk]))
    page = response.content.decode()
    assert response.status_code == 200
    assert 'role="alert">This section could not be computed: RuntimeError' in page
    assert "Inter-annotator agreement" in page


def test_project_collapse_rules_replace_the_default_modes(verification: list[Item]) -> None:
    # Gold, ternary: S I C I; verifier-two says S C C I. Under a rule that keeps only
    # "contradicted" apart, gold is o o C o and verifier-two o C C o: 3 of 4.
    project: Project = verification[0].project
    project.verifier_collapse = {
        "contradicted-vs-rest": {"supported": "other", "inconclusive": "other"},
        "as labelled": {},
    }
    project.full_clean()
    project.save()
    report = reports.build_report(project, bootstrap=0)
    scores = {(r["system"], r["mode"]): r for r in report.table("verifier-scores").as_dicts()}
    assert scores[("verifier-two", "contradicted-vs-rest")]["accuracy"] == pytest.approx(0.75)
    assert ("verifier-two", "binary") not in scores
    # An empty rule scores the labels as they are: the ternary figure, 3 of 4.
    assert scores[("verifier-two", "as labelled")]["accuracy"] == pytest.approx(0.75)
    assert scores[("verifier-two", "as labelled")]["contradicted F1"] is not None
    notes = report.section("verifiers").notes  # type: ignore[union-attr]
    assert any(
        "contradicted-vs-rest: supported -> other, inconclusive -> other" in n for n in notes
    )


def test_collapse_rules_are_validated(alpha: Project) -> None:
    alpha.verifier_collapse = {"binary": ["contradicted", "unsupported"]}
    with pytest.raises(ValidationError, match="rule name"):
        alpha.full_clean()
