"""Outside data -> models: the one path by which files and pipeline results reach the database.

Files are read by `pipeline.dataformats` (one module per format). Every import is
validated whole before anything is written, and written in one transaction: a file
with one unusable record imports nothing, and each error names the file, the line,
the field and what is wrong. Published oddities are accepted with a warning.
"""

from __future__ import annotations

import gc
import json
import queue
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field, replace
from itertools import batched, islice
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile, UploadedFile
from django.db import connection, models, transaction
from django.tasks import task
from django.utils import timezone

from pipeline.dataformats import (
    ImportFailed,
    LineError,
    canonical,
    decode,
    iter_records,
    mapped,
    scan_file,
    web_link,
)
from pipeline.dataformats.common import (
    MAX_LINK,
    SOURCE,
    ClaimRecord,
    DocRecord,
    EvidenceRecord,
    ListRecord,
    SegmentRecord,
    label,
)
from pipeline.dataformats.factscore import HUMAN as FACTSCORE_HUMAN
from pipeline.dataformats.factscore import LABELS as FACTSCORE_LABELS
from pipeline.dataformats.factscore import MODEL as FACTSCORE_MODEL
from pipeline.dataformats.felm import LABELS as FELM_LABELS
from pipeline.dataformats.veriscore import NO_CLAIM
from pipeline.types import ERROR, ResponseResult

from . import kinds
from .dbstats import analyze_after_write
from .import_options import ImportOptions
from .models import (
    Answer,
    Claim,
    ClaimList,
    Document,
    Evidence,
    Project,
    Segment,
    System,
    Verdict,
    bump_data_version,
)

__all__ = [
    "FACTSCORE_HUMAN",
    "FACTSCORE_LABELS",
    "FACTSCORE_MODEL",
    "FELM_LABELS",
    "NO_CLAIM",
    "ImportFailed",
    "ImportOptions",
    "ImportSummary",
    "LineError",
    "decode",
    "import_file",
    "import_upload",
    "ingest_results",
    "preview_file",
    "preview_upload",
    "save_records",
]

BATCH = 1000  # records written per batch (each batch: a few bulk inserts)
Progress = Callable[[str, int, int], None]  # (phase, done, total)

DOCUMENT_FIELDS = ("response", "question", "domain", "source_model", "metadata")


def warnings_text(warnings: list[Any]) -> str:
    """ "N warning(s):" and one line each, as an import's summary ends."""
    return f"{len(warnings)} warning(s):\n" + "\n".join(map(str, warnings))


@dataclass
class ImportSummary:
    format: str
    documents_created: int = 0
    documents_existing: int = 0
    documents_updated: int = 0
    claim_lists_created: int = 0
    claim_lists_existing: int = 0
    claim_lists_replaced: int = 0
    claims_created: int = 0
    evidence_created: int = 0
    segments_created: int = 0
    verdicts_created: int = 0
    warnings: list[LineError] = field(default_factory=list)

    def __str__(self) -> str:
        updated = f", {self.documents_updated} updated" if self.documents_updated else ""
        replaced = f", {self.claim_lists_replaced} replaced" if self.claim_lists_replaced else ""
        text = (
            f"{self.format}: {self.documents_created} new document(s), "
            f"{self.documents_existing} already present{updated}; "
            f"{self.claim_lists_created} new claim list(s) ({self.claims_created} claims), "
            f"{self.claim_lists_existing} already present"
            f"{replaced}; {self.evidence_created} search result(s), {self.segments_created} "
            f"segment(s), {self.verdicts_created} label(s)"
        )
        return text + (f"; {warnings_text(self.warnings)}" if self.warnings else "")


def import_file(
    *,
    project: Project,
    text: str | bytes | None = None,
    path: Path | None = None,
    file: str,
    options: ImportOptions | None = None,
    progress: Progress | None = None,
    before_commit: Callable[[ImportSummary], None] | None = None,
    **changes: Any,
) -> ImportSummary:
    """Read a file (its `text`, or streamed from `path`) with `options` (the defaults
    when None, each field named in `changes` replaced: `import_file(..., fmt="felm")`) and
    write it; ImportFailed (nothing written) on any error. `before_commit(summary)` runs
    inside the write transaction, after the last batch (a background job records its end
    there).

    Two passes keep memory bounded whatever the file's size: the first validates every
    record and keeps only ids; the second reads the records again and writes them in
    batches inside one transaction. `progress(phase, done, total)` is called as it goes
    ("read": bytes or lines, "write": records)."""
    o = replace(options or ImportOptions(), **changes)
    source = _source(text, path, file, o)
    reading = o.reader_options()
    with _fewer_collections():
        fmt, count, warnings = scan_file(
            source, file=file, fmt=o.reader, progress=progress, **reading
        )
        if progress:
            progress("validated", count, count)

        def finish(summary: ImportSummary) -> None:
            summary.warnings = warnings
            if before_commit:
                before_commit(summary)

        records = iter_records(source, file=file, fmt=fmt, **reading)
        if count > BATCH:  # a file of one batch gains nothing from a reading thread
            records = read_ahead(records)
        with closing(records):
            return save_records(
                project=project,
                records=records,
                fmt=fmt,
                file=file,
                update=o.update,
                progress=progress,
                total=count,
                before_commit=finish,
            )


def _source(
    text: str | bytes | None, path: Path | None, file: str, options: ImportOptions
) -> str | Path:
    """The source of an import: the text (decoded) or the path; a mapping file is
    compiled first (ImportFailed naming its lines)."""
    if text is None and path is None:
        raise TypeError("import_file needs text or path")
    if options.mapping:  # any other layout, read through a mapping file (checked first)
        mapped.compile_mapping(options.mapping, options.mapping_file)
    if text is None:
        assert path is not None
        return path
    return decode(text, file) if isinstance(text, bytes) else text


PREVIEW_CHARS = 600  # a preview's value longer than this is cut (the whole is imported)


@dataclass
class Preview:
    """A dry run: the file is valid; its first records as they would be stored."""

    format: str
    records: int
    warnings: list[LineError]
    first: list[dict[str, Any]]

    @property
    def jsonl(self) -> str:
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.first)

    @property
    def fields(self) -> list[list[tuple[str, str]]]:
        """Per first record, (field, value) to read as a table: text as it is, anything
        else as compact JSON, each value cut at PREVIEW_CHARS characters."""
        out = []
        for record in self.first:
            rows = []
            for key, value in record.items():
                text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                if len(text) > PREVIEW_CHARS:
                    text = text[:PREVIEW_CHARS] + f"… ({len(text):,} characters)"
                rows.append((key, text))
            out.append(rows)
        return out

    def __str__(self) -> str:
        text = (
            f"{self.format}: {self.records} record(s) valid, nothing imported (dry run); "
            f"the first {len(self.first)} as canonical JSONL:\n{self.jsonl}"
        )
        return text + (warnings_text(self.warnings) if self.warnings else "")


def preview_file(
    *,
    text: str | bytes | None = None,
    path: Path | None = None,
    file: str,
    options: ImportOptions | None = None,
    limit: int = 3,
    **changes: Any,
) -> Preview:
    """Validate a file as `import_file` does before writing (ImportFailed), and give its
    first `limit` records as canonical JSONL records: nothing is written (`update` is
    ignored). (An id already in the project with other data is found only by the import
    itself.)"""
    o = replace(options or ImportOptions(), **changes)
    source = _source(text, path, file, o)
    reading = o.reader_options()
    fmt, count, warnings = scan_file(source, file=file, fmt=o.reader, progress=None, **reading)
    with closing(iter_records(source, file=file, fmt=fmt, **reading)) as records:
        first = [canonical.write(r) for r in islice(records, limit)]
    return Preview(fmt, count, warnings, first)


def read_ahead(records: Iterator[DocRecord]) -> Generator[DocRecord]:
    """The records, read by a thread one batch ahead of the caller: the sqlite3 module
    lets go of the GIL while SQLite writes a batch, so the next one is read meanwhile
    (memory: two batches). An error of the reading is raised here, at its place in the
    stream; when the caller stops early, the thread stops too (and closes `records`)."""
    batches: queue.Queue[list[DocRecord] | BaseException | None] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def read() -> None:
        try:
            for batch in batched(records, BATCH):
                if stop.is_set():
                    return
                batches.put(list(batch))
            batches.put(None)
        except BaseException as e:  # handed to the caller, who raises it
            batches.put(e)
        finally:
            close = getattr(records, "close", None)
            if close:
                close()

    thread = threading.Thread(target=read, name="import-read-ahead", daemon=True)
    thread.start()
    try:
        while (item := batches.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield from item
    finally:
        stop.set()
        while thread.is_alive():  # let a blocked put through until the thread ends
            try:
                batches.get(timeout=0.1)
            except queue.Empty:
                pass


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """An import makes millions of small objects, a batch of which lives at a time. With
    Python's default thresholds the cyclic collector runs every 700 allocations and
    often walks every object of the process: the objects that exist are frozen and the
    collector runs less often meanwhile (measured: the write phase takes half the CPU)."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def import_upload(
    *,
    project: Project,
    upload: UploadedFile,
    options: ImportOptions,
    before_commit: Callable[[ImportSummary], None] | None = None,
) -> ImportSummary:
    """An uploaded file (upload page, API): refused above IMPORT_MAX_MB; one that Django
    spooled to disk is streamed from there."""
    check_upload_size(upload)
    name = upload.name or "upload"
    given: dict[str, Any] = {"options": options, "before_commit": before_commit}
    if isinstance(upload, TemporaryUploadedFile):
        path = Path(upload.temporary_file_path())
        return import_file(project=project, path=path, file=name, **given)
    return import_file(project=project, text=upload.read(), file=name, **given)


def preview_upload(*, upload: UploadedFile, options: ImportOptions) -> Preview:
    """`preview_file` of an upload (the upload page's and the API's dry run): one the
    web request reads whole, so none that an import would do in the background."""
    check_upload_size(upload)
    name = upload.name or "upload"
    limit, size = settings.IMPORT_BACKGROUND_MB, upload.size or 0
    if size > limit * 2**20:
        raise ImportFailed(
            [
                LineError(
                    name,
                    0,
                    "",
                    f"is {size / 2**20:.0f} MB; a preview is for files up to {limit:g} MB "
                    "(IMPORT_BACKGROUND_MB): use manage.py import_data --dry-run",
                )
            ]
        )
    if isinstance(upload, TemporaryUploadedFile):
        return preview_file(path=Path(upload.temporary_file_path()), file=name, options=options)
    return preview_file(text=upload.read(), file=name, options=options)


def check_upload_size(upload: UploadedFile) -> None:
    """ImportFailed for an upload above IMPORT_MAX_MB."""
    limit = settings.IMPORT_MAX_MB
    if upload.size is not None and upload.size > limit * 2**20:
        raise ImportFailed(
            [
                LineError(
                    upload.name or "upload",
                    0,
                    "",
                    f"is {upload.size / 2**20:.0f} MB; uploads are limited to {limit} MB "
                    "(IMPORT_MAX_MB); import larger files with manage.py import_data",
                )
            ]
        )


def _system_specs(records: list[DocRecord], origin: str) -> dict[str, dict[str, str]]:
    specs: dict[str, dict[str, str]] = {}
    for r in records:
        names = [
            v
            for lst in r.lists.values()
            if lst.texts is None
            for c in lst.claims
            for v in c.verdicts
        ]
        names += [v for seg in r.segments for v in seg.verdicts]
        for vname in names:
            specs.setdefault(
                vname, {"kind": r.verdict_kinds.get(vname, System.VERIFIER), "origin": origin}
            )
        for name in r.lists:
            specs.setdefault(name, {"kind": System.EXTRACTOR, "origin": origin})
    return specs


def _plain(metadata: dict[str, Any]) -> dict[str, Any]:
    """Metadata as compared for identity: without our own writer data, numbers as floats
    (PostgreSQL's jsonb gives 1.5e300 back as the exact integer 15 followed by 299 zeros)."""
    return {k: _number_free(v) for k, v in metadata.items() if k != SOURCE}


def _number_free(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _number_free(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_number_free(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer beyond any float: compared as it is
            return value
    return value


def _answered(**filters: Any) -> bool:
    return Answer.objects.filter(**filters).exists()


def save_records(
    *,
    project: Project,
    records: Iterable[DocRecord],
    fmt: str,
    file: str = "",
    update: bool = False,
    systems: dict[str, dict[str, Any]] | None = None,
    check_identity: bool = True,
    progress: Progress | None = None,
    total: int = 0,
    before_commit: Callable[[ImportSummary], None] | None = None,
) -> ImportSummary:
    """Write parsed records in one transaction, BATCH records at a time.

    A document is matched on its id: the same document fields -> already present; new
    claim lists, evidence and verdicts for it are added; different document fields, a
    different claim list for one of its systems or different segments -> ImportFailed,
    unless `update` replaces them (refused where people have answered items on them).
    `systems` gives the defaults of systems created here (pipeline runs); without
    `check_identity` a known document and its known lists are kept as they are."""
    summary = ImportSummary(format=fmt)
    known: dict[str, System] = {}
    done = 0
    with transaction.atomic():
        _check_constraints_per_statement(True)
        for batch in batched(records, BATCH):
            _save_batch(
                project,
                list(batch),
                fmt=fmt,
                file=file,
                update=update,
                systems=systems,
                check_identity=check_identity,
                known=known,
                summary=summary,
            )
            done += len(batch)
            if progress:
                progress("write", done, total)
        _check_constraints_per_statement(False)
        bump_data_version(project.pk)
        if summary.documents_created or summary.documents_updated:
            # after the commit (robust: the import stands when the queue fails; the
            # report then counts what is missing itself)
            transaction.on_commit(lambda: count_sentences.enqueue(project.pk), robust=True)
        analyze_after_write(summary)  # so that a report right after plans well
        if before_commit:
            before_commit(summary)
    return summary


@task()
def count_sentences(project_id: int) -> int:
    """The sentence counts the reports need, stored after an import (in the background,
    `manage.py db_worker`): splitting is too slow for the import itself (about 2.7 s of
    CPU per 1,000 real responses, docs/researchers/importing.md)."""
    from .reports.metrics import store_sentence_counts

    return store_sentence_counts(project_id)


def _check_constraints_per_statement(on: bool) -> None:
    """PostgreSQL: the foreign keys (Django's are DEFERRABLE INITIALLY DEFERRED) checked
    at the end of each statement of the import (on) instead of all at COMMIT, then back to
    deferred for the rest of the caller's transaction (off). The same checks: at COMMIT the
    queue of 3,000,000 checks of a 100,000-line import took a third of the import's time
    (docs/development.md, Benchmarks; a claim's list is now checked by a statement-level
    trigger instead, annotation/claim_fk.py, which was always immediate: the documents'
    and claim lists' keys remain). A rollback to the import's savepoint restores the mode
    too."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"SET CONSTRAINTS ALL {'IMMEDIATE' if on else 'DEFERRED'}")


def _save_batch(
    project: Project,
    records: list[DocRecord],
    *,
    fmt: str,
    file: str,
    update: bool,
    systems: dict[str, dict[str, Any]] | None,
    check_identity: bool,
    known: dict[str, System],
    summary: ImportSummary,
) -> None:
    specs = {**_system_specs(records, f"import:{fmt}"), **(systems or {})}
    existing = {d.external_id: d for d in _known_documents(project, records)}
    if check_identity:
        _check_identity(records, existing, file, update)
    missing = [name for name in specs if name not in known]
    if missing:
        known.update((s.name, s) for s in System.objects.filter(project=project, name__in=missing))
        for name in missing:
            if name not in known:
                known[name] = System.objects.create(project=project, name=name, **specs[name])
    _create_documents(
        project, [r for r in records if r.external_id not in existing], known, summary
    )
    for r in records:
        doc = existing.get(r.external_id)
        if doc is None:
            continue
        _merge_document(doc, r, update and check_identity, summary)
        present = {cl.system.name: cl for cl in doc.claim_lists.select_related("system")}
        for name, lst in r.lists.items():
            cl = present.get(name)
            if cl is not None and update and check_identity and _list_differs(cl, lst):
                cl.delete()
                summary.claim_lists_replaced += 1
                cl = None
            if cl is None:
                cl = ClaimList.objects.create(
                    document=doc, system=known[name], abstained=lst.abstained
                )
                claims = Claim.objects.bulk_create(_claims(cl, lst))
                summary.claim_lists_created += 1
                summary.claims_created += len(claims)
                pairs = list(zip(claims, lst.claims, strict=True))
            else:
                summary.claim_lists_existing += 1
                by_text = {c.text: c for c in cl.claims.all()}
                pairs = [(by_text[c.text], c) for c in lst.claims if c.text in by_text]
            _add_evidence_and_verdicts(pairs, known, summary)
        _add_segments(doc, r.segments, known, summary, replace=update and check_identity)


def _known_documents(project: Project, records: list[DocRecord]) -> Iterable[Document]:
    """The documents of the project that have the records' ids, each looked up by the
    unique index on (project, external id). SQLite: unordered (ordered by id, it walked
    every document of the project instead). PostgreSQL: one probe per id, forced (a
    LATERAL subquery with LIMIT is not flattened into a join): without statistics (a
    large import's own rows) the planner read every document of the project for each
    batch instead, filtering them by the 1,000 ids (a 100,000-line import: 106 s of
    server CPU instead of 19 s)."""
    ids = [r.external_id for r in records]
    if connection.vendor != "postgresql":
        return Document.objects.filter(project=project, external_id__in=ids).order_by()
    table = connection.ops.quote_name(Document._meta.db_table)
    return Document.objects.raw(
        f"SELECT d.* FROM unnest(%s::text[]) AS wanted(external_id), LATERAL (SELECT * "
        f"FROM {table} WHERE project_id = %s AND external_id = wanted.external_id LIMIT 1) d",
        [ids, project.pk],
    )


def _claims(cl: ClaimList, lst: ListRecord) -> list[Claim]:
    return [
        Claim(
            claim_list=cl,
            position=i,
            text=c.text,
            sentence_index=c.sentence_index,
            sentence=c.sentence,
        )
        for i, c in enumerate(lst.claims)
    ]


def _table(model: type[models.Model], columns: tuple[str, ...]) -> tuple[str, str]:
    quote = connection.ops.quote_name
    names = ", ".join(quote(model._meta.get_field(c).column) for c in columns)  # type: ignore[union-attr, arg-type]
    return quote(model._meta.db_table), names


def _insert_returning(
    model: type[models.Model], columns: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> list[int]:
    """Plain rows into a model's table, a few multi-row INSERTs (PostgreSQL: COPY); their
    new ids, in order (as Django's bulk_create, which relies on RETURNING giving the rows
    in order)."""
    if connection.vendor == "postgresql":
        return _copy_rows(model, columns, rows, len(rows))
    table, names = _table(model, columns)
    pk = connection.ops.quote_name(model._meta.pk.column)  # type: ignore[arg-type]
    limit = min(connection.features.max_query_params or 65535, 65535) // len(columns)
    ids: list[int] = []
    with connection.cursor() as cursor:
        for chunk in batched(rows, limit):
            marks = ", ".join([f"({', '.join(['%s'] * len(columns))})"] * len(chunk))
            cursor.execute(
                f"INSERT INTO {table} ({names}) VALUES {marks} RETURNING {pk}",
                [v for row in chunk for v in row],
            )
            ids += [r[0] for r in cursor.fetchall()]
    return ids


CLAIM_COLUMNS = ("claim_list", "position", "text", "sentence_index", "sentence")


def _copy_rows(
    model: type[models.Model],
    columns: tuple[str, ...],
    rows: Iterable[tuple[Any, ...]],
    n: int | None,
) -> list[int]:
    """PostgreSQL: `n` rows into a model's table with COPY (psycopg 3), in the caller's
    transaction, under the table's constraints like an INSERT; their new ids, in order,
    taken from the table's sequence beforehand (COPY returns none). `n` None: any number
    of rows, whose ids the table's identity default gives and nobody needs (none are
    sent back and forth: 30 claims a document)."""
    if n == 0:
        return []
    table, names = _table(model, columns)
    pk = str(model._meta.pk.column)
    with connection.cursor() as cursor:
        ids: list[int] = []
        if n is not None:
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                [model._meta.db_table, pk, n],
            )
            ids = [r[0] for r in cursor.fetchall()]
            names = f"{connection.ops.quote_name(pk)}, {names}"
            rows = ((pk_value, *row) for pk_value, row in zip(ids, rows, strict=True))
        # psycopg's own errors, raised as Django's (IntegrityError...) like an INSERT's
        with (
            connection.wrap_database_errors,
            cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)
    return ids


def _copy_claims(lists: list[tuple[int, ListRecord]]) -> None:
    """PostgreSQL: the claims without evidence or verdicts of new claim lists, with COPY,
    written as COPY's text format by hand: one string for the batch instead of a
    write_row call per claim (3,000,000 of them in a 100,000-line file)."""
    if not lists:
        return
    lines: list[str] = []
    for pk, lst in lists:
        if lst.texts is not None:  # plain texts: no ClaimRecords
            lines += [f"{pk}\t{i}\t{_copy_text(t)}\t\\N\t\n" for i, t in enumerate(lst.texts)]
        else:
            lines += [
                f"{pk}\t{i}\t{_copy_text(c.text)}\t"
                f"{'\\N' if c.sentence_index is None else c.sentence_index}\t"
                f"{_copy_text(c.sentence)}\n"
                for i, c in enumerate(lst.claims)
            ]
    table, names = _table(Claim, CLAIM_COLUMNS)
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
    ):
        copy.write("".join(lines))


def _copy_text(value: str) -> str:
    """A text in COPY's text format: backslash, tab, newline and carriage return escaped."""
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        value = value.replace("\\", "\\\\").replace("\t", "\\t")
        return value.replace("\n", "\\n").replace("\r", "\\r")
    return value


def _insert_claims(lists: list[tuple[int, ListRecord]]) -> None:
    """Claims without evidence or verdicts of new claim lists (SQLite: PostgreSQL takes
    _copy_claims): each list expanded from its JSON text (json_each, in C)."""
    if not lists:
        return
    table, names = _table(Claim, CLAIM_COLUMNS)
    insert = f"INSERT INTO {table} ({names}) "
    with connection.cursor() as cursor:
        texts, full = [], []
        for pk, lst in lists:
            if lst.texts is not None:
                texts.append((pk, lst.texts))
            elif any(c.sentence or c.sentence_index is not None for c in lst.claims):
                rows3 = [[c.text, c.sentence_index, c.sentence] for c in lst.claims]
                full.append((pk, json.dumps(rows3, ensure_ascii=False)))
            else:
                texts.append((pk, [c.text for c in lst.claims]))
        if texts:  # the whole batch in one JSON text: {list id: [claim text, ...], ...}
            # (the id is the key: a json_extract of the list's text in the select list
            # would parse the whole list again for each claim, quadratic in its length)
            cursor.execute(
                insert + "SELECT CAST(l.key AS INTEGER), c.key, c.value, NULL, '' "
                "FROM json_each(%s) AS l, json_each(l.value) AS c",
                [json.dumps(dict(texts), ensure_ascii=False)],
            )
        cursor.executemany(
            insert + "SELECT %s, key, json_extract(value, '$[0]'), json_extract(value, '$[1]'), "
            "json_extract(value, '$[2]') FROM json_each(%s)",
            full,
        )


def _create_documents(
    project: Project, records: list[DocRecord], known: dict[str, System], summary: ImportSummary
) -> None:
    """New documents with all they hold, a few multi-row inserts per batch."""
    if not records:
        return
    metadata = Document._meta.get_field("metadata")
    no_metadata = metadata.get_db_prep_save({}, connection)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    doc_ids = _insert_returning(
        Document,
        (
            "project",
            "external_id",
            "response",
            "question",
            "domain",
            "source_model",
            "metadata",
            "created_at",
        ),
        [
            (
                project.pk,
                r.external_id,
                r.response,
                r.question,
                r.domain,
                r.source_model,
                metadata.get_db_prep_save(r.metadata, connection) if r.metadata else no_metadata,
                now,
            )
            for r in records
        ],
    )
    summary.documents_created += len(doc_ids)
    lists = [
        (d, name, lst)
        for d, r in zip(doc_ids, records, strict=True)
        for name, lst in r.lists.items()
    ]
    list_ids = _insert_returning(
        ClaimList,
        ("document", "system", "abstained"),
        [(d, known[name].pk, lst.abstained) for d, name, lst in lists],
    )
    summary.claim_lists_created += len(list_ids)
    evidence, verdicts = _create_claims(list_ids, [lst for _, _, lst in lists], known, summary)
    segments = Segment.objects.bulk_create(
        Segment(document_id=d, position=i, text=s.text)
        for d, r in zip(doc_ids, records, strict=True)
        for i, s in enumerate(r.segments)
    )
    seg_records = (s for r in records for s in r.segments)
    verdicts += [
        Verdict(segment=seg, system=known[name], label=value)
        for seg, s in zip(segments, seg_records, strict=True)
        for name, value in s.verdicts.items()
    ]
    Evidence.objects.bulk_create(evidence)
    Verdict.objects.bulk_create(verdicts)
    summary.evidence_created += len(evidence)
    summary.verdicts_created += len(verdicts)
    summary.segments_created += len(segments)


def _create_claims(
    list_ids: list[int], lists: list[ListRecord], known: dict[str, System], summary: ImportSummary
) -> tuple[list[Evidence], list[Verdict]]:
    """The claims of the new claim lists (`list_ids`, in the order of `lists`); returns
    their evidence and verdicts, still to be inserted."""
    # Claims with evidence or verdicts are created as models (their ids are needed);
    # plain claims, the bulk of a large file, go in as rows.
    plain, rich = [], []
    for cl, lst in zip(list_ids, lists, strict=True):
        if lst.texts is None and any(c.evidence or c.verdicts for c in lst.claims):
            rich.append((cl, lst))
        else:
            plain.append((cl, lst))
    if connection.vendor == "postgresql":
        _copy_claims(plain)
    else:
        _insert_claims(plain)
    claims = Claim.objects.bulk_create(
        c for cl, lst in rich for c in _claims(ClaimList(pk=cl), lst)
    )
    summary.claims_created += sum(len(lst.texts or lst.claims) for _, lst in plain) + len(claims)
    pairs = zip(claims, (c for _, lst in rich for c in lst.claims), strict=True)
    evidence, verdicts = [], []
    for claim, record in pairs:
        evidence += [
            Evidence(claim=claim, rank=rank, title=e.title, snippet=e.snippet, link=e.link)
            for rank, e in enumerate(record.evidence, start=1)
        ]
        verdicts += [
            Verdict(
                claim=claim,
                system=known[name],
                label=value,
                raw_output=record.raw_outputs.get(name, ""),
            )
            for name, value in record.verdicts.items()
        ]
    return evidence, verdicts


def _check_identity(
    records: list[DocRecord], existing: dict[str, Document], file: str, update: bool
) -> None:
    errors = []
    for r in records:
        doc = existing.get(r.external_id)
        if doc is None:
            continue
        where = f"document {doc.external_id!r} (stored as #{doc.pk})"
        stored = {
            "response": doc.response,
            "question": doc.question,
            "domain": doc.domain,
            "source_model": doc.source_model,
            "metadata": _plain(doc.metadata),
        }
        new = {
            "response": r.response,
            "question": r.question,
            "domain": r.domain,
            "source_model": r.source_model,
            "metadata": _plain(r.metadata),
        }
        differ = [f for f in DOCUMENT_FIELDS if stored[f] != new[f]]
        if differ and not update:
            errors.append(
                LineError(
                    file,
                    r.line,
                    differ[0],
                    f"differs from the stored {where} "
                    f"({', '.join(differ)}); use --update to replace it",
                )
            )
        errors += _list_conflicts(r, doc, where, file, update)
        errors += _segment_conflicts(r, doc, where, file, update)
    if errors:
        raise ImportFailed(errors)


def _list_conflicts(
    r: DocRecord, doc: Document, where: str, file: str, update: bool
) -> list[LineError]:
    """Why `r`'s claim lists may not replace those stored for `doc`: they differ and
    there is no --update, or annotators answered them."""
    errors: list[LineError] = []
    lists = {cl.system.name: cl for cl in doc.claim_lists.select_related("system")}
    for name, lst in r.lists.items():
        cl = lists.get(name)
        if cl is None or not _list_differs(cl, lst):
            continue
        if not update:
            errors.append(
                LineError(
                    file,
                    r.line,
                    name,
                    f"the claim list of system {name!r} differs "
                    f"from the one stored for {where}; use --update to replace it",
                )
            )
        elif (
            _answered(assignment__item__claim__claim_list=cl)
            or _answered(assignment__item__list_a=cl)
            or _answered(assignment__item__list_b=cl)
        ):
            errors.append(
                LineError(
                    file,
                    r.line,
                    name,
                    f"the claim list of system {name!r} of {where} "
                    "has answers from annotators: it cannot be replaced",
                )
            )
    return errors


def _segment_conflicts(
    r: DocRecord, doc: Document, where: str, file: str, update: bool
) -> list[LineError]:
    """Why `r`'s segments may not replace those stored for `doc`: they differ and there
    is no --update, or annotators answered them."""
    errors: list[LineError] = []
    segments = [s.text for s in doc.segments.all()]
    if r.segments and segments and segments != [s.text for s in r.segments]:
        if not update:
            errors.append(
                LineError(
                    file,
                    r.line,
                    "segments",
                    f"differ from those stored for {where}; use --update to replace them",
                )
            )
        elif _answered(
            assignment__item__document=doc,
            assignment__item__kind__in=[k.name for k in kinds.judging(Segment)],
        ):
            errors.append(
                LineError(
                    file,
                    r.line,
                    "segments",
                    f"the segments of {where} have answers "
                    "from annotators: they cannot be replaced",
                )
            )
    return errors


def _list_differs(cl: ClaimList, lst: ListRecord) -> bool:
    """Other claims, or other sentences for them. A file that does not say which sentence
    a claim came from (VeriScore's evidence step without claim_list) agrees with any."""
    stored = list(cl.claims.all())
    if cl.abstained != lst.abstained or [c.text for c in stored] != [c.text for c in lst.claims]:
        return True
    return any(
        (new.sentence_index is not None and new.sentence_index != old.sentence_index)
        or (new.sentence and new.sentence != old.sentence)
        for old, new in zip(stored, lst.claims, strict=True)
    )


def _merge_document(doc: Document, r: DocRecord, update: bool, summary: ImportSummary) -> None:
    """A known document: replace its fields (update) or keep them, adding what a later
    file of the same record says about its source (e.g. VeriScore's verification step)."""
    if update:
        changed = any(getattr(doc, f) != getattr(r, f) for f in DOCUMENT_FIELDS)
        for f in DOCUMENT_FIELDS:
            setattr(doc, f, getattr(r, f))
        summary.documents_updated += changed
        summary.documents_existing += not changed
        if changed:
            doc.save()
        return
    summary.documents_existing += 1
    metadata = dict(doc.metadata)
    source, old = r.metadata.get(SOURCE), doc.metadata.get(SOURCE)
    if isinstance(source, dict) and isinstance(old, dict):
        merged = {**source, **old}
        merged["keys"] = list(dict.fromkeys([*old.get("keys", []), *source.get("keys", [])]))
        metadata[SOURCE] = merged
    refused, known = r.metadata.get(REFUSED_LINKS), doc.metadata.get(REFUSED_LINKS)
    if isinstance(refused, list):  # a run's links not stored (result_record), each once
        known = known if isinstance(known, list) else []
        metadata[REFUSED_LINKS] = [*known, *(x for x in refused if x not in known)]
    if metadata != doc.metadata:
        doc.metadata = metadata
        doc.save(update_fields=["metadata"])


def _add_evidence_and_verdicts(
    pairs: list[tuple[Claim, ClaimRecord]], systems: dict[str, System], summary: ImportSummary
) -> None:
    claim_ids = [claim.pk for claim, _ in pairs]
    has_evidence = set(
        Evidence.objects.filter(claim_id__in=claim_ids).values_list("claim_id", flat=True)
    )
    has_verdict = set(
        Verdict.objects.filter(claim_id__in=claim_ids).values_list("claim_id", "system_id")
    )
    evidence, verdicts = [], []
    for claim, record in pairs:
        if record.evidence and claim.pk not in has_evidence:
            evidence += [
                Evidence(claim=claim, rank=rank, title=e.title, snippet=e.snippet, link=e.link)
                for rank, e in enumerate(record.evidence, start=1)
            ]
        for name, value in record.verdicts.items():
            if (claim.pk, systems[name].pk) not in has_verdict:
                verdicts.append(
                    Verdict(
                        claim=claim,
                        system=systems[name],
                        label=value,
                        raw_output=record.raw_outputs.get(name, ""),
                    )
                )
    Evidence.objects.bulk_create(evidence)
    Verdict.objects.bulk_create(verdicts)
    summary.evidence_created += len(evidence)
    summary.verdicts_created += len(verdicts)


def _add_segments(
    doc: Document,
    records: list[SegmentRecord],
    systems: dict[str, System],
    summary: ImportSummary,
    *,
    replace: bool,
) -> None:
    if not records:
        return
    stored = list(doc.segments.all())
    if stored and replace and [s.text for s in stored] != [r.text for r in records]:
        doc.segments.all().delete()
        stored = []
    if stored:
        # Known segments: labels of a new verdict set are added.
        has = set(Verdict.objects.filter(segment__in=stored).values_list("segment_id", "system_id"))
        verdicts = [
            Verdict(segment=seg, system=systems[name], label=value)
            for seg, r in zip(stored, records, strict=True)
            for name, value in r.verdicts.items()
            if (seg.pk, systems[name].pk) not in has
        ]
        Verdict.objects.bulk_create(verdicts)
        summary.verdicts_created += len(verdicts)
        return
    segments = Segment.objects.bulk_create(
        Segment(document=doc, position=i, text=r.text) for i, r in enumerate(records)
    )
    verdicts = [
        Verdict(segment=seg, system=systems[name], label=value)
        for seg, r in zip(segments, records, strict=True)
        for name, value in r.verdicts.items()
    ]
    Verdict.objects.bulk_create(verdicts)
    summary.segments_created += len(segments)
    summary.verdicts_created += len(verdicts)


# --- pipeline results -> models ------------------------------------------------------


REFUSED_LINKS = "refused_links"  # a document's metadata: links not stored (result_record)


def result_record(
    r: ResponseResult, *, extractor: str, verifier: str, warnings: list[LineError] | None = None
) -> DocRecord:
    """A pipeline result as the record a file import would give. Verdicts that are
    "error" (the search failed, so nothing was verified) are left out; "unparsed" ones
    are kept. Links longer than the database keeps are cut (Serper's tracking URLs). A
    search result's link that is not http(s) (`javascript:`, `data:`) is stored empty:
    the original goes into the document's metadata (REFUSED_LINKS) and a warning into
    `warnings` (a file import refuses the line; a search result is not the researcher's
    to fix)."""
    claims, refused = [], []
    for i, c in enumerate(r.claims):
        evidence = []
        for rank, e in enumerate(c.evidence, 1):
            link = e.link[:MAX_LINK]
            if not web_link(e.link):
                refused.append({"system": extractor, "claim": i, "rank": rank, "link": link})
                if warnings is not None:
                    warnings.append(
                        LineError(
                            f"result {r.id}",
                            0,
                            f"claims[{i}].evidence[{rank - 1}].link",
                            f"must be an http(s) URL, not {e.link[:60]!r}: stored empty, "
                            f"the original kept in the document's metadata ({REFUSED_LINKS})",
                        )
                    )
                link = ""
            evidence.append(EvidenceRecord(e.title, e.snippet, link))
        record = ClaimRecord(
            c.claim.text,
            c.claim.sentence_index if c.claim.sentence_index >= 0 else None,
            c.claim.sentence,
            evidence=evidence,
        )
        if c.verdict is not None and c.verdict.label != ERROR:
            record.verdicts[verifier] = label(c.verdict.label)
            record.raw_outputs[verifier] = c.verdict.raw_output
        claims.append(record)
    return DocRecord(
        0,
        r.id,
        r.response,
        r.question or "",
        r.domain,
        r.model,
        {**r.metadata, REFUSED_LINKS: refused} if refused else r.metadata,
        {extractor: ListRecord(claims, r.abstained)},
    )


def ingest_results(
    *,
    project: Project,
    results: list[ResponseResult],
    extractor_name: str,
    verifier_name: str,
    config: dict[str, Any] | None = None,
) -> ImportSummary:
    """Write pipeline results through the same path as file imports.

    Documents are matched (or created) on `result.id` = external id. Idempotent: a claim
    list the extractor already has is kept and only missing evidence and verdicts are
    added, so a chunk processed twice writes nothing twice."""
    if not results:
        return ImportSummary(format="pipeline")
    first = results[0]
    extract_version, _, verify_version = first.prompt_version.partition("+")
    systems = {
        extractor_name: {
            "kind": System.EXTRACTOR,
            "origin": "pipeline",
            "model": first.extraction_model,
            "prompt_version": extract_version,
            "config": config or {},
        },
        verifier_name: {
            "kind": System.VERIFIER,
            "origin": "pipeline",
            "model": first.verification_model,
            "prompt_version": verify_version or first.prompt_version,
            "config": {**(config or {}), "label_mode": first.label_mode},
        },
    }
    warnings: list[LineError] = []
    records = [
        result_record(r, extractor=extractor_name, verifier=verifier_name, warnings=warnings)
        for r in results
    ]
    summary = save_records(
        project=project, records=records, fmt="pipeline", systems=systems, check_identity=False
    )
    summary.warnings = warnings
    return summary
