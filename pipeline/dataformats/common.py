"""What every format reader shares: records, line errors and warnings, the JSONL reader.

Plain Python (no Django): the pipeline and the platform read and write the field's files
through the same modules. A reader turns one JSON object into a `DocRecord`; what the
platform cannot model goes to `metadata` (and `metadata["_source"]` keeps what a writer
needs to give the record back as published).
"""

from __future__ import annotations

import codecs
import io
import json
import math
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from itertools import batched
from pathlib import Path
from typing import Any, BinaryIO

MAX_ERRORS = 50
SOURCE = "_source"  # metadata key: {"format": name, ...what the writer needs}
# Column sizes of the database, checked here so that no database sees a value it refuses.
MAX_ID, MAX_DOMAIN, MAX_MODEL, MAX_SYSTEM, MAX_LABEL, MAX_LINK = 300, 100, 200, 200, 50, 2000
# A NUL or a lone surrogate can only come from a JSON text through one of these escapes.
BAD_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
# Python reads no integer of more digits (sys.get_int_max_str_digits()).
TOO_LONG_INTEGER = "not usable: it holds an integer of more than 4300 digits"
REFERENCE = "reference"  # verdict kinds, as annotation.models.System names them
VERIFIER = "verifier"


@dataclass(frozen=True)
class LineError:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}, line {self.line}" if self.line else self.file
        return (
            f"{where}, field '{self.field}': {self.message}"
            if self.field
            else f"{where}: {self.message}"
        )


class ImportFailed(Exception):
    def __init__(self, errors: list[LineError]):
        self.errors = errors
        more = "" if len(errors) < MAX_ERRORS else f" (stopped after {MAX_ERRORS} errors)"
        super().__init__(
            f"{len(errors)} error(s){more}, nothing was imported:\n" + "\n".join(map(str, errors))
        )


@dataclass(slots=True)
class EvidenceRecord:
    title: str
    snippet: str
    link: str


@dataclass(slots=True)
class ClaimRecord:
    text: str
    sentence_index: int | None = None
    sentence: str = ""
    # system name -> label, e.g. FActScore's human S/NS/IR labels
    verdicts: dict[str, str] = field(default_factory=dict)
    evidence: list[EvidenceRecord] = field(default_factory=list)
    raw_outputs: dict[str, str] = field(default_factory=dict)  # system name -> raw answer


@dataclass
class SegmentRecord:
    text: str  # may be empty (FELM publishes empty segments); never shown as a unit then
    verdicts: dict[str, str] = field(default_factory=dict)


class ListRecord:
    """A system's claim list. One of plain claim texts (the bulk of large files) is kept
    as its `texts` until its claims are asked for (`texts` is None from then on)."""

    __slots__ = ("_claims", "abstained", "texts")

    def __init__(
        self,
        claims: list[ClaimRecord] | None = None,
        abstained: bool = False,
        *,
        texts: list[str] | None = None,
    ) -> None:
        self._claims = claims if texts is None else None
        self.texts = texts
        self.abstained = abstained

    @property
    def claims(self) -> list[ClaimRecord]:
        if self._claims is None:
            self._claims = [ClaimRecord(t) for t in self.texts or ()]
            self.texts = None
        return self._claims

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ListRecord):
            return NotImplemented
        return (self.claims, self.abstained) == (other.claims, other.abstained)

    def __repr__(self) -> str:
        return f"ListRecord(claims={self.claims!r}, abstained={self.abstained!r})"


@dataclass
class DocRecord:
    line: int
    external_id: str
    response: str
    question: str = ""
    domain: str = ""
    source_model: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    lists: dict[str, ListRecord] = field(default_factory=dict)
    segments: list[SegmentRecord] = field(default_factory=list)
    # kind of each verdict system named in this record (default: verifier)
    verdict_kinds: dict[str, str] = field(default_factory=dict)

    def source(self) -> dict[str, Any]:
        value = self.metadata.get(SOURCE)
        return value if isinstance(value, dict) else {}

    def extras(self, fmt: str) -> dict[str, Any]:
        """The source keys kept in metadata, when the record came from this format."""
        if self.source().get("format") != fmt:
            return {}
        return {k: v for k, v in self.metadata.items() if k != SOURCE}


@dataclass
class Reader:
    """Options and findings of one file: errors, warnings (each key name warned once)."""

    file: str
    errors: list[LineError] = field(default_factory=list)
    warnings: list[LineError] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    warned: set[str] = field(default_factory=set)
    counted: dict[str, tuple[int, int, LineError]] = field(default_factory=dict)
    clean: bool = False  # the text of the row being read holds no value a database refuses

    def warn_once(self, key: str, warning: LineError) -> None:
        if key not in self.warned:
            self.warned.add(key)
            self.warnings.append(warning)

    def warn_counted(self, key: str, warning: LineError, count: str) -> None:
        """One warning per key that counts its cases: the first case's warning, its
        message after `count` ("{n} record(s)") formatted with the number so far."""
        n, index, first = self.counted.get(key, (0, len(self.warnings), warning))
        if not n:
            self.warnings.append(first)
        self.counted[key] = (n + 1, index, first)
        self.warnings[index] = replace(first, message=f"{count.format(n=n + 1)} {first.message}")


class Line:
    """Typed access to one JSON object, turning every problem into a LineError."""

    def __init__(self, obj: dict[str, Any], line: int, reader: Reader):
        self.obj, self.line, self.reader = obj, line, reader
        self.file = reader.file
        self.n_errors = len(reader.errors)

    @property
    def failed(self) -> bool:
        return len(self.reader.errors) > self.n_errors

    def error(self, field_name: str, message: str) -> None:
        self.reader.errors.append(LineError(self.file, self.line, field_name, message))

    def warn(self, field_name: str, message: str) -> None:
        self.reader.warnings.append(LineError(self.file, self.line, field_name, message))

    def get(self, name: str, types: type | tuple[type, ...], *, required: bool = False) -> Any:
        value = self.obj.get(name)
        if value is None:
            if required:
                self.error(name, "is missing")
            return None
        if not isinstance(value, types) or isinstance(value, bool) and bool not in _tuple(types):
            self.error(name, f"must be {_type_names(types)}, not {json_type(value)}")
            return None
        if required and isinstance(value, str) and not value.strip():
            self.error(name, "is empty")
            return None
        return value

    def unknown_keys(self, known: set[str], fmt: str) -> dict[str, Any]:
        """Keys this format does not name: kept as metadata, one warning per key name."""
        extra = {k: v for k, v in self.obj.items() if k not in known}
        for k in extra:
            self.reader.warn_once(
                f"key:{k}",
                LineError(
                    self.file,
                    self.line,
                    k,
                    f"is not a {fmt} field: kept in metadata and written back "
                    "on export (first seen here)",
                ),
            )
        return extra


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def json_type(value: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _type_names(types: type | tuple[type, ...]) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "true or false",
        int: "an integer",
        float: "a number",
    }
    return " or ".join(names.get(t, t.__name__) for t in _tuple(types))


def label(value: str | bool) -> str:
    """One spelling per label: true/false for booleans, lower case without a final stop."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value.strip().rstrip(".").lower()


def bad_value(value: Any, path: str = "") -> tuple[str, str] | None:
    """(where, what) of the first value no database stores: NaN or infinity, a NUL
    character, a lone surrogate. None when the value is clean."""
    return next(bad_values(value, path), None)


def bad_values(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(where, what) of every value no database stores, in the order of the value."""
    try:  # the common case, in C: clean values serialize without NaN, NUL or surrogates
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        if "\\u0000" not in text:
            text.encode("utf-8")
            return
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
        pass
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            yield where, f"holds {v!r}, which JSON does not allow"
        elif isinstance(v, str):
            problem = _bad_text(v)
            if problem:
                yield where, problem
        elif isinstance(v, dict):
            items = []
            for k, item in v.items():
                problem = _bad_text(k) if isinstance(k, str) else None
                if problem:
                    yield where, f"a key {problem}"
                items.append((f"{where}.{k}" if where else str(k), item))
            stack += reversed(items)
        elif isinstance(v, list):
            stack += reversed([(f"{where}[{i}]", item) for i, item in enumerate(v)])


def _bad_text(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character (\\u0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"contains a lone surrogate (\\u{ord(text[e.start]):04x})"
    return None


def check_lengths(line: Line, values: dict[str, tuple[str, int]]) -> None:
    for name, (value, limit) in values.items():
        if len(value) > limit:
            line.error(name, f"is {len(value)} characters long; at most {limit} fit")


def decode(data: bytes, file: str) -> str:
    """UTF-8 text of a file (a byte-order mark is dropped); a bad byte is named by line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise ImportFailed(
            [
                LineError(
                    file,
                    line,
                    "",
                    f"is not UTF-8 text (byte 0x{data[e.start]:02x} "
                    f"at column {column}); save the file as UTF-8",
                )
            ]
        ) from None


def _json_error(e: json.JSONDecodeError) -> str:
    msg = e.msg.removesuffix(" at")  # "Unterminated string starting at"
    return f"not valid JSON ({msg} at column {e.colno})"


def read_records(text: str, reader: Reader) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every record. Records are separated by "\\n" only (a
    U+2028 or U+0085 inside a string is text); a file that is one JSON array is read as
    its list of records, with a warning that says so."""
    text = text.removeprefix("\ufeff")
    if text.lstrip().startswith("["):
        yield from stream_array(text, reader)
        return
    yield from read_lines(enumerate(text.split("\n"), start=1), reader)


def file_lines(path: Path, file: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line of a UTF-8 file, read as a stream: lines end at
    "\\n" only; a byte-order mark is dropped; a bad byte raises ImportFailed naming its line."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise ImportFailed(
                    [
                        LineError(
                            file,
                            number,
                            "",
                            f"is not UTF-8 text (byte 0x{raw[e.start]:02x} "
                            f"at column {e.start + 1}); save the file as UTF-8",
                        )
                    ]
                ) from None


def read_lines(
    lines: Iterable[tuple[int, str]], reader: Reader
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every JSON Lines record of numbered lines. A line whose
    text cannot hold a value a database refuses is marked clean (`reader.clean`)."""
    n = 0
    infinite: list[str] = []

    def parse_float(text: str) -> float:
        value = float(text)
        if math.isinf(value):  # 1e999: JSON allows it, no database stores it
            infinite.append(text)
        return value

    decoder = json.JSONDecoder(parse_float=parse_float)
    for number, raw in lines:
        if not raw.strip():
            continue
        obj = _loads(raw, number, reader, decoder)
        if obj is None:
            continue
        if not isinstance(obj, dict):
            reader.errors.append(
                LineError(reader.file, number, "", f"must be a JSON object, not {json_type(obj)}")
            )
            continue
        n += 1
        reader.clean = not infinite and _clean(raw)
        infinite.clear()
        yield number, obj
        reader.clean = False
    if not n and not reader.errors:
        reader.errors.append(LineError(reader.file, 0, "", "the file holds no records"))


def _clean(raw: str) -> bool:
    """A JSON text that cannot decode to NaN, an infinity (but see read_lines), a NUL
    character or a lone surrogate: the values of a record read from it need no check."""
    return (
        "NaN" not in raw
        and "Infinity" not in raw
        and ("\\u" not in raw or BAD_ESCAPE.search(raw) is None)
    )


def _loads(raw: str, number: int, reader: Reader, decoder: json.JSONDecoder) -> Any:
    try:
        return decoder.decode(raw)
    except json.JSONDecodeError as e:
        reader.errors.append(LineError(reader.file, number, "", _json_error(e)))
    except RecursionError:
        reader.errors.append(
            LineError(reader.file, number, "", "not usable: the JSON is nested too deeply")
        )
    except ValueError:  # an integer of more than 4,300 digits
        reader.errors.append(LineError(reader.file, number, "", TOO_LONG_INTEGER))
    return None


class SeenIds:
    """The ids of a file read so far and their lines, in a temporary SQLite file: memory
    stays bounded whatever the number of records."""

    def __init__(self) -> None:
        self.db = sqlite3.connect("")  # "": a private temporary file, deleted on close
        self.db.execute("CREATE TABLE seen (id TEXT PRIMARY KEY, line INTEGER) WITHOUT ROWID")

    def first_lines(self, ids: list[tuple[str, int]]) -> list[int | None]:
        """For each (id, line), in order: the line the id was first seen on, or None when
        it is new (now seen there). Two statements for the whole list."""
        found: dict[str, int] = {}
        for chunk in batched(dict.fromkeys(i for i, _ in ids), 500):
            marks = ", ".join("?" * len(chunk))
            found.update(self.db.execute(f"SELECT id, line FROM seen WHERE id IN ({marks})", chunk))
        new: dict[str, int] = {}
        firsts = []
        for external_id, line in ids:
            first = found.get(external_id, new.get(external_id))
            if first is None:
                new[external_id] = line
            firsts.append(first)
        self.db.executemany("INSERT INTO seen VALUES (?, ?)", new.items())
        return firsts

    def close(self) -> None:
        self.db.close()


class JsonStream:
    """JSON values read one at a time from a UTF-8 file, each with the line it starts on
    (JSON arrays, SAFE's one object): memory holds a chunk and one value, whatever the
    file's size. A byte-order mark is dropped; a bad byte raises ImportFailed naming its
    line."""

    CHUNK = 1 << 20
    SPACE = re.compile(r"[ \t\r\n]*")

    def __init__(self, f: BinaryIO, file: str) -> None:
        self.f, self.file = f, file
        self.decoder = json.JSONDecoder()
        self.text = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf, self.pos, self.eof = "", 0, False
        self.line, self.mark, self.column = 1, 0, 0  # line and column of buf[mark]

    def line_at(self, pos: int) -> int:
        newlines = self.buf.count("\n", self.mark, pos)
        if newlines:
            self.column = pos - self.buf.rfind("\n", self.mark, pos) - 1
        else:
            self.column += pos - self.mark
        self.line, self.mark = self.line + newlines, pos
        return self.line

    def _more(self, size: int) -> bool:
        """Read on (dropping what was read); False at the end of the file."""
        if self.eof:
            return False
        self.line_at(self.pos)
        self.buf, self.pos, self.mark = self.buf[self.pos :], 0, 0
        data = self.f.read(size)
        try:
            self.buf += self.text.decode(data, final=not data)
        except UnicodeDecodeError as e:
            line = self.line + self.buf.count("\n") + data[: e.start].count(b"\n")
            raise ImportFailed(
                [
                    LineError(
                        self.file,
                        line,
                        "",
                        f"is not UTF-8 text (byte 0x{data[e.start]:02x}); save the file as UTF-8",
                    )
                ]
            ) from None
        self.eof = not data
        return not self.eof

    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            self.pos = self.SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more(self.CHUNK):
                return ""

    def take(self, char: str) -> bool:
        if self.peek() != char:
            return False
        self.pos += 1
        return True

    def value(self) -> tuple[int, Any]:
        """(line, value) of the next value; ValueError(line, message) when there is none."""
        self.peek()
        size = self.CHUNK
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                # Cut off by the chunk's end (a string runs on, or the text stops near
                # the end): read on, twice as much each time; otherwise a real error.
                cut = e.msg.startswith("Unterminated string") or e.pos >= len(self.buf) - 1024
                if cut and self._more(size):
                    size *= 2
                    continue
                line = self.line_at(self.pos)
                line += self.buf.count("\n", self.pos, e.pos)
                start = self.buf.rfind("\n", self.pos, e.pos)
                column = e.pos - start if start >= 0 else self.column + e.pos - self.pos + 1
                msg = e.msg.removesuffix(" at")
                raise ValueError(line, f"not valid JSON ({msg} at column {column})") from None
            except RecursionError:
                raise ValueError(
                    self.line_at(self.pos), "not usable: the JSON is nested too deeply"
                ) from None
            except ValueError:  # an integer of more than 4,300 digits
                raise ValueError(self.line_at(self.pos), TOO_LONG_INTEGER) from None
            if end == len(self.buf) and not isinstance(value, (dict, list, str)):
                if self._more(size):  # a number or literal may go on in the next chunk
                    continue
            line = self.line_at(self.pos)
            self.pos = end
            return line, value

    def fail(self, expected: str) -> ValueError:
        found = self.peek()
        return ValueError(
            self.line_at(self.pos),
            f"not valid JSON (expecting {expected}, found {found!r} at column {self.column + 1})"
            if found
            else f"not valid JSON (expecting {expected}, found the end of the file)",
        )

    def array(self) -> Iterator[tuple[int, Any]]:
        """(line, item) of the JSON array that comes next; ValueError when there is none."""
        if not self.take("["):
            raise self.fail("'['")
        if self.take("]"):
            return
        while True:
            yield self.value()
            if self.take("]"):
                return
            if not self.take(","):
                raise self.fail("',' or ']'")


def stream_array(source: str | Path, reader: Reader) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) of every record of a file (its text or its path) holding one JSON
    array, read as a stream."""
    n = 0
    f = (
        io.BytesIO(source.encode("utf-8", "surrogatepass"))
        if isinstance(source, str)
        else open(source, "rb")
    )
    with f:
        stream = JsonStream(f, reader.file)
        try:
            for line, obj in stream.array():
                if not isinstance(obj, dict):
                    reader.errors.append(
                        LineError(
                            reader.file, line, "", f"must be a JSON object, not {json_type(obj)}"
                        )
                    )
                    continue
                n += 1
                yield line, obj
            if stream.peek():
                raise stream.fail("the end of the file after the array")
        except ValueError as e:
            line, message = e.args
            reader.errors.append(
                LineError(
                    reader.file,
                    line,
                    "",
                    message + "; the file starts with '[', so it was read as one JSON array",
                )
            )
            return
    reader.warnings.append(
        LineError(
            reader.file,
            0,
            "",
            f"the file is a JSON array, not JSON Lines: read as a list of {n} record(s)",
        )
    )
    if not n and not reader.errors:
        reader.errors.append(LineError(reader.file, 0, "", "the file holds no records"))
