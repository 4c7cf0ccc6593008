"""The release's page, API and command: researchers of the project only (annotators,
hired workers and other projects' researchers get 404, anonymous callers the login or
401), for the form, the build's progress and its zip. The page and the API enqueue the
build on the task worker (run here in-process, `drain`); the zip each serves is the
release."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone

from annotation import hiring
from annotation.models import Membership, Project, ReleaseJob

from .api_helpers import token_client
from .release_helpers import answer_everything, verification_study
from .test_import_scale import drain  # the task worker, in this process, until no task is left


@pytest.fixture
def study(users: dict[str, User], alpha: Project, beta: Project) -> Project:
    """alpha with verification items answered by bob, carol and a hired worker."""
    worker = User.objects.create_user("hired-worker")
    membership = alpha.add_member(worker, Membership.ANNOTATOR)
    hiring.Hire.objects.create(
        membership=membership, worker_id="5f00a1b2c3d4e5f6a7b8c9d0", passed_training=True
    )
    verification_study(alpha, [users["bob"], users["carol"], worker], n=4)
    answer_everything(alpha)
    return alpha


def _zip_names(content: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(content)) as z:
        return z.namelist()


def _content(response: Any) -> bytes:
    return b"".join(response.streaming_content)


@pytest.fixture
def worker(settings: Any, tmp_path: Path) -> Any:
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    settings.VAR_DIR = tmp_path / "var"
    return settings


OUTSIDERS = ("bob", "dave", "erin", "hired-worker")  # annotators, a hire, beta's researcher


@pytest.mark.django_db(transaction=True)
def test_the_page_builds_on_the_worker_for_the_projects_researchers(
    study: Project, users: dict[str, User], client: Client, worker: Any
) -> None:
    url = f"/p/{study.pk}/release/"
    assert client.get(url).status_code == 302  # to the login
    for who in OUTSIDERS:
        client.force_login(User.objects.get(username=who))
        assert client.get(url).status_code == 404, who
        assert client.post(url, {"license": "mit", "languages": "en"}).status_code == 404, who
    assert not ReleaseJob.objects.exists()
    client.force_login(users["alice"])
    page = client.get(url)
    assert page.status_code == 200
    assert "Human annotations of LLM factuality" in page.content.decode()  # the default
    form = {
        "license": "mit",
        "languages": "en, de",
        "task_categories": ["text-classification", "question-answering"],
        "summary": "Our own summary.",
        "bootstrap": "0",
    }
    response = client.post(url, form)
    job = ReleaseJob.objects.get()
    job_url = f"/p/{study.pk}/release/{job.pk}/"
    assert response.status_code == 302 and response["Location"] == job_url
    assert client.post(url, form)["Location"] == job_url  # the same build: the same job
    assert ReleaseJob.objects.count() == 1
    assert "Waiting for a worker" in client.get(job_url).content.decode()
    download = f"{job_url}download/"
    assert client.get(download).status_code == 404  # not built yet
    drain()
    job.refresh_from_db()
    assert job.status == ReleaseJob.FINISHED, job.error
    polled = client.get(job_url, headers={"HX-Request": "true"})
    assert polled.status_code == 286 and download in polled.content.decode()
    with zipfile.ZipFile(io.BytesIO(_content(client.get(download)))) as z:
        card = z.read(f"project-{study.pk}-release/README.md").decode()
        assert f"project-{study.pk}-release/study.json" in z.namelist()
    assert "license: mit" in card and "Our own summary." in card
    assert "- de" in card and "- question-answering" in card
    assert list((worker.VAR_DIR / "releases").iterdir()) == [Path(job.path)]  # no leftovers
    for who in OUTSIDERS:
        client.force_login(User.objects.get(username=who))
        for where in (job_url, download):
            assert client.get(where).status_code == 404, (who, where)
    client.force_login(users["alice"])
    for bad in (
        {"license": "mit", "languages": "english!", "bootstrap": "0"},
        {"license": "mit", "languages": "en", "bootstrap": "10000000000"},
        {"license": "mit", "languages": "en", "bootstrap": "-1"},
        {"license": "gpl-99", "languages": "en"},
        {"license": "mit", "languages": "en", "pretty_name": "x" * 201},
    ):
        assert client.post(url, bad).status_code == 400, bad
    named = client.post(url, {"license": "mit", "languages": "en", "summary": "hired-worker"})
    assert named.status_code == 400 and "nothing personal" in named.content.decode()
    assert ReleaseJob.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_api_builds_on_the_worker_and_the_client_polls(
    study: Project, users: dict[str, User], worker: Any
) -> None:
    url = f"/api/projects/{study.pk}/release/"
    assert token_client(None).post(url, {}, format="json").status_code == 401
    for who in OUTSIDERS:
        client = token_client(User.objects.get(username=who))
        assert client.get(url).status_code == 404, who
        assert client.post(url, {}, format="json").status_code == 404, who
    alice = token_client(users["alice"])
    defaults = alice.get(url).json()
    assert "summary" in defaults["defaults"] and "cc-by-4.0" in defaults["licences"]
    asked = alice.post(url, {"license": "cc0-1.0", "bootstrap": 0}, format="json")
    assert asked.status_code == 202
    job = asked.json()
    assert job["status"] == "queued" and job["download"] is None
    again = alice.post(url, {"license": "cc0-1.0", "bootstrap": 0}, format="json")
    assert again.status_code == 200 and again.json()["job"] == job["job"]  # one build
    other = alice.post(url, {"license": "mit", "bootstrap": 0}, format="json")
    assert other.status_code == 202 and other.json()["job"] != job["job"]  # other options
    for who in OUTSIDERS:  # nobody else reads the job or its zip
        client = token_client(User.objects.get(username=who))
        assert client.get(job["url"]).status_code == 404, who
    drain()
    done = alice.get(job["url"]).json()
    assert done["status"] == "finished" and done["tables_done"] == done["tables"]
    zipped = alice.get(done["download"])
    assert zipped.status_code == 200 and zipped["Content-Type"] == "application/zip"
    assert any(n.endswith("croissant.json") for n in _zip_names(_content(zipped)))
    for who in OUTSIDERS:
        client = token_client(User.objects.get(username=who))
        assert client.get(done["download"]).status_code == 404, who
    beta = Project.objects.get(name="beta")  # erin's: alpha's job is not under it
    erin = token_client(User.objects.get(username="erin"))
    assert erin.get(f"/api/projects/{beta.pk}/release/{job['job']}/").status_code == 404
    refused = alice.post(url, {"source_licences": ["../settings.py"]}, format="json")
    assert refused.status_code == 400
    assert refused.json()["field"] == "source_licences"
    for bad in ({"bootstrap": 10**12}, {"bootstrap": -5}, {"languages": "x" * 300}, [1, 2]):
        assert alice.post(url, bad, format="json").status_code == 400, bad
    assert alice.get(f"/api/projects/{study.pk}/release/999999999/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_failed_build_shows_its_error_and_leaves_no_release(
    study: Project, users: dict[str, User], worker: Any
) -> None:
    """The worker meets a folder it cannot write (VAR_DIR/releases is a file): the job
    fails with the error, no zip is served, and the same build can be asked for again."""
    alice = token_client(users["alice"])
    url = f"/api/projects/{study.pk}/release/"
    job = alice.post(url, {"bootstrap": 0}, format="json").json()
    worker.VAR_DIR.mkdir(parents=True, exist_ok=True)
    (worker.VAR_DIR / "releases").write_text("not a folder")
    drain()
    failed = alice.get(job["url"]).json()
    assert failed["status"] == "failed" and failed["error"] and failed["download"] is None
    assert alice.get(f"{job['url']}download/").status_code == 404
    page = Client()
    page.force_login(users["alice"])
    shown = page.get(f"/p/{study.pk}/release/{job['job']}/").content.decode()
    assert "Nothing was released" in shown and "download/" not in shown
    (worker.VAR_DIR / "releases").unlink()
    again = alice.post(url, {"bootstrap": 0}, format="json")
    assert again.status_code == 202 and again.json()["job"] != job["job"]
    drain()
    assert alice.get(again.json()["url"]).json()["status"] == "finished"


@pytest.mark.django_db(transaction=True)
def test_a_build_whose_worker_was_lost_is_started_anew(
    study: Project, users: dict[str, User], worker: Any
) -> None:
    alice = token_client(users["alice"])
    url = f"/api/projects/{study.pk}/release/"
    first = alice.post(url, {"bootstrap": 0}, format="json").json()
    stale = timezone.now() - timedelta(seconds=worker.RELEASE_JOB_SECONDS + 1)
    ReleaseJob.objects.filter(pk=first["job"]).update(status="running", updated_at=stale)
    second = alice.post(url, {"bootstrap": 0}, format="json")
    assert second.status_code == 202 and second.json()["job"] != first["job"]
    assert "stopped reporting" in alice.get(first["url"]).json()["error"]
    drain()
    assert alice.get(second.json()["url"]).json()["status"] == "finished"


@pytest.mark.django_db(transaction=True)
def test_a_lost_build_reads_as_failed_and_its_folder_goes(
    study: Project, users: dict[str, User], worker: Any
) -> None:
    """A worker killed mid-build: its job is failed when its page or status is read (not
    only when the same build is asked for again), and the folder it was writing goes."""
    alice = token_client(users["alice"])
    job = alice.post(f"/api/projects/{study.pk}/release/", {"bootstrap": 0}, format="json").json()
    left = worker.VAR_DIR / "releases" / f"job-{job['job']}-killed"
    (left / "project-release").mkdir(parents=True)
    fresh = timezone.now() - timedelta(seconds=worker.RELEASE_JOB_SECONDS - 60)
    ReleaseJob.objects.filter(pk=job["job"]).update(status="running", updated_at=fresh)
    assert alice.get(job["url"]).json()["status"] == "running" and left.exists()
    stale = timezone.now() - timedelta(seconds=worker.RELEASE_JOB_SECONDS + 1)
    ReleaseJob.objects.filter(pk=job["job"]).update(status="running", updated_at=stale)
    page = Client()
    page.force_login(users["alice"])
    shown = page.get(f"/p/{study.pk}/release/{job['job']}/").content.decode()
    assert "stopped reporting" in shown and not left.exists()
    body = alice.get(job["url"]).json()
    assert body["status"] == "failed" and body["download"] is None


def test_the_command_writes_the_folder_and_the_zip(study: Project, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("What we annotated.", encoding="utf-8")
    out = io.StringIO()
    call_command(
        "release_dataset",
        str(study.pk),
        str(tmp_path / "rel"),
        "--zip",
        "--license",
        "cc-by-nc-4.0",
        "--summary-file",
        str(summary),
        "--bootstrap",
        "0",
        stdout=out,
        stderr=io.StringIO(),
    )
    assert "Released 'alpha'" in out.getvalue() and "annotations " in out.getvalue()
    assert (tmp_path / "rel.zip").is_file()
    card = (tmp_path / "rel" / "README.md").read_text()
    assert "license: cc-by-nc-4.0" in card and "What we annotated." in card
    meta = json.loads((tmp_path / "rel" / "croissant.json").read_text())
    assert meta["license"] == "cc-by-nc-4.0"
    with pytest.raises(CommandError, match="not an empty folder"):
        call_command("release_dataset", str(study.pk), str(tmp_path / "rel"), stderr=io.StringIO())


def test_the_database_holds_one_unfailed_build_per_key(alpha: Project) -> None:
    """Two requests for the same build at the same moment both miss the other's job: the
    unique constraint lets one in, and `start_release` returns it to the other."""
    ReleaseJob.objects.create(project=alpha, key="k")
    with pytest.raises(IntegrityError), transaction.atomic():
        ReleaseJob.objects.create(project=alpha, key="k", status=ReleaseJob.RUNNING)
    ReleaseJob.objects.filter(project=alpha).update(status=ReleaseJob.FAILED)
    ReleaseJob.objects.create(project=alpha, key="k")  # a failed one can be asked for again
