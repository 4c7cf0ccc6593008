"""The golden report: the report of bench/golden_report.py's seeded SYNTHETIC project
(11,000 items, every kind and section) rebuilt and compared with the stored tables
(tests/annotation/data/golden_report.json.gz), each within its tolerance. A change that
moves a figure on purpose regenerates them (`bench/golden_report.py --write`) and says
which tables moved in its commit."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import golden_report  # noqa: E402


def test_the_report_is_the_golden_report() -> None:
    """In a new process with its own throwaway database (migrated from scratch, so the
    ids, and the names made of them, are those of the stored report)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "golden_report.py")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "the report is the golden report"


def test_the_golden_report_has_every_section() -> None:
    golden = golden_report.read()
    assert golden["items"] >= 10_000
    slugs = {s["slug"] for s in golden["sections"]}
    assert not [s for s in golden["sections"] if s["error"]]
    for slug in (
        "agreement-atomic-label",
        "preference",
        "claim-labels",
        "evidence-ranks",
        "fact-labels",
        "verifiers",
        "pipeline",
        "factscore",
        "extractor-vs-extractor",
        "score-vs-score",
        "effort",
        "quality",
        "adaptive-overlap",
        "planning",
    ):
        assert slug in slugs
    assert all(t["rows"] for t in golden["tables"].values())


def test_a_difference_names_the_table_row_and_column() -> None:
    golden = golden_report.read()
    now = copy.deepcopy(golden)
    table = now["tables"]["fact-labels"]
    column = table["columns"].index("%")
    first = table["rows"][1][0]
    table["rows"][1][column] += 1e-6
    assert golden_report.differences(golden, now) == [
        f"table fact-labels, row 2 ({first!r}), column '%': golden "
        f"{golden['tables']['fact-labels']['rows'][1][column]!r}, now "
        f"{table['rows'][1][column]!r} (tolerance 1e-09)"
    ]
    table["rows"][1][column] -= 1e-6 - 1e-12  # within the tolerance
    assert golden_report.differences(golden, now) == []
    del table["rows"][-1]
    now["tables"].pop("effort")
    assert golden_report.differences(golden, now) == [
        "table effort: in the golden, not in the report now",
        f"table fact-labels: {len(golden['tables']['fact-labels']['rows'])} rows in the golden, "
        f"{len(table['rows'])} now",
    ]
