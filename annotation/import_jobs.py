"""Large uploads import in the background (django.tasks, `manage.py db_worker`).

The upload is saved under VAR_DIR/imports/ and a task imports it with `import_file`
(streamed, validated whole, then written in batches in one transaction: all or nothing,
also when the worker is killed). The job row records the phase and the records
validated so far, and its `ImportOptions` (`as_record`); its page polls it.

The worker holds a lock on the upload while it imports, and records the job's end in
the import's own transaction. A worker that dies (killed, crashed, its machine gone)
loses the lock with its process: the job's page and API then see a running job whose
upload nobody holds and mark it failed; its transaction died with it, so nothing of the
file was written. Its task row (the database task backend's), which the dead worker
never ended, is failed with it. A task row RUNNING for longer than IMPORT_WORKER_TIMEOUT
whose worker never started the import (the job still queued) is failed and the job
requeued (nothing was read); one whose job is over is failed (`sweep_imports`).
"""

from __future__ import annotations

import fcntl
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.tasks import task
from django.utils import timezone

from . import tasks, webhooks
from .import_options import ImportOptions, ImportOptionsError
from .ingest import ImportFailed, ImportSummary, import_file
from .models import ImportJob, Project

PROGRESS_EVERY = 10_000  # records between two progress updates of the job row


def is_large(upload: UploadedFile) -> bool:
    return (upload.size or 0) > settings.IMPORT_BACKGROUND_MB * 2**20


def start_import(
    *, project: Project, user: User | None, upload: UploadedFile, options: ImportOptions
) -> ImportJob:
    """Save the upload and enqueue its import (after the commit); uploads left behind
    by a killed worker go first (`clean_uploads`)."""
    folder = Path(settings.VAR_DIR) / "imports"
    folder.mkdir(parents=True, exist_ok=True)
    clean_uploads()
    path = folder / f"{uuid.uuid4().hex}.upload"
    with open(path, "wb") as f:
        for chunk in upload.chunks():
            f.write(chunk)
    with transaction.atomic():
        job = ImportJob.objects.create(
            project=project,
            created_by=user,
            file_name=upload.name or "upload",
            path=str(path),
            options=options.as_record(),
        )
        transaction.on_commit(lambda: run_import.enqueue(job.pk))
    return job


@task()
def run_import(job_id: int) -> None:
    path, name = ImportJob.objects.values_list("path", "file_name").get(pk=job_id)
    try:
        held = open(path, "rb")  # held until the job is over
    except OSError as e:  # over (its upload is removed then), or the upload is lost
        ImportJob.objects.filter(pk=job_id, status=ImportJob.QUEUED).update(
            status=ImportJob.FAILED,
            errors=[f"{name}: cannot read ({e})"],
            finished_at=timezone.now(),
        )
        return
    with held:
        if not _lock(held) or not ImportJob.objects.filter(
            pk=job_id, status=ImportJob.QUEUED
        ).update(status=ImportJob.RUNNING, phase="read"):
            return  # another worker has it, or it is over
        _run(ImportJob.objects.get(pk=job_id))


def _lock(f: Any) -> bool:
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _run(job: ImportJob) -> None:
    def progress(phase: str, done: int, total: int) -> None:
        # The write phase runs inside the import's transaction: only its start is recorded.
        if phase == "read" and done % PROGRESS_EVERY == 0 or phase == "validated":
            ImportJob.objects.filter(pk=job.pk).update(
                records=done, phase="write" if phase == "validated" else "read"
            )

    def finished(summary: ImportSummary) -> None:  # in the import's transaction
        job.status, job.summary = ImportJob.FINISHED, str(summary)
        job.records = summary.documents_created + summary.documents_existing
        job.records += summary.documents_updated
        _save_end(job, summary)

    try:
        import_file(
            project=job.project,
            path=Path(job.path),
            file=job.file_name,
            progress=progress,
            options=ImportOptions.from_record(job.options),
            before_commit=finished,
        )
    except ImportFailed as e:
        job.status, job.errors = ImportJob.FAILED, [str(err) for err in e.errors]
        _save_end(job)
    except ImportOptionsError as e:  # stored by an older version that took other values
        job.status, job.errors = ImportJob.FAILED, [f"{job.file_name}: {e}"]
        _save_end(job)
    except OSError as e:
        job.status, job.errors = ImportJob.FAILED, [f"{job.file_name}: cannot read ({e})"]
        _save_end(job)
    Path(job.path).unlink(missing_ok=True)


def _save_end(job: ImportJob, summary: ImportSummary | None = None) -> None:
    job.finished_at = timezone.now()
    with transaction.atomic():
        job.save(update_fields=["status", "errors", "summary", "records", "finished_at"])
        webhooks.import_finished(
            job.project_id, job_id=job.pk, status=job.status, summary=summary,
            errors=len(job.errors),
        )  # fmt: skip


def fail_if_abandoned(job: ImportJob, *, now: datetime | None = None) -> None:
    """Mark a running job failed when no worker holds its upload any more (see the
    module's docstring), with its task row; a queued job's stale task row goes through
    `sweep_imports`. `job` is refreshed. The job's page and API call it."""
    now = now or tasks.clock()
    if job.status == ImportJob.QUEUED:
        _sweep_job(job.pk, now)
    elif job.status == ImportJob.RUNNING:
        _fail_running(job, now)
    job.refresh_from_db()


def _fail_running(job: ImportJob, now: datetime) -> bool:
    """A running job whose upload no worker holds: failed, its task row too, its upload
    removed. False while its worker is at work."""
    try:
        f = open(job.path, "rb")
    except FileNotFoundError:
        return False  # its worker is finishing: it removes the upload after recording the end
    with f:
        if not _lock(f):
            return False  # its worker is at work
        reason = (
            f"{job.file_name}: the import stopped during its {job.phase or 'read'} phase "
            "(its worker was killed or crashed); nothing was imported. Upload the file again."
        )
        # Only a job still running: its worker may have ended it since it was read.
        with transaction.atomic():
            failed = ImportJob.objects.filter(pk=job.pk, status=ImportJob.RUNNING).update(
                status=ImportJob.FAILED, errors=[reason], finished_at=now
            )
            if failed:
                webhooks.import_finished(
                    job.project_id, job_id=job.pk, status=ImportJob.FAILED, errors=1
                )
        if failed:
            Path(job.path).unlink(missing_ok=True)
    if failed:
        tasks.fail_task_rows(run_import, [job.pk], reason, now=now)
    return bool(failed)


def sweep_imports(*, now: datetime | None = None) -> int:
    """Fail the import task rows a killed worker left RUNNING for longer than
    IMPORT_WORKER_TIMEOUT, and deal with their jobs (`_sweep_job`). Called when an import
    starts and by a queued job's page; safe to call any time. Returns how many rows."""
    now = now or tasks.clock()
    started_before = now - timedelta(seconds=settings.IMPORT_WORKER_TIMEOUT)
    stale = tasks.running_task_args(run_import, started_before=started_before)
    return sum(_sweep_job(args[0], now) for args in stale if len(args) == 1)


def _sweep_job(job_id: int, now: datetime) -> int:
    """The stale task rows of one job: a running job's worker is gone when its upload's
    lock is free (a live worker holds it however long the import takes); a queued job's
    worker died before starting it, so nothing was read and the job is requeued as a new
    task; an over job's worker died after recording its end."""
    timeout = settings.IMPORT_WORKER_TIMEOUT
    started_before = now - timedelta(seconds=timeout)
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is not None and job.status == ImportJob.RUNNING:
        return int(_fail_running(job, now))
    if job is not None and job.status == ImportJob.QUEUED:
        reason = (
            f"{job.file_name}: the worker stopped reporting for more than {timeout} s "
            "before starting the import; nothing was read and the import was requeued."
        )
        n = tasks.fail_task_rows(
            run_import, [job_id], reason, now=now, started_before=started_before
        )
        if n:
            run_import.enqueue(job_id)
        return n
    reason = (
        f"The worker stopped reporting for more than {timeout} s after the import "
        f"{'was deleted' if job is None else 'ended (' + job.status + ')'}."
    )
    n = tasks.fail_task_rows(run_import, [job_id], reason, now=now, started_before=started_before)
    if job is not None:
        Path(job.path).unlink(missing_ok=True)
    return n


def clean_uploads() -> int:
    """Remove the uploads no import will read again: a finished or failed job's (its
    worker was killed between recording the end and removing it), one no job names,
    and a running job's whose worker is gone (`fail_if_abandoned` fails the job).
    Returns how many were removed. The import task rows a killed worker left RUNNING go
    first (`sweep_imports`)."""
    sweep_imports()
    folder = Path(settings.VAR_DIR) / "imports"
    files = sorted(folder.glob("*.upload")) if folder.is_dir() else []
    jobs = {j.path: j for j in ImportJob.objects.filter(path__in=[str(f) for f in files])}
    removed = 0
    for f in files:
        job = jobs.get(str(f))
        if job is not None and job.status == ImportJob.RUNNING:
            fail_if_abandoned(job)
        elif job is None or job.status != ImportJob.QUEUED:
            f.unlink(missing_ok=True)
        removed += not f.exists()
    return removed
