"""An annotator model's gold is fitted by the real task worker (issue 39): the report
says "computing" with its progress and uses majority vote meanwhile (never a blank
wait), the worker (`db_worker`) fits it once per data version, the report then uses it;
a fit whose worker was lost (by the injectable clock, never by waiting) is enqueued
again, and a fit overtaken by new data fits nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django_tasks_db.models import DBTaskResult

from annotation.models import Adjudication, Item, Project
from annotation.reports import Filters, gold_models
from tests.annotation.api_helpers import token_client
from tests.annotation.test_crowd_settings import answered

from .test_import_scale import background, drain  # noqa: F401  (a fixture)

TASK = "annotation.reports.gold_models.fit_gold"


def fits() -> Any:
    return DBTaskResult.objects.filter(task_path=TASK)


def report(project: Project, user: User, **params: Any) -> dict[str, dict]:
    r = token_client(user).get(f"/api/projects/{project.pk}/report/", {"bootstrap": 0, **params})
    assert r.status_code == 200, r.content
    return {s["slug"]: s for s in r.json()["sections"]}


@pytest.mark.django_db(transaction=True)
def test_the_worker_fits_the_model_and_the_report_waits_for_it(
    background: Any,  # noqa: F811
    alpha: Project,
    alpha_verification: list[Item],
    users: dict[str, User],
) -> None:
    answered(alpha_verification, users)
    alice = users["alice"]
    alpha.gold_method = "dawid_skene"
    alpha.save()
    first = report(alpha, alice)
    assert "gold-computing" in first and "gold-method" not in first
    assert "queued for the task worker" in first["gold-computing"]["notes"][0]
    assert "majority vote" in first["gold-computing"]["notes"][0]
    assert "agreement" in first and len(first) > 2  # the tables are there meanwhile
    assert fits().count() == 1
    report(alpha, alice)  # asked again: the same fit, not another
    assert fits().count() == 1
    drain()
    [done] = fits()
    assert (done.status, done.return_value) == ("SUCCESSFUL", "done")
    after = report(alpha, alice)
    assert "gold-method" in after and "gold-computing" not in after
    assert "Dawid-Skene" in after["gold-method"]["title"]
    # majority stays inline: no fit for it
    assert "gold-computing" not in report(alpha, alice, gold="majority")
    assert fits().count() == 1
    # new data: a new version, fitted again
    Adjudication.objects.create(
        item=alpha_verification[0], unit="item", field="label", value="supported"
    )
    assert "gold-computing" in report(alpha, alice)
    assert fits().count() == 2
    drain()
    assert "gold-method" in report(alpha, alice)


@pytest.mark.django_db(transaction=True)
def test_a_lost_fit_is_enqueued_again_and_a_stale_one_fits_nothing(
    background: Any,  # noqa: F811
    alpha: Project,
    alpha_verification: list[Item],
    users: dict[str, User],
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    answered(alpha_verification, users)
    fit = gold_models.fit_of(alpha, Filters(), "mace")
    assert fit.state == gold_models.QUEUED and fits().count() == 1
    # the worker was killed before finishing: nothing changes until the clock says so
    assert gold_models.fit_of(alpha, Filters(), "mace").state == gold_models.QUEUED
    assert fits().count() == 1
    later = fit.started_at + timedelta(seconds=settings.GOLD_FIT_SECONDS + 1)  # type: ignore[operator]
    monkeypatch.setattr(gold_models, "clock", lambda: later)
    gold_models.fit_of(alpha, Filters(), "mace")
    assert fits().count() == 2
    # the data changes before the worker begins: the queued fits fit nothing
    alpha.save()
    drain()
    assert {t.return_value for t in fits()} == {"stale"}
    assert gold_models.fit_of(alpha, Filters(), "mace").state == gold_models.QUEUED
    drain()
    assert gold_models.fit_of(alpha, Filters(), "mace").state == gold_models.DONE
    cache.clear()


@pytest.mark.django_db(transaction=True)
def test_a_failed_fit_is_an_error_in_the_report(
    background: Any,  # noqa: F811
    alpha: Project,
    alpha_verification: list[Item],
    users: dict[str, User],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answered(alpha_verification, users)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("crowd-kit is not installed")

    monkeypatch.setattr(gold_models, "fit_columns", broken)
    report(alpha, users["alice"], gold="glad")
    drain()
    [failed] = fits()
    assert failed.status == "FAILED"
    shown = report(alpha, users["alice"], gold="glad")["gold-computing"]["notes"][0]
    assert "The fit failed: RuntimeError: crowd-kit is not installed" in shown
