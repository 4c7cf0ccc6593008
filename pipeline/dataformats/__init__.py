"""The field's file formats, read and written by one module each (no Django here).

`parse_file` reads a whole file into `DocRecord`s, or raises `ImportFailed` listing
every error with its file, line and field; warnings are returned beside the records.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Generator, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from . import canonical, factscore, felm, mapped, release, safe, veriscore
from .common import (
    MAX_DOMAIN,
    MAX_ERRORS,
    MAX_ID,
    MAX_LABEL,
    MAX_LINK,
    MAX_MODEL,
    MAX_SYSTEM,
    DocRecord,
    ImportFailed,
    Line,
    LineError,
    Reader,
    SeenIds,
    bad_value,
    bad_values,
    check_lengths,
    decode,
    file_lines,
    read_lines,
    read_records,
    stream_array,
)

PARSERS: dict[str, Callable[[Line], DocRecord | None]] = {
    canonical.NAME: canonical.parse,
    veriscore.NAME: veriscore.parse,
    veriscore.INPUT: veriscore.parse_input,
    factscore.NAME: factscore.parse,
    felm.NAME: felm.parse,
    safe.NAME: safe.parse,
    mapped.NAME: mapped.parse,
}
# read whole from a folder or a zip, not line by line: the platform imports them on a
# path of their own (a release of a study: annotation/release/load.py)
ARCHIVE_FORMATS = (release.NAME,)
FORMATS = (*PARSERS, *ARCHIVE_FORMATS)
SEEN_BATCH = 1000  # records whose ids are looked up at once

__all__ = [
    "ARCHIVE_FORMATS",
    "FORMATS",
    "DocRecord",
    "ImportFailed",
    "LineError",
    "decode",
    "detect_format",
    "iter_records",
    "parse_file",
    "scan_file",
    "web_link",
]


def detect_format(keys: set[str]) -> str:
    if safe.ROW in keys:
        return safe.NAME
    if "claim_lists" in keys:
        return canonical.NAME
    if "annotations" in keys and "output" in keys:
        return factscore.NAME
    if "segmented_response" in keys:
        return felm.NAME
    if keys & veriscore.OUTPUT_KEYS:
        return veriscore.NAME
    if keys & {"model", "prompt_source"} and not keys & {"domain", "source_model", "segments"}:
        return veriscore.INPUT
    return canonical.NAME


def parse_file(
    text: str, *, file: str, fmt: str = "auto", **options: str
) -> tuple[str, list[DocRecord], list[LineError]]:
    """(format, records, warnings) of a whole file; ImportFailed when any record is unusable."""
    reader = _reader(file, fmt, options)
    records = list(_records(_rows(text, reader), reader, fmt))
    return _checked(reader, fmt), records, reader.warnings


def scan_file(
    source: str | Path,
    *,
    file: str,
    fmt: str = "auto",
    progress: Callable[[str, int, int], None] | None = None,
    **options: str,
) -> tuple[str, int, list[LineError]]:
    """(format, number of records, warnings) of a file read as a stream, keeping no
    record: the validation pass of a large import. ImportFailed when any is unusable.
    `source` is the text or the path of the file; progress("read", records, 0)."""
    reader = _reader(file, fmt, options)
    count = 0
    for _ in _records(_rows(source, reader), reader, fmt):
        count += 1
        if progress and not count % 1000:
            progress("read", count, 0)
    if progress:
        progress("read", count, 0)
    return _checked(reader, fmt), count, reader.warnings


def iter_records(
    source: str | Path, *, file: str, fmt: str, **options: str
) -> Generator[DocRecord]:
    """The records of a file that `scan_file` accepted, one at a time (the write pass)."""
    reader = _reader(file, fmt, options)
    yield from _records(_rows(source, reader), reader, fmt, check=False)
    if reader.errors:  # the file changed since it was scanned
        raise ImportFailed(reader.errors[:MAX_ERRORS])


def _reader(file: str, fmt: str, options: dict[str, str]) -> Reader:
    if fmt in ARCHIVE_FORMATS:
        raise ImportFailed(
            [LineError(file, 0, "", f"a {fmt} is read whole from its folder or zip: import it "
                       "as such (it has no dry run)")]
        )  # fmt: skip
    if fmt != "auto" and fmt not in PARSERS:
        raise ImportFailed(
            [LineError(file, 0, "", f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")]
        )
    if (fmt == mapped.NAME) != bool(options.get("mapping")):
        raise ImportFailed(
            [LineError(file, 0, "", "a mapping file goes with the format 'mapping' (and only it)")]
        )
    kept = {k: v for k, v in options.items() if v}
    problem = bad_value(kept)
    if problem:
        raise ImportFailed([LineError(file, 0, problem[0], problem[1])])
    return Reader(file, options=kept)


def _checked(reader: Reader, fmt: str) -> str:
    if reader.errors:
        raise ImportFailed(reader.errors[:MAX_ERRORS])
    return reader.options.get("format", canonical.NAME) if fmt == "auto" else fmt


def _rows(source: str | Path, reader: Reader) -> Iterator[tuple[int, dict[str, Any]]]:
    """Records of a text, or of a file read as a stream (line by line, or value by value
    for a JSON array or SAFE's one object)."""
    if isinstance(source, str):
        if safe.is_safe(source.removeprefix("\ufeff")):
            return safe.read_rows(source.removeprefix("\ufeff"), reader)
        return read_records(source, reader)
    with open(source, "rb") as f:
        first = f.readline().removeprefix(b"\xef\xbb\xbf").strip()
        multiline = first.startswith(b"{") and not first.endswith(b"}")
        rest = f.read(1 << 20) if multiline else b""  # SAFE's key may come after a few others
    if first.startswith(b"["):  # a JSON array, streamed
        return stream_array(source, reader)
    key = f'"{safe.KEY}"'.encode()
    if key in first or multiline and key in rest:
        return safe.read_rows(source, reader)  # SAFE's one object, streamed
    if multiline:  # another object: read whole
        return _rows(decode(source.read_bytes(), reader.file), reader)
    return read_lines(file_lines(source, reader.file), reader)


def _records(
    rows: Iterator[tuple[int, dict[str, Any]]], reader: Reader, fmt: str, *, check: bool = True
) -> Iterator[DocRecord]:
    """Records of the rows; `check` = every value fits the database (off on a second
    reading of a file that was checked)."""
    seen = SeenIds()
    pending: list[tuple[int, DocRecord]] = []
    try:
        for number, obj in rows:
            if len(reader.errors) >= MAX_ERRORS:
                break
            if fmt == "auto":
                fmt = detect_format(set(obj))
                reader.options["format"] = fmt
            line = Line(obj, number, reader)
            record = PARSERS[fmt](line)
            if record is None:
                continue
            # A clean line read by a format that takes values only from it and the
            # (checked) options holds nothing a database refuses: only lengths are checked.
            clean = reader.clean and fmt != mapped.NAME
            if check and not _storable(line, record, clean=clean):
                continue
            pending.append((number, record))
            if len(pending) == SEEN_BATCH:
                yield from _unseen(pending, seen, reader)
                pending = []
        yield from _unseen(pending, seen, reader)
    finally:
        seen.close()


def _unseen(
    records: list[tuple[int, DocRecord]], seen: SeenIds, reader: Reader
) -> Iterator[DocRecord]:
    """The records whose id is new; a duplicate id is an error, put among the errors in
    the order of lines (the ids are looked up a batch at a time, after later lines)."""
    firsts = seen.first_lines([(r.external_id, number) for number, r in records])
    for (number, record), first in zip(records, firsts, strict=True):
        if first is None:
            yield record
            continue
        error = LineError(
            reader.file,
            number,
            "id",
            f"duplicate id {record.external_id!r} (first on line {first})",
        )
        bisect.insort(reader.errors, error, key=lambda e: e.line)


def web_link(link: str) -> bool:
    """A link the platform stores (and pages may show as one): empty, or http(s)."""
    return not link or link.lower().startswith(("http://", "https://"))


def _storable(line: Line, r: DocRecord, *, clean: bool = False) -> bool:
    """Every value fits the database: lengths, NUL characters, lone surrogates, NaN
    (not looked for when the record is known `clean`)."""
    check_lengths(
        line,
        {
            "id": (r.external_id, MAX_ID),
            "domain": (r.domain, MAX_DOMAIN),
            "source_model": (r.source_model, MAX_MODEL),
        },
    )
    claims = [c for lst in r.lists.values() if lst.texts is None for c in lst.claims]
    names = set(r.lists) | {v for c in claims for v in c.verdicts}
    names |= {v for s in r.segments for v in s.verdicts}
    for name in names:
        check_lengths(line, {"system name": (name, MAX_SYSTEM)})
    labels = {v for c in claims for v in c.verdicts.values()}
    for value in labels | {v for s in r.segments for v in s.verdicts.values()}:
        check_lengths(line, {"label": (value, MAX_LABEL)})
    for c in claims:
        for e in c.evidence:
            check_lengths(line, {"link": (e.link, MAX_LINK)})
            if not web_link(e.link):
                line.error("link", f"must be an http(s) URL, not {e.link[:60]!r}")
    knowledge = r.metadata.get("knowledge")
    for i, passage in enumerate(knowledge if isinstance(knowledge, list) else []):
        url = passage.get("url", "") if isinstance(passage, dict) else ""
        if isinstance(url, str) and not web_link(url):
            line.error(f"knowledge[{i}].url", f"must be an http(s) URL, not {url[:60]!r}")
    if clean:
        return not line.failed
    # named as the canonical format names them (the record as canonical.write gives it)
    stored = canonical.write(r)
    stored["raw_outputs"] = {
        name: {i: c.raw_outputs for i, c in enumerate(lst.claims) if c.raw_outputs}
        for name, lst in r.lists.items()
    }
    for problem in islice(bad_values(stored), MAX_ERRORS):  # every one, up to the cap
        line.error(*problem)
    return not line.failed
