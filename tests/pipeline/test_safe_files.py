"""Files stay safe: outputs are replaced whole or not at all, a damaged cache fails with
one line saying what to do (and `cache check|repair` do it), and two processes on one
cache never both pay for a call in flight."""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cache import Cache, make_key
from pipeline.fakes import FakeOpenAI, FakeSerper

from .conftest import REPO
from .test_cli import cli, endpoints, write_input


def cache_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline", "cache", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hung process, far from a loaded machine's time
    )


def run_args(src: Path, out: Path, llm: FakeOpenAI, serper: FakeSerper, tmp: Path) -> list[str]:
    return ["run", str(src), "--out", str(out), *endpoints(llm, serper, tmp)]


@pytest.mark.slow
def test_a_full_disk_leaves_the_previous_outputs_whole(
    fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    src = write_input(tmp_path / "mixed.jsonl", n_bios=3)
    out = tmp_path / "out"
    cli(*run_args(src, out, fake_llm, fake_serper, tmp_path))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    limit = 64 * 1024
    assert max(len(b) for b in before.values()) > limit  # the limit bites on a rewrite

    def small_disk() -> None:
        # Files may not grow past 64 KiB: a write beyond fails as on a full disk (Python
        # ignores SIGXFSZ, so the write raises instead of killing the process).
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", *run_args(src, out, fake_llm, fake_serper, tmp_path)]
        + ["--offline", "--no-progress"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hung process, far from a loaded machine's time
        preexec_fn=small_disk,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "could not write" in line and "left as it was" in line
    failed = next(name for name in before if str(out / name) in line)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert after.keys() == before.keys()  # no temporary file left behind
    assert after[failed] == before[failed]
    for name, data in after.items():  # every file whole, none cut off mid-line
        if name.endswith(".jsonl"):
            assert data.endswith(b"\n") and all(json.loads(x) for x in data.splitlines())


@pytest.mark.slow
def test_a_corrupt_cache_fails_with_one_line_and_can_be_repaired(
    fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    src = write_input(tmp_path / "mixed.jsonl", n_bios=0)
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"this is not a database, it was overwritten by mistake" * 100)
    proc = cli(*run_args(src, tmp_path / "out", fake_llm, fake_serper, tmp_path), check=False)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert str(cache) in line and f"python -m pipeline cache repair {cache}" in line
    assert fake_llm.requests == []

    check = cache_cli("check", str(cache))
    assert check.returncode == 1 and "DAMAGED" in check.stdout
    repaired = cache_cli("repair", str(cache))
    assert repaired.returncode == 0, repaired.stderr
    assert "0 readable answer(s)" in repaired.stdout and ".damaged-" in repaired.stdout
    assert [p for p in tmp_path.iterdir() if ".damaged-" in p.name]  # kept, not deleted
    assert cache_cli("check", str(cache)).returncode == 0
    cli(*run_args(src, tmp_path / "out", fake_llm, fake_serper, tmp_path))


@pytest.mark.slow
def test_a_damaged_cached_answer_names_the_cache_and_repair_keeps_the_rest(
    fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path
) -> None:
    src = write_input(tmp_path / "mixed.jsonl", n_bios=0)
    cache = tmp_path / "cache.sqlite"
    args = run_args(src, tmp_path / "out", fake_llm, fake_serper, tmp_path)
    cli(*args)
    db = sqlite3.connect(cache)
    with db:
        total = db.execute("SELECT count(*) FROM answers").fetchone()[0]
        db.execute(
            'UPDATE answers SET response = \'{"text": "cut off\' '
            "WHERE rowid = (SELECT min(rowid) FROM answers WHERE kind = 'chat')"
        )
    db.close()
    proc = cli(*args, check=False)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert f"the answer cache {cache} has a damaged answer" in line and "cache repair" in line

    check = cache_cli("check", str(cache))
    assert check.returncode == 1 and f"{total - 1} readable answer(s), 1 damaged" in check.stdout
    assert cache_cli("repair", str(cache)).returncode == 0
    assert Cache(cache).count() == total - 1
    calls = len(fake_llm.requests)
    cli(*args)  # the one lost answer is asked for again, nothing else
    assert len(fake_llm.requests) == calls + 1


@pytest.mark.slow
def test_two_processes_on_one_cache_pay_for_each_call_once(tmp_path: Path) -> None:
    src = write_input(tmp_path / "mixed.jsonl", n_bios=3)
    with FakeOpenAI(latency=0.05) as llm, FakeSerper(latency=0.05) as serper:
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "pipeline"]
                + run_args(src, tmp_path / f"out{n}", llm, serper, tmp_path)
                + ["--no-progress", "--backoff", "0"],
                cwd=REPO,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(2)
        ]
        for p in procs:
            _, err = p.communicate(timeout=600)  # a guard against a hung run
            assert p.returncode == 0, err
        fields = ("model", "messages", "temperature", "max_tokens")
        chat = [make_key("chat", {k: r["body"][k] for k in fields}) for r in llm.requests]
        searches = [json.dumps(r["body"], sort_keys=True) for r in serper.requests]
    assert chat and searches
    assert len(chat) == len(set(chat))  # no call paid twice
    assert len(searches) == len(set(searches))
    first, second = (
        [
            r.get("claim_verification_result")
            for r in map(json.loads, (tmp_path / f"out{n}" / "verification_mixed.jsonl").open())
        ]
        for n in range(2)
    )
    assert first == second
