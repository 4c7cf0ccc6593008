"""A persistent answer cache for LLM and search calls, in one SQLite file.

Every answer is written (and committed) the moment it arrives, so a run killed at any
point and started again repeats no stored call. WAL mode plus a busy timeout lets several
processes (CLI runs, background workers) read and write the same file at once, and a
call in flight is claimed with a lease, so two processes never both pay for it: the
second waits for the first one's answer (or takes over when the lease runs out).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL DEFAULT (julianday('now'))
)
"""
# A process about to make a call claims its key until `expires` (unix time) and renews
# the lease while the call runs; the answer's arrival (or a failure) releases it.
LEASES = """
CREATE TABLE IF NOT EXISTS leases (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires REAL NOT NULL
)
"""

# Notes that outlive a process: which provider batch holds a request (pipeline/batch.py).
NOTES = """
CREATE TABLE IF NOT EXISTS notes (
    key TEXT PRIMARY KEY,
    value TEXT
)
"""


class OfflineMiss(RuntimeError):
    """Offline mode needed an answer the cache does not have."""


class CacheError(RuntimeError):
    """The cache file cannot be used as it is; the message names it and what to do."""


def _advice(path: str) -> str:
    return (
        f"run `python -m pipeline cache check {path}` to see what is readable, "
        f"`python -m pipeline cache repair {path}` to keep every readable answer"
    )


def make_key(kind: str, request: dict[str, Any]) -> str:
    """Key over everything that determines the answer (model, messages, parameters...)."""
    blob = json.dumps({"kind": kind, **request}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Cache:
    def __init__(self, path: str | Path, *, lease: float = 30.0) -> None:
        self.path = str(path)
        self.lease = lease  # seconds a claim on a call in flight lasts without renewal
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # One connection guarded by a lock: the event loop thread does nearly all the work,
        # but sync callers on other threads must not interleave statements.
        self._lock = threading.Lock()
        # Two processes opening a new cache at once: switching it to WAL and creating the
        # tables take locks for which SQLite may answer "locked" at once instead of
        # waiting (its deadlock rule); that is the other process's set-up, not damage, so
        # try again until it is done.
        deadline = time.monotonic() + 60
        while True:
            try:
                self._db = self._open()
                break
            except sqlite3.DatabaseError as e:
                locked = isinstance(e, sqlite3.OperationalError) and "locked" in str(e)
                if locked and time.monotonic() <= deadline:
                    time.sleep(0.05)
                    continue
                raise CacheError(
                    f"the answer cache {self.path} is unusable ({e}): {_advice(self.path)}"
                ) from None
        self._inflight: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode survives a killed process (only a power cut loses the tail).
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA busy_timeout=60000")
            db.execute(SCHEMA)
            db.execute(LEASES)
            db.execute(NOTES)
        except BaseException:
            db.close()
            raise
        return db

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT response FROM answers WHERE key = ?", (key,)
                ).fetchone()
            answer = json.loads(row[0]) if row else None
        except (sqlite3.DatabaseError, ValueError) as e:
            raise CacheError(
                f"the answer cache {self.path} has a damaged answer (key {key[:12]}: {e}): "
                f"{_advice(self.path)}"
            ) from None
        if answer is not None and not isinstance(answer, dict):
            raise CacheError(
                f"the answer cache {self.path} has a damaged answer (key {key[:12]}: "
                f"not a JSON object): {_advice(self.path)}"
            )
        return answer

    def put(
        self,
        key: str,
        kind: str,
        request: dict[str, Any],
        response: dict[str, Any],
        *,
        release: bool = False,
    ) -> None:
        """Store an answer; with `release`, drop this cache's lease on it in the same
        transaction (one commit)."""
        with self._lock:
            if release:
                self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT OR IGNORE INTO answers (key, kind, request, response) "
                    "VALUES (?, ?, ?, ?)",
                    (
                        key,
                        kind,
                        json.dumps(request, ensure_ascii=False),
                        json.dumps(response, ensure_ascii=False),
                    ),
                )
                if release:
                    self._db.execute(
                        "DELETE FROM leases WHERE key = ? AND owner = ?", (key, self.owner)
                    )
                    self._db.execute("COMMIT")
            except BaseException:
                if release:
                    self._db.execute("ROLLBACK")
                raise

    def claim(self, key: str) -> bool:
        """Take (or renew) the lease on a call in flight; False while another owner holds
        a lease that has not run out."""
        now = time.time()
        with self._lock:
            # One statement: a row comes back only when the lease was taken or renewed.
            rows = self._db.execute(
                "INSERT INTO leases (key, owner, expires) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, "
                "expires = excluded.expires WHERE leases.owner = excluded.owner "
                "OR leases.expires < ? RETURNING owner",
                (key, self.owner, now + self.lease, now),
            ).fetchall()
        return bool(rows)

    def release(self, key: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, self.owner))

    def note(self, key: str, value: str | None) -> None:
        with self._lock:
            if value is None:
                self._db.execute("DELETE FROM notes WHERE key = ?", (key,))
            else:
                self._db.execute("INSERT OR REPLACE INTO notes VALUES (?, ?)", (key, value))

    def noted(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM notes WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def count(self, kind: str | None = None) -> int:
        with self._lock:
            if kind is None:
                return int(self._db.execute("SELECT count(*) FROM answers").fetchone()[0])
            sql = "SELECT count(*) FROM answers WHERE kind = ?"
            return int(self._db.execute(sql, (kind,)).fetchone()[0])

    def requests(self, kind: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT request FROM answers WHERE ? IS NULL OR kind = ?", (kind, kind)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    async def once(
        self,
        key: str,
        kind: str,
        request: dict[str, Any],
        call: Callable[[], Awaitable[dict[str, Any]]],
        *,
        offline: bool = False,
    ) -> tuple[dict[str, Any], bool]:
        """The cached answer, or the result of `call()` stored before it is returned.

        Identical requests in flight at the same time share one call (the same claim often
        appears in several responses). Returns (answer, came_from_cache).
        """
        hit = self.get(key)
        if hit is not None:
            return hit, True
        pending = self._inflight.get(key)
        if pending is not None and pending.get_loop() is asyncio.get_running_loop():
            return await asyncio.shield(pending), True
        if offline:
            raise OfflineMiss(
                f"offline: no cached {kind} answer for {describe(request)}; "
                "run once without --offline to fill the cache"
            )
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            # Another process may be making this very call: wait for its answer while
            # its lease lasts, rather than paying for it twice.
            wait = 0.02
            while True:
                claimed = self.claim(key)
                hit = self.get(key)  # answered meanwhile (perhaps just before our claim)
                if hit is not None:
                    if claimed:
                        self.release(key)
                    future.set_result(hit)
                    return hit, True
                if claimed:
                    break
                await asyncio.sleep(wait)
                wait = min(wait * 2, 0.5)
            renew = asyncio.create_task(self._renew(key))
            try:
                answer = await call()
            except BaseException:
                self.release(key)
                raise
            finally:
                renew.cancel()
            self.put(key, kind, request, answer, release=True)
            future.set_result(answer)
            return answer, False
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # mark retrieved: nobody may be waiting on it
            raise
        finally:
            self._inflight.pop(key, None)

    async def _renew(self, key: str) -> None:
        while True:
            await asyncio.sleep(self.lease / 3)
            self.claim(key)


def describe(request: dict[str, Any]) -> str:
    if "query" in request:
        return f"query {request['query']!r}"
    messages = request.get("messages") or [{"content": request.get("prompt", "")}]
    last = str(messages[-1].get("content", ""))
    return f"model {request.get('model')!r}, prompt ending {last[-120:]!r}"


@dataclass(frozen=True)
class CacheReport:
    path: str
    readable: int  # answers that read back as JSON objects
    damaged: int  # rows that could not be read or decoded
    problem: str = ""  # what SQLite says about the file, when it is not sound

    @property
    def ok(self) -> bool:
        return not self.damaged and not self.problem

    def __str__(self) -> str:
        state = "sound" if self.ok else f"DAMAGED ({self.problem or 'bad rows'})"
        return f"{self.path}: {state}; {self.readable} readable answer(s), {self.damaged} damaged"


def _rows(path: str) -> tuple[list[tuple[Any, ...]], int, str]:
    """Every readable row of a cache file, the number of damaged ones, and SQLite's
    complaint about the file. Rows are read one at a time, so one bad page loses only
    the rows on it."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as e:
        return [], 0, str(e)
    good: list[tuple[Any, ...]] = []
    damaged = 0
    try:
        problem = ""
        try:
            result = db.execute("PRAGMA integrity_check").fetchall()
            if result != [("ok",)]:
                problem = "; ".join(str(r[0]) for r in result[:3])
            top = db.execute("SELECT max(rowid) FROM answers").fetchone()[0] or 0
        except sqlite3.Error as e:
            return [], 0, str(e)
        sql = "SELECT key, kind, request, response, created FROM answers WHERE rowid = ?"
        for rowid in range(1, top + 1):
            try:
                row = db.execute(sql, (rowid,)).fetchone()
            except sqlite3.Error:
                damaged += 1
                continue
            if row is None:
                continue
            try:
                ok = isinstance(json.loads(row[3]), dict) and isinstance(json.loads(row[2]), dict)
            except (TypeError, ValueError):
                ok = False
            if ok:
                good.append(row)
            else:
                damaged += 1
        return good, damaged, problem
    finally:
        db.close()


def check(path: str | Path) -> CacheReport:
    if not Path(path).is_file():
        return CacheReport(str(path), 0, 0, "no such file")
    good, damaged, problem = _rows(str(path))
    return CacheReport(str(path), len(good), damaged, problem)


def repair(path: str | Path) -> tuple[CacheReport, Path | None]:
    """Rebuild the cache from its readable answers. The damaged file is kept beside it
    (PATH.damaged-<time>) rather than deleted. Returns the new file's report and where
    the old one went (None when it was sound and left alone)."""
    path = Path(path)
    before = check(path)
    if before.ok or before.problem == "no such file":
        return before, None
    good, _, _ = _rows(str(path))
    fresh = path.with_name(path.name + ".repairing")
    fresh.unlink(missing_ok=True)
    Cache(fresh).close()
    db = sqlite3.connect(fresh)
    with db:
        db.executemany(
            "INSERT OR IGNORE INTO answers (key, kind, request, response, created) "
            "VALUES (?, ?, ?, ?, ?)",
            good,
        )
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    path.rename(aside)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(aside.with_name(aside.name + suffix))
    fresh.rename(path)
    for suffix in ("-wal", "-shm"):
        fresh.with_name(fresh.name + suffix).unlink(missing_ok=True)
    return check(path), aside
