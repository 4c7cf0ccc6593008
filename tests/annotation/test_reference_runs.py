"""Reference-mode pipeline runs from the platform (issue 24): the run form and the API
take `reference`; the templates and the splitter are the operator's settings, never the
researcher's input."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.models import PipelineRun, Project
from tests.conftest import peer_file

from .api_helpers import token_client


def set_up_reference(settings):  # type: ignore[no-untyped-def]
    """The operator's reference-mode settings: the shared released templates, and the
    stand-in spaCy splitter (the released en_core_web_sm is on no registry)."""
    settings.PIPELINE_REFERENCE_PROMPTS = str(peer_file("veriscore/prompt"))
    settings.PIPELINE_VERIFASTSCORE_PROMPTS = str(peer_file("verifastscore"))
    settings.PIPELINE_REFERENCE_SPLITTER = "spacy:sentencizer"
    return settings


@pytest.fixture
def reference_settings(settings):  # type: ignore[no-untyped-def]
    return set_up_reference(settings)


def post(project: Project, user: User, **data: object):  # type: ignore[no-untyped-def]
    return token_client(user).post(
        f"/api/projects/{project.pk}/pipeline-runs/",
        {"model": "gpt-4o-mini", **data},
        format="json",
    )


def test_a_reference_run_the_server_has_not_set_up_is_refused(
    alpha: Project, users: dict[str, User], settings
) -> None:  # type: ignore[no-untyped-def]
    settings.PIPELINE_REFERENCE_PROMPTS = ""
    response = post(alpha, users["alice"], reference="veriscore")
    assert response.status_code == 400 and response.json()["field"] == "reference"
    assert "not set up" in response.json()["message"]
    assert not PipelineRun.objects.exists()


def test_reference_input_cannot_choose_files_or_bad_values(
    alpha: Project, users: dict[str, User], reference_settings
) -> None:  # type: ignore[no-untyped-def]
    alice = users["alice"]
    for field, value in (("prompt_dir", "/etc"), ("splitter", "spacy:/tmp/evil")):
        response = post(alpha, alice, reference="veriscore", **{field: value})
        assert response.status_code == 400 and response.json()["field"] == field
    for value in ("../../etc/passwd", "VERISCORE", "x" * 10_000, 3):
        response = post(alpha, alice, reference=value)
        assert response.status_code == 400 and response.json()["field"] == "reference"
    # The method must be the reference's own.
    response = post(alpha, alice, reference="veriscore", extractor="atomic")
    assert response.status_code == 400 and response.json()["field"] == "reference"
    # An annotator of the project, a researcher of another: refused, whatever the input.
    for other in ("bob", "erin"):
        response = post(alpha, users[other], reference="veriscore")
        assert response.status_code in (403, 404), response.content
    assert not PipelineRun.objects.exists()


def test_a_reference_run_through_the_api_is_stored_with_its_mode(
    alpha: Project, users: dict[str, User], reference_settings
) -> None:  # type: ignore[no-untyped-def]
    response = post(alpha, users["alice"], reference="veriscore", label_mode="ternary")
    assert response.status_code == 201, response.content
    assert response.json()["config"]["reference"] == "veriscore"
    assert "prompt" not in str(response.json()["config"])  # the operator's path stays hidden
