"""Large uploads import in the background (django.tasks, `manage.py db_worker`).

The upload is saved under VAR_DIR/imports/ and a task imports it with `import_file`
(streamed, validated whole, then written in batches in one transaction: all or nothing,
also when the worker is killed). The job row records the phase and the records
validated so far; its page polls it.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.tasks import task
from django.utils import timezone

from .ingest import ImportFailed, import_file
from .models import ImportJob, Project

PROGRESS_EVERY = 10_000  # records between two progress updates of the job row


def is_large(upload: UploadedFile) -> bool:
    return (upload.size or 0) > settings.IMPORT_BACKGROUND_MB * 2**20


def start_import(
    *, project: Project, user: User | None, upload: UploadedFile, options: dict[str, Any]
) -> ImportJob:
    """Save the upload and enqueue its import (after the commit)."""
    folder = Path(settings.VAR_DIR) / "imports"
    folder.mkdir(parents=True, exist_ok=True)
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
            options=options,
        )
        transaction.on_commit(lambda: run_import.enqueue(job.pk))
    return job


@task()
def run_import(job_id: int) -> None:
    if not ImportJob.objects.filter(pk=job_id, status=ImportJob.QUEUED).update(
        status=ImportJob.RUNNING, phase="read"
    ):
        return  # another worker has it, or it is over
    job = ImportJob.objects.get(pk=job_id)

    def progress(phase: str, done: int, total: int) -> None:
        # The write phase runs inside the import's transaction: only its start is recorded.
        if phase == "read" and done % PROGRESS_EVERY == 0 or phase == "validated":
            ImportJob.objects.filter(pk=job_id).update(
                records=done, phase="write" if phase == "validated" else "read"
            )

    try:
        summary = import_file(
            project=job.project,
            path=Path(job.path),
            file=job.file_name,
            progress=progress,
            **job.options,
        )
    except ImportFailed as e:
        job.status, job.errors = ImportJob.FAILED, [str(err) for err in e.errors]
    except OSError as e:
        job.status, job.errors = ImportJob.FAILED, [f"{job.file_name}: cannot read ({e})"]
    else:
        job.status, job.summary = ImportJob.FINISHED, str(summary)
        job.records = summary.documents_created + summary.documents_existing
        job.records += summary.documents_updated
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "errors", "summary", "records", "finished_at"])
    Path(job.path).unlink(missing_ok=True)
