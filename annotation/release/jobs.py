"""Releases built by the task worker (django.tasks, `manage.py db_worker`), for the page
and the API: a request is checked at once (the form, the free text: `release_options`)
and enqueued as a `ReleaseJob`; the worker builds the release in a folder of its own
under VAR_DIR/releases/, zips it and moves the zip into place, then marks the job
finished. A build that fails records its error and leaves no zip (its folder is
removed): never a half-written release.

One build per project, options and data version at a time (`ReleaseJob.key`, unique
among the jobs that did not fail): asking again for the same returns the same job, while
it is queued or running and once it is finished (its zip is served again). A job whose
worker made no progress for RELEASE_JOB_SECONDS (killed) is failed, and the folder it was
writing removed, when its page or API status is read or the same is asked for again
(which then starts a new build). The newest KEEP_ZIPS finished zips of a project
are kept; an older one is removed and its job failed (build it again).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.tasks import task
from django.utils import timezone

from ..models import Project, ReleaseJob
from .build import Progress, ReleaseRefused, build_release, release_options
from .options import ReleaseOptions, options_from_json, options_json
from .schema import TABLES

KEEP_ZIPS = 3  # finished zips kept per project
TABLE_NAMES = [t.name for t in TABLES]


def folder() -> Path:
    path = Path(settings.VAR_DIR) / "releases"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _key(options: dict[str, Any], version: int) -> str:
    text = json.dumps({"options": options, "data_version": version}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _fail(job_ids: list[int], error: str) -> None:
    ReleaseJob.objects.filter(pk__in=job_ids).exclude(status=ReleaseJob.FAILED).update(
        status=ReleaseJob.FAILED, error=error, finished_at=timezone.now()
    )


def _is_lost(job: ReleaseJob) -> bool:
    limit = timezone.now() - timedelta(seconds=settings.RELEASE_JOB_SECONDS)
    return not job.is_over and job.updated_at < limit


def _fail_lost_jobs(jobs: list[ReleaseJob]) -> None:
    """Jobs whose worker stopped reporting for RELEASE_JOB_SECONDS (killed): failed, and
    the folder the dead worker was writing removed."""
    lost = [j.pk for j in jobs if _is_lost(j)]
    _fail(lost, "The worker stopped reporting progress (killed?); nothing was released.")
    for pk in lost:
        for work in folder().glob(f"job-{pk}-*"):
            shutil.rmtree(work, ignore_errors=True)


def settle(job: ReleaseJob) -> ReleaseJob:
    """The job as its page and the API show it: failed if its worker was lost."""
    if _is_lost(job):
        _fail_lost_jobs([job])
        job.refresh_from_db()
    return job


def _fail_lost(project: Project, key: str) -> None:
    """The same build's job whose worker stopped reporting (killed), or whose zip is gone."""
    same = ReleaseJob.objects.filter(project=project, key=key).exclude(status=ReleaseJob.FAILED)
    _fail_lost_jobs(list(same))
    gone = [j.pk for j in same if j.status == ReleaseJob.FINISHED and not Path(j.path).is_file()]
    _fail(gone, "The zip was removed from the server: build the release again.")


def start_release(
    *, project: Project, user: User | None, options: ReleaseOptions
) -> tuple[ReleaseJob, bool]:
    """The job building the release of `project` with `options` at its current data
    version: a new one, enqueued after the commit (True), or the same build asked for
    before (False). `ReleaseRefused` when the options cannot be released (then no job)."""
    data = options_json(release_options(project, options))
    version = Project.objects.filter(pk=project.pk).values_list("data_version", flat=True).get()
    key = _key(data, version)
    _fail_lost(project, key)
    same = ReleaseJob.objects.filter(project=project, key=key).exclude(status=ReleaseJob.FAILED)
    if (found := same.first()) is not None:
        return found, False
    try:
        with transaction.atomic():
            job = ReleaseJob.objects.create(
                project=project, created_by=user, options=data, data_version=version, key=key
            )
            transaction.on_commit(lambda: run_release.enqueue(job.pk))
    except IntegrityError:  # the same asked for at the same moment: that one
        return same.get(), False
    return job, True


def _progress(job_id: int) -> Progress:
    def progress(table: str, rows: int) -> None:
        ReleaseJob.objects.filter(pk=job_id).update(
            phase=table,
            tables_done=TABLE_NAMES.index(table) if table in TABLE_NAMES else 0,
            rows=rows,
            updated_at=timezone.now(),
        )

    return progress


@task()
def run_release(job_id: int) -> str:
    """Build the job's release into a folder of its own, zip it, move the zip into place
    and mark the job finished; a failure is recorded (and re-raised when unexpected, so
    the task row and the worker's log have it). Returns the job's final status."""
    started = ReleaseJob.objects.filter(pk=job_id, status=ReleaseJob.QUEUED).update(
        status=ReleaseJob.RUNNING, phase="reading", updated_at=timezone.now()
    )
    if not started:
        return "skipped"  # another worker has it, or it is over
    job = ReleaseJob.objects.select_related("project").get(pk=job_id)
    # the data version the release holds (a write since the request: the newer data)
    ReleaseJob.objects.filter(pk=job_id).update(data_version=job.project.data_version)
    work: Path | None = None
    try:
        if job.project.deleted_at is not None:
            raise ReleaseRefused("the project was deleted")
        work = Path(tempfile.mkdtemp(prefix=f"job-{job.pk}-", dir=folder()))
        target = folder() / f"{job.pk}-{uuid.uuid4().hex}.zip"
        built = build_release(
            job.project,
            work / f"project-{job.project_id}-release",
            options_from_json(job.options),
            progress=_progress(job.pk),
            make_zip=True,
        )
        assert built.zip is not None
        ReleaseJob.objects.filter(pk=job.pk).update(phase="zip", updated_at=timezone.now())
        os.replace(built.zip, target)
    except ReleaseRefused as e:
        _fail([job.pk], str(e))
        return ReleaseJob.FAILED
    except Exception as e:
        _fail([job.pk], f"{type(e).__name__}: {e}")
        raise
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    ReleaseJob.objects.filter(pk=job.pk).update(
        status=ReleaseJob.FINISHED,
        phase="",
        tables_done=len(TABLE_NAMES),
        path=str(target),
        finished_at=timezone.now(),
    )
    _prune(job.project_id)
    return ReleaseJob.FINISHED


def _prune(project_id: int) -> None:
    finished = ReleaseJob.objects.filter(project_id=project_id, status=ReleaseJob.FINISHED)
    old = list(finished.order_by("-finished_at", "-pk")[KEEP_ZIPS:])
    for job in old:
        Path(job.path).unlink(missing_ok=True)
    _fail(
        [j.pk for j in old],
        f"The zip was removed (the newest {KEEP_ZIPS} releases of a project are kept): "
        "build it again.",
    )


def zip_name(job: ReleaseJob) -> str:
    return f"project-{job.project_id}-release.zip"


def progress_text(job: ReleaseJob) -> str:
    """What the job is doing, in words (the page and the API say the same)."""
    if job.status == ReleaseJob.QUEUED:
        return "Waiting for a worker (python manage.py db_worker)."
    if job.status == ReleaseJob.RUNNING:
        if job.phase in TABLE_NAMES:
            return (
                f"Writing table {job.tables_done + 1} of {len(TABLE_NAMES)} ({job.phase}): "
                f"{job.rows} rows so far."
            )
        if job.phase == "zip":
            return "Zipping the release."
        return "Reading the project and computing the agreement tables."
    if job.status == ReleaseJob.FINISHED:
        return "The release is ready."
    return job.error or "The build failed."
