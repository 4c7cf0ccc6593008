"""Smoke runs of the benchmarks that had none, so they do not rot: each runs end to end at
a tiny size and prints its figures with the CPU yardstick (bench/measure.py). Their
timings are not checked (machines differ); what they print is."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
YARDSTICK = re.compile(r"CPU yardstick \d+\.\d{3} s \(3M-step Python loop")


def bench(*args: str, timeout: int = 600) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_kendall_scale() -> None:
    out = bench("kendall_scale.py", "--points", "40", "--resamples", "20", "--repeat", "1")
    assert len(YARDSTICK.findall(out)) == 2, out
    assert re.search(r"^ +40 points x 20 resamples: CPU \d", out, re.M), out


def test_crowd_gold() -> None:
    out = bench("crowd_gold.py", "--units", "60", "--repeat", "1", "--methods", "majority", "glad")
    assert len(YARDSTICK.findall(out)) == 2, out
    for method in ("majority", "glad"):
        assert re.search(rf"60 x 3  {method} +\d+\.\d\d s \(CPU .*right \d", out), out


def test_reference_effects() -> None:
    out = bench("reference_effects.py", "--responses", "2")
    assert "reference, empty responses abstained" in out, out


def test_crowd_demo_example() -> None:
    out = bench("crowd_demo_example.py")
    assert "| verifier macro F1 | veriscore-human-labels / claim / binary |" in out, out


def test_first_report() -> None:
    out = bench("first_report.py", "--restarts", "1", "--workers", "1")
    assert re.search(r"restart 1: \d+\.\d\d s, status 200", out), out
    assert YARDSTICK.search(out), out


@pytest.mark.database("postgresql")
def test_crowd_cpu() -> None:
    """It starts its own throwaway PostgreSQL (scripts/ensure-postgres): the PostgreSQL pass."""
    out = bench("crowd_cpu.py", "--hires", "3", "--warm", "1", timeout=900)
    assert YARDSTICK.search(out), out


def test_report_sections(tmp_path: Path) -> None:
    db = tmp_path / "r300.sqlite3"
    args = ["report_sections.py", "--db", str(db), "--items", "300", "--bootstrap", "20"]
    out = bench(*args, "--repeat", "1", "--profile", "5")
    assert db.exists() and YARDSTICK.search(out), out
    for part in ("whole build", "shared data (report_data)", "agreement", "metrics", "HTML"):
        assert re.search(rf"^  {re.escape(part)} +\d+\.\d{{3}} s$", out, re.M), part
    assert "ncalls  tottime" in out  # --profile: the costliest functions
    again = bench(*args, "--repeat", "1")  # the kept database is read, not made again
    assert "whole build" in again
