from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pipeline.cache import Cache, make_key

WRITER = """
import sys
from pipeline.cache import Cache
cache = Cache(sys.argv[1])
for i in range(150):
    key = f"{sys.argv[2]}-{i}"
    cache.put(key, "chat", {"i": i}, {"text": key})
    assert cache.get(key) == {"text": key}
    cache.put("shared", "chat", {}, {"text": "first writer wins"})
"""


def test_the_key_covers_everything_that_determines_the_answer() -> None:
    base = {"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 0.0}
    assert make_key("chat", base) == make_key("chat", dict(reversed(list(base.items()))))
    assert make_key("chat", base) != make_key("chat", {**base, "model": "n"})
    assert make_key("chat", base) != make_key("chat", {**base, "temperature": 0.7})
    assert make_key("chat", base) != make_key("search", base)


def test_answers_persist_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = Cache(path)
    cache.put("k", "chat", {"q": 1}, {"text": "a"})
    cache.close()
    again = Cache(path)
    assert again.get("k") == {"text": "a"}
    assert again.get("missing") is None
    assert again.count() == again.count("chat") == 1
    assert again.requests("chat") == [{"q": 1}]


def test_concurrent_writer_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    Cache(path).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), f"w{n}"]) for n in range(4)]
    assert [p.wait(timeout=600) for p in procs] == [0, 0, 0, 0]  # a guard against a hang
    cache = Cache(path)
    assert cache.count() == 4 * 150 + 1
    assert cache.get("w3-149") == {"text": "w3-149"}


def test_a_call_in_flight_elsewhere_is_awaited_and_a_dead_holders_lease_runs_out(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.sqlite"
    holder, waiter = Cache(path, lease=0.3), Cache(path, lease=0.3)
    calls: list[str] = []

    async def call() -> dict[str, str]:
        calls.append("paid")
        return {"text": "answer"}

    # another process holds the call and answers it: the waiter pays nothing
    assert holder.claim("k1")
    holder.put("k1", "chat", {}, {"text": "theirs"})
    holder.release("k1")
    assert asyncio.run(waiter.once("k1", "chat", {}, call)) == ({"text": "theirs"}, True)
    # a holder that died never answers: once its lease runs out the waiter calls itself
    assert holder.claim("k2") and not waiter.claim("k2")
    assert asyncio.run(waiter.once("k2", "chat", {}, call)) == ({"text": "answer"}, False)
    assert calls == ["paid"]
    assert holder.get("k2") == {"text": "answer"}
    assert holder.claim("k2")  # the waiter released its lease with the answer


def _open_and_store(path: str, barrier: Any, n: int) -> None:
    barrier.wait()  # every process opens the new cache at the same moment
    cache = Cache(path)
    cache.put(f"k{n}", "chat", {"n": n}, {"text": "OK"})


@pytest.mark.slow  # starts several processes (6 s on 2 loaded cores)
def test_processes_opening_a_new_cache_at_once_all_get_it(tmp_path: Path) -> None:
    # Switching a new file to WAL and creating the tables can answer "locked" at once
    # (SQLite's deadlock rule, no busy wait): that is another process's set-up, not a
    # damaged cache, and must not fail a worker's run.
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    for attempt in range(3):
        path = str(tmp_path / f"c{attempt}.sqlite")
        barrier = ctx.Barrier(8)
        procs = [ctx.Process(target=_open_and_store, args=(path, barrier, n)) for n in range(8)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        assert [p.exitcode for p in procs] == [0] * 8
        assert Cache(path).count() == 8
