"""Smoke run of the load benchmark: the production server on a throwaway project, a few
annotators through the pages and the API, every confirmed submission stored once."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_load_benchmark_runs_in_smoke_mode() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "annotate_load.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {tuple(line.split()[:2]) for line in result.stdout.splitlines()}
    assert {
        ("pages", "paced"),
        ("pages", "saturating"),
        ("api", "paced"),
        ("api", "saturating"),
    } <= rows
    once = re.search(r"exactly once: yes: (\d+) confirmed", result.stdout)
    assert once and int(once.group(1)) >= 4 * 3, result.stdout
