"""Issue 38 (low): `kill -9` left task rows RUNNING forever. A background import's task
row that a killed worker left RUNNING is failed (naming why), and its job is requeued when
the worker died before reading anything, or failed (its upload removed) when it died
mid-import: imports are all or nothing, so nothing of the file was written either way.
Time is the test's own (`tasks.clock`): no sleeps."""

from __future__ import annotations

import fcntl
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from annotation import tasks
from annotation.import_jobs import fail_if_abandoned, run_import, sweep_imports
from annotation.models import Document, ImportJob, Project
from tests.conftest import canonical_line

from .test_import_scale import drain

T0 = timezone.now().replace(microsecond=0)


@pytest.fixture
def now(monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Path) -> list[datetime]:
    """The clock of staleness, moved by the test (now[0])."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    settings.VAR_DIR = tmp_path
    settings.IMPORT_WORKER_TIMEOUT = 300
    at = [T0]
    monkeypatch.setattr(tasks, "clock", lambda: at[0])
    return at


def killed_job(project: Project, tmp_path: Path, status: str) -> tuple[ImportJob, Any]:
    """A job whose worker took its task row at T0 and was then killed; `status` is how far
    it got (queued: before starting the import)."""
    path = tmp_path / "left.upload"
    path.write_text("\n".join(canonical_line(i) for i in range(3)) + "\n")
    job = ImportJob.objects.create(
        project=project, file_name="left.jsonl", path=str(path), status=status, phase="read"
    )
    run_import.enqueue(job.pk)
    row = DBTaskResult.objects.get(args_kwargs__args=[job.pk])
    DBTaskResult.objects.filter(pk=row.pk).update(status="RUNNING", started_at=T0)
    return job, row


def rows(job: ImportJob, status: str) -> int:
    return DBTaskResult.objects.filter(args_kwargs__args=[job.pk], status=status).count()


@pytest.mark.django_db(transaction=True)
def test_a_task_row_whose_worker_died_before_the_import_is_failed_and_the_job_requeued(
    now: list[datetime], tmp_path: Path
) -> None:
    project = Project.objects.create(name="bg")
    job, row = killed_job(project, tmp_path, ImportJob.QUEUED)
    now[0] = T0 + timedelta(seconds=299)
    assert sweep_imports() == 0  # not stale yet: its worker may be starting
    fail_if_abandoned(job)
    assert rows(job, "RUNNING") == 1 and job.status == ImportJob.QUEUED
    now[0] = T0 + timedelta(seconds=301)
    fail_if_abandoned(job)  # the job's page, polled while it waits
    row.refresh_from_db()
    assert row.status == "FAILED" and row.exception_class_path == "annotation.tasks.WorkerLost"
    assert "stopped reporting for more than 300 s before starting the import" in row.traceback
    assert "requeued" in row.traceback
    assert rows(job, "READY") == 1 and job.status == ImportJob.QUEUED
    assert sweep_imports() == 0  # done once: one new task, not one per sweep
    assert rows(job, "READY") == 1
    drain()  # another worker takes the new task
    job.refresh_from_db()
    assert job.status == ImportJob.FINISHED and Document.objects.count() == 3
    assert not Path(job.path).exists()
    assert not DBTaskResult.objects.filter(status="RUNNING").exists()


@pytest.mark.django_db(transaction=True)
def test_a_task_row_whose_worker_died_mid_import_is_failed_with_its_job(
    now: list[datetime], tmp_path: Path
) -> None:
    project = Project.objects.create(name="bg")
    job, row = killed_job(project, tmp_path, ImportJob.RUNNING)
    now[0] = T0 + timedelta(hours=1)
    with open(job.path, "rb") as held:  # a live worker holds the upload however long it takes
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert sweep_imports() == 0
        row.refresh_from_db()
        job.refresh_from_db()
        assert row.status == "RUNNING" and job.status == ImportJob.RUNNING
    assert sweep_imports() == 1  # its worker is gone: the lock went with it
    row.refresh_from_db()
    job.refresh_from_db()
    assert row.status == "FAILED" and "its worker was killed or crashed" in row.traceback
    assert job.status == ImportJob.FAILED and "nothing was imported" in job.errors[0]
    assert not Path(job.path).exists() and rows(job, "READY") == 0
    assert Document.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_task_row_whose_worker_died_after_the_import_ended_is_failed(
    now: list[datetime], tmp_path: Path
) -> None:
    project = Project.objects.create(name="bg")
    job, row = killed_job(project, tmp_path, ImportJob.FINISHED)
    assert sweep_imports() == 0
    now[0] = T0 + timedelta(seconds=301)
    assert sweep_imports() == 1
    row.refresh_from_db()
    job.refresh_from_db()
    assert row.status == "FAILED" and "after the import ended (finished)" in row.traceback
    assert job.status == ImportJob.FINISHED and not Path(job.path).exists()
    assert rows(job, "READY") == 0
