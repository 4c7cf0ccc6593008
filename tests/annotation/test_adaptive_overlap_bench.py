"""Smoke run of bench/adaptive_overlap.py: the table prints and its figures hold together."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_simulation_prints_its_table() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "adaptive_overlap.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "SYNTHETIC answers: 2000 items per scenario" in result.stdout
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in result.stdout.splitlines()
        if line.startswith("| uniform") or line.startswith("| 20 %") or line.startswith("| 40 %")
    ]
    assert len(rows) == 4 * 6
    for _scenario, _, policy, per_item, _, saved, accuracy in rows:
        assert 0 <= float(accuracy) <= 1
        if policy.startswith("fixed"):
            assert float(per_item) == int(policy[-1]) and saved.startswith("+0%")
        else:
            start, up_to = policy.split()[1].split("->")
            assert int(start) <= float(per_item) <= int(up_to)
    # unanimity escalates more than the majority rule, and buys accuracy with it
    by = {(r[0], r[2]): r for r in rows}
    for scenario in {r[0] for r in rows}:
        majority = by[(scenario, "adaptive 2->5 majority")]
        unanimity = by[(scenario, "adaptive 2->5 unanimity")]
        assert float(unanimity[3]) > float(majority[3])
        assert float(unanimity[6]) >= float(majority[6])
