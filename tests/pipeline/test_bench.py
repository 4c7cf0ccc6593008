"""A smoke run of the throughput benchmark: it completes and prints its figures."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import REPO

pytestmark = pytest.mark.slow


def quick_run(bench: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / bench), "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_the_benchmark_runs_quickly_and_prints_figures() -> None:
    proc = quick_run("pipeline_throughput.py")
    for figure in (
        "(a) concurrency 1:",
        "(b) concurrency",
        "responses/min",
        "speed-up",
        "ideal time",
        "rerun from cache",
        "(c) --batch:",
        "(d) VeriFastScore:",
        "LLM calls per response",
    ):
        assert figure in proc.stdout


def test_the_two_process_cache_benchmark_runs_and_pays_no_call_twice() -> None:
    proc = quick_run("cache_two_processes.py")
    assert "openai: " in proc.stdout and "serper: " in proc.stdout
    assert proc.stdout.count(" 0 paid twice") == 2
