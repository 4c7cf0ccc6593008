"""Smoke run of the launch benchmark (issue 41): a dozen strangers join through the invite
link of the production server on its own throwaway PostgreSQL, with the task worker,
train (some fail), work, abandon and come back; then the saturating run. The bench
checks the database itself and exits non-zero on a lost or doubled answer, an item over
its overlap, a finished hire without its code, a screened-out hire's open items, a 5xx
or any client error."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

# the bench starts its own PostgreSQL (scripts/ensure-postgres): run on the PostgreSQL pass
pytestmark = [pytest.mark.slow, pytest.mark.database("postgresql")]

ROOT = Path(__file__).resolve().parents[2]


def test_the_launch_benchmark_runs_in_smoke_mode() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "crowd_launch.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert out.count("consistent: yes") == 2, out
    for endpoint in ("join", "first page", "next", "submit"):
        assert re.search(rf"^  {endpoint} +12 ", out, re.M) or endpoint in ("next", "submit")
    joins = re.findall(r"join 200: (\d+)", out)
    assert joins == ["24", "24"], out  # the link page and the Start button, every worker
    assert "5xx: 0; errors: none" in out
    assert re.search(r"hires: 12 joined, \d+ completed \(0 without", out), out
    assert "CPU yardstick" in out and "database, most at once: connections" in out
