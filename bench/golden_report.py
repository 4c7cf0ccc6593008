"""The golden report: every table of the report of a seeded SYNTHETIC project, stored.

    .venv/bin/python bench/golden_report.py            # rebuild and compare (exit 1: differs)
    .venv/bin/python bench/golden_report.py --write    # regenerate the stored tables on purpose

The project is bench/report_scale.py's builder at 10,000 items (verification, comparison
and segment items, three annotators, verifiers' and a reference's verdicts) with
`add_every_section` (1,000 atomic-fact items under adaptive overlap, adjudications, a
finished pipeline run, a hiring policy with a hired annotator, training and check items),
built in a throwaway SQLite database (migrated from scratch, so its ids are the same on
every run), and its report built with the planning section and 1,000 bootstrap
resamples. Its tables are stored in tests/annotation/data/golden_report.json.gz, each
with its tolerance (TOLERANCES, else DEFAULT_TOLERANCE: numbers within it, relative or
absolute, are equal; text and row counts must match exactly), and compared by
tests/annotation/test_golden_report.py. A difference is printed as the table, the row
(its number and first cell) and the column, with both values.

A change that moves a figure on purpose regenerates the file with --write, and the commit
says which tables moved and why (`git diff` of the file is binary: the script's
comparison against the committed version, run before --write, is the review).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "annotation" / "data" / "golden_report.json.gz"
ITEMS = 10_000
ATOMIC_ITEMS = 1_000
BOOTSTRAP = 1_000
SEED = 0
# A table's numbers within this (relative or absolute) are the same: it absorbs the
# order of floating-point sums across numpy and BLAS builds, nothing a reader would see.
DEFAULT_TOLERANCE = 1e-9
TOLERANCES: dict[str, float] = {}  # table name -> its own tolerance, with the reason
MAX_SHOWN = 5  # differences printed per table


def build() -> dict[str, Any]:
    """The seeded project's report, as the stored form: its sections (slug, error, table
    names) and each table's columns, rows and tolerance."""
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    from report_scale import add_every_section, build_synthetic

    from annotation import reports
    from annotation.reports.metrics import store_sentence_counts

    project = build_synthetic(ITEMS, seed=SEED)
    add_every_section(project, n_atomic=ATOMIC_ITEMS, seed=SEED)
    store_sentence_counts(project.pk)
    report = reports.build_report(project, bootstrap=BOOTSTRAP, seed=SEED, plan=True)
    return {
        "items": ITEMS + ATOMIC_ITEMS,
        "bootstrap": BOOTSTRAP,
        "seed": SEED,
        "sections": [
            {"slug": s.slug, "error": s.error, "tables": [t.name for t in s.tables]}
            for s in report.sections
        ],
        "tables": {
            t.name: {
                "columns": list(t.columns),
                "rows": [list(r) for r in t.rows],
                "tolerance": TOLERANCES.get(t.name, DEFAULT_TOLERANCE),
            }
            for t in report.tables()
        },
    }


def same(a: Any, b: Any, tolerance: float) -> bool:
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    return a == b


def table_differences(name: str, golden: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs in one table: its columns, its row count, or cells (table, row
    number and first cell, column, both values), at most MAX_SHOWN cells and a count."""
    if golden["columns"] != now["columns"]:
        return [f"table {name}: columns {golden['columns']} in the golden, {now['columns']} now"]
    out = []
    if len(golden["rows"]) != len(now["rows"]):
        out.append(
            f"table {name}: {len(golden['rows'])} rows in the golden, {len(now['rows'])} now"
        )
    tolerance = golden["tolerance"]
    cells = []
    for i, (old, new) in enumerate(zip(golden["rows"], now["rows"], strict=False)):
        for column, a, b in zip(golden["columns"], old, new, strict=True):
            if not same(a, b, tolerance):
                cells.append(
                    f"table {name}, row {i + 1} ({old[0]!r}), column {column!r}: "
                    f"golden {a!r}, now {b!r} (tolerance {tolerance:g})"
                )
    out += cells[:MAX_SHOWN]
    if len(cells) > MAX_SHOWN:
        out.append(f"table {name}: {len(cells) - MAX_SHOWN} more cells differ")
    return out


def differences(golden: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Every difference between the stored report and the rebuilt one, one a line."""
    out = []
    for key in ("items", "bootstrap", "seed"):
        if golden[key] != now[key]:
            out.append(f"{key}: {golden[key]} in the golden, {now[key]} now")
    old_sections = [(s["slug"], s["error"]) for s in golden["sections"]]
    new_sections = [(s["slug"], s["error"]) for s in now["sections"]]
    if old_sections != new_sections:
        out.append(f"sections (slug, error): {old_sections} in the golden, {new_sections} now")
    for name in golden["tables"]:
        if name not in now["tables"]:
            out.append(f"table {name}: in the golden, not in the report now")
    for name, table in now["tables"].items():
        if name not in golden["tables"]:
            out.append(f"table {name}: in the report now, not in the golden")
        else:
            out += table_differences(name, golden["tables"][name], table)
    return out


def read(path: Path = GOLDEN) -> dict[str, Any]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def write(report: dict[str, Any], path: Path = GOLDEN) -> None:
    # mtime=0: the same tables give the same bytes, so git sees no change
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(json.dumps(report, indent=1, sort_keys=True).encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="regenerate the stored tables")
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="golden-report-")
    os.environ.pop("DATABASE_URL", None)
    os.environ["SQLITE_PATH"] = str(Path(tmp) / "golden.sqlite3")
    os.environ["DJANGO_SETTINGS_MODULE"] = "annotation.settings"
    try:
        now = build()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if GOLDEN.exists():
        found = differences(read(), now)
        print("\n".join(found) or "the report is the golden report")
    else:
        found = ["no golden report stored yet"]
        print(found[0])
    if args.write:
        write(now)
        print(f"written: {GOLDEN.relative_to(ROOT)} ({len(now['tables'])} tables)")
        return 0
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
