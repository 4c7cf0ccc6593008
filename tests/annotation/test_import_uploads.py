"""Issue 38 (low): `kill -9` left an upload file on disk. A finished or failed job's
upload, an upload no job names and a killed worker's running job's upload are removed
when the next import starts (`import_jobs.clean_uploads`); a queued job's stays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.import_jobs import clean_uploads, start_import
from annotation.import_options import ImportOptions
from annotation.models import ImportJob, Project


def test_uploads_left_by_a_killed_worker_are_removed_on_the_next_import(
    alpha: Project, settings: Any, tmp_path: Path
) -> None:
    settings.VAR_DIR = tmp_path
    folder = tmp_path / "imports"
    folder.mkdir()

    def left(name: str, status: str | None) -> Path:
        path = folder / f"{name}.upload"
        path.write_text("{}\n")
        if status is not None:
            ImportJob.objects.create(project=alpha, file_name=name, path=str(path), status=status)
        return path

    finished = left("finished", ImportJob.FINISHED)
    failed = left("failed", ImportJob.FAILED)
    orphan = left("orphan", None)
    killed = left("killed", ImportJob.RUNNING)  # its worker's lock went with it
    queued = left("queued", ImportJob.QUEUED)
    job = start_import(
        project=alpha,
        user=None,
        upload=SimpleUploadedFile("next.jsonl", b"{}\n"),
        options=ImportOptions(),
    )
    assert not finished.exists() and not failed.exists() and not orphan.exists()
    assert not killed.exists()
    assert ImportJob.objects.get(file_name="killed").status == ImportJob.FAILED
    assert queued.exists() and Path(job.path).exists()  # still to be read
    assert clean_uploads() == 0
