"""A smoke run of the throughput benchmark: it completes and prints its figures."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import parity
from tests.requires import unavailable

from .conftest import PEER_DATA, REPO

pytestmark = pytest.mark.slow


def quick_run(bench: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / bench), "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hung process, far from a loaded machine's time
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


def test_the_reference_parity_benchmark_finds_no_difference(tmp_path: Path) -> None:
    # Two InstructGPT bios, which the parity test does not use, as VeriScore input.
    bios = PEER_DATA / "factscore_labeled" / "InstructGPT.jsonl"
    if not bios.exists() or parity.venv_python(build=True) is None:
        unavailable(f"the shared peer data or {parity.why_no_venv()}")
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(i) + "\n" for i in parity.factscore_inputs(bios, 2)))
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "reference_parity.py"), "--input", str(data),
         "--quick"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"requests compared: [1-9]\d*, differences: 0", proc.stdout)
    assert "x faster than the released code" in proc.stdout
