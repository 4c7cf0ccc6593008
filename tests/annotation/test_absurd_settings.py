"""Issue 38 (low): absurd values reached the code behind the forms: `shares=nan` reached
numpy's message, `fixed_k: 1e308` gave a finished run with every F1 = 0, a bm25 run
without a corpus was accepted and failed later, `check_rate: 0.999999` made a queue of
checks. Each is refused with a message on its field (the forms pages and API share)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from annotation.models import PipelineRun, Project
from annotation.reports.planning import PlanOptionsForm
from tests.annotation.api_helpers import token_client


@pytest.mark.parametrize("shares", ["nan,0.5", "nan,nan", "inf,-inf", "0.5,nan"])
def test_shares_that_are_not_finite_are_refused(shares: str) -> None:
    form = PlanOptionsForm({"kappa": 0.5, "shares": shares})
    assert not form.is_valid()
    assert "finite" in str(form.errors["shares"]) or "positive" in str(form.errors["shares"])


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"fixed_k": 1e308}, "fixed_k", "less than or equal to 100000"),
        ({"retriever": "bm25"}, "retriever", "No local corpus"),
    ],
)
def test_a_run_with_absurd_options_is_refused(
    alpha: Project, users: dict[str, User], body: dict[str, Any], field: str, message: str
) -> None:
    r = token_client(users["alice"]).post(
        f"/api/projects/{alpha.pk}/pipeline-runs/",
        {"model": "gpt-4o-mini", "label_mode": "ternary", **body},
        format="json",
    )
    assert r.status_code == 400, r.content
    errors = {e["field"]: e["message"] for e in r.json()["errors"]}
    assert message in errors[field], errors
    assert not PipelineRun.objects.exists()


def test_a_bm25_run_with_a_corpus_is_accepted(
    alpha: Project, users: dict[str, User], settings: Any, tmp_path: Any
) -> None:
    settings.PIPELINE_BM25_CORPUS = str(tmp_path / "corpus.jsonl")
    r = token_client(users["alice"]).post(
        f"/api/projects/{alpha.pk}/pipeline-runs/",
        {"model": "gpt-4o-mini", "label_mode": "ternary", "retriever": "bm25"},
        format="json",
    )
    assert r.status_code == 201, r.content


@pytest.mark.parametrize("rate", [0.999999, 0.51, 1])
def test_a_check_rate_above_half_is_refused(
    alpha: Project, users: dict[str, User], rate: float
) -> None:
    body = {"pass_mark": 0.8, "check_rate": rate, "pause_below": None, "pause_after": 5}
    r = token_client(users["alice"]).put(
        f"/api/projects/{alpha.pk}/hiring-policy/", body, format="json"
    )
    assert r.status_code == 400, r.content
    assert r.json()["field"] == "check_rate" and "At most 50%" in r.json()["message"]
