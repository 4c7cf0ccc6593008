"""A persistent answer cache for LLM and search calls, in one SQLite file.

Every answer is written (and committed) the moment it arrives, so a run killed at any
point and started again repeats no stored call. WAL mode plus a busy timeout lets several
processes (CLI runs, background workers) read and write the same file at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
from collections.abc import Awaitable, Callable
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


class OfflineMiss(RuntimeError):
    """Offline mode needed an answer the cache does not have."""


def make_key(kind: str, request: dict[str, Any]) -> str:
    """Key over everything that determines the answer (model, messages, parameters...)."""
    blob = json.dumps({"kind": kind, **request}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Cache:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # One connection guarded by a lock: the event loop thread does nearly all the work,
        # but sync callers on other threads must not interleave statements.
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.path, timeout=60, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a killed process (only a power cut can lose the tail).
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=60000")
        self._db.execute(SCHEMA)
        self._inflight: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT response FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO answers (key, kind, request, response) VALUES (?, ?, ?, ?)",
                (
                    key,
                    kind,
                    json.dumps(request, ensure_ascii=False),
                    json.dumps(response, ensure_ascii=False),
                ),
            )

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
            answer = await call()
            self.put(key, kind, request, answer)
            future.set_result(answer)
            return answer, False
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # mark retrieved: nobody may be waiting on it
            raise
        finally:
            self._inflight.pop(key, None)


def describe(request: dict[str, Any]) -> str:
    if "query" in request:
        return f"query {request['query']!r}"
    messages = request.get("messages") or [{}]
    last = str(messages[-1].get("content", ""))
    return f"model {request.get('model')!r}, prompt ending {last[-120:]!r}"
