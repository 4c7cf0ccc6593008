"""Smoke test of the benchmark script: it runs end to end on a small synthetic project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_runs_in_quick_mode() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "report_scale.py"),
            "--quick",
            "--bootstrap",
            "50",
            "--profile",
            "--every-section",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "SYNTHETIC data on sqlite: 300 items x 3 annotators" in result.stdout
    for figure in ("split and stored", "first report", "in a fresh process", "repeated", "peak"):
        assert figure in result.stdout, figure
    # three report times, two tables downloaded twice each (rendered, then again from the
    # cache), traced memory and RSS
    assert result.stdout.count(" - target < ") == 9
    assert result.stdout.count("CPU yardstick ") == 2  # before and after
    assert result.stdout.count("as CSV, downloaded again: ") == 2
    assert "the report cache: the entry " in result.stdout and " tables " in result.stdout
    # --profile: the memory by phase and the fresh build's 20 functions by cumulative time
    assert "memory by phase" in result.stdout and "  shared data " in result.stdout
    assert "top 20 by cumulative time" in result.stdout and "build_report" in result.stdout
