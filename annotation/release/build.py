"""Build a release folder (and a zip): each table written as it is read, a batch of rows
at a time, to Parquet and JSON lines; then the source data's licence files, the card,
study.json and the Croissant file. Built in a folder beside the target, moved into place
when whole."""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings
from django.utils import timezone

from ..answers import collector_paused
from ..models import Project
from . import card, tables
from .croissant import croissant
from .options import FREE_TEXT, ReleaseOptions, project_options
from .schema import TABLES, TableSpec
from .stated import FILE as STUDY_FILE
from .stated import study_json
from .study import Study, available_licences, read_study

BATCH = 50_000
ENCODER = json.JSONEncoder(ensure_ascii=False)  # one for every row (json.dumps makes one each)
ARROW = {"string": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
Progress = Callable[[str, int], None]  # (table, rows written so far)


class ReleaseRefused(ValueError):
    """A release that cannot be built as asked (an unknown licence file, free text
    naming a member, an output folder in use)."""


@dataclass
class Release:
    folder: Path
    rows: dict[str, int]
    zip: Path | None = None


def arrow_schema(spec: TableSpec) -> pa.Schema:
    return pa.schema([pa.field(c.name, ARROW[c.type]) for c in spec.columns])


def write_table(
    folder: Path, spec: TableSpec, rows: Iterable[dict[str, Any]], progress: Progress | None
) -> int:
    schema = arrow_schema(spec)
    names = [c.name for c in spec.columns]
    count = 0
    parquet = folder / card.parquet_path(spec.name)
    jsonl = folder / card.jsonl_path(spec.name)
    it: Iterator[dict[str, Any]] = iter(rows)
    with pq.ParquetWriter(parquet, schema) as writer, open(jsonl, "w", encoding="utf-8") as out:
        while batch := list(islice(it, BATCH)):
            writer.write_table(pa.table({n: [r[n] for r in batch] for n in names}, schema=schema))
            out.writelines(ENCODER.encode(r) + "\n" for r in batch)
            count += len(batch)
            if progress:
                progress(spec.name, count)
        if not count:
            writer.write_table(schema.empty_table())
    if progress:
        progress(spec.name, count)
    return count


def personal_terms(project: Project) -> set[str]:
    """What must never appear in a release: members' account names and emails, and hired
    workers' crowd ids (of 6 characters or more: shorter ones are ordinary words)."""
    from ..hiring import Hire

    terms = set()
    for username, email in project.memberships.values_list("user__username", "user__email"):
        terms |= {username, email}
    terms |= set(
        Hire.objects.filter(membership__project=project).values_list("worker_id", flat=True)
    )
    return {t for t in terms if len(t) >= 6}


def check_free_text(project: Project, options: ReleaseOptions) -> None:
    terms = personal_terms(project)
    for name in FREE_TEXT:
        text = getattr(options, name).casefold()
        if any(t.casefold() in text for t in terms):
            raise ReleaseRefused(
                f"the card's {name.replace('_', ' ')} names a member or worker id of the "
                "project: nothing personal may go into a release"
            )
    known = set(available_licences())
    for name in options.source_licences:
        if name not in known:
            raise ReleaseRefused(
                f"unknown licence file {name!r}; one of: {', '.join(sorted(known))}"
            )


def _prepare(out: Path) -> Path:
    """A new folder beside `out` to build in (moved to `out` once whole)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReleaseRefused(f"{out} exists and is not an empty folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    (work / "data").mkdir()
    (work / "jsonl").mkdir()
    return work


def _move_into_place(work: Path, out: Path) -> None:
    if out.is_dir():
        out.rmdir()  # empty (checked by _prepare); refused if something was put there since
    work.rename(out)


def _licences(out: Path, names: tuple[str, ...]) -> list[str]:
    copied = []
    root = settings.BASE_DIR / "fixtures"
    for name in names:
        target = out / "LICENSES" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / name, target)
        copied.append(name)
    return copied


def release_options(
    project: Project, options: ReleaseOptions | None = None, study: Study | None = None
) -> ReleaseOptions:
    """The options a release is built with, checked (`ReleaseRefused`): empty free-text
    parts filled from the project; none given, the project's (`project_options`)."""
    study = study or read_study(project)
    if options is None:
        options = project_options(project, study)
    options = options.with_defaults(project, study)
    check_free_text(project, options)
    return options


@collector_paused()
def build_release(
    project: Project,
    out: Path,
    options: ReleaseOptions | None = None,
    *,
    progress: Progress | None = None,
    make_zip: bool = False,
) -> Release:
    """Write the release of `project` into the folder `out` (new or empty). It is built in
    a folder beside `out` and moved to `out` when whole: a build that fails leaves nothing
    at `out` (its partial folder is removed)."""
    study = read_study(project)
    options = release_options(project, options, study)
    work = _prepare(out)
    try:
        rows = _write(project, work, options, study, progress)
        _move_into_place(work, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    release = Release(out, rows)
    if make_zip:
        release.zip = zip_folder(out, out.with_suffix(".zip"))
    return release


def _write(
    project: Project,
    out: Path,
    options: ReleaseOptions,
    study: Study,
    progress: Progress | None,
) -> dict[str, int]:
    ids = tables.ReleaseIds(project)
    sections = tables.report_sections(project, bootstrap=options.bootstrap)
    readers = {
        "items": tables.item_rows(project, ids),
        "annotations": tables.annotation_rows(project, ids),
        "gold": tables.gold_rows(project, ids),
        "metric_outputs": tables.metric_rows(project, ids),
        "agreement": tables.agreement_rows(sections),
    }
    rows = {spec.name: write_table(out, spec, readers[spec.name], progress) for spec in TABLES}
    method = tables.gold_method(project)
    licences = _licences(out, options.source_licences)
    text = card.body(study, options, rows, sections, method, licences)
    (out / "README.md").write_text(card.card_text(card.header(options, rows), text), "utf-8")
    stated = json.dumps(study_json(study, options, method), indent=1, ensure_ascii=False)
    (out / STUDY_FILE).write_text(stated + "\n", "utf-8")
    published = timezone.now().date().isoformat()
    meta = croissant(out, study, options, method, published)
    (out / "croissant.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False), "utf-8")
    return rows


def zip_folder(folder: Path, target: Path) -> Path:
    """The folder's files in a zip, under a top folder of the release's name."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            z.write(path, Path(folder.name) / path.relative_to(folder))
    return target
