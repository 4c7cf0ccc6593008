"""Smoke run of bench/release_scale.py: a 300-item release builds in a fresh process and
its figures print."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_release_bench_prints_its_figures() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "release_scale.py"), "--quick", "--bootstrap", "20"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "SYNTHETIC data: 300 items x 3 annotators" in out
    assert re.search(r"release: items 300, annotations [\d,]+, gold [\d,]+", out)
    assert re.search(r"build_release with the zip: [\d.]+ s, CPU [\d.]+ s \(load average", out)
    assert re.search(r"peak resident set of that process: \d+ MB", out)
    assert re.search(r"CPU yardstick \(bench/measure.py\): [\d.]+ s before, [\d.]+ s after", out)
