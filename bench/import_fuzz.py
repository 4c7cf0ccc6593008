"""Fuzzing every importer for longer than the suite does: the property tests of
tests/annotation/test_import_fuzz.py (each format, mapping files, raw bytes) and
test_safe_format.py (SAFE), with many examples each, randomized with a fresh seed (the
suite is derandomized in CI): "a named error or a clean import, never anything else".

    .venv/bin/python bench/import_fuzz.py                  # 2,000 examples per test
    .venv/bin/python bench/import_fuzz.py --examples 200   # a shorter run
    .venv/bin/python bench/import_fuzz.py --seconds 180    # stopped after 3 minutes
    .venv/bin/python bench/import_fuzz.py --seed 1234      # that run again

Printed: the seed first, then pytest's output (a crash is shown with its falsifying
example, the smallest input hypothesis could make), then the examples per test, how long
it took and what it found. The exit status is 1 when a crash was found, else 0 (a run
stopped at --seconds is not a failure). Pin a crash as an @example of its test with its fix.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the property tests (all named "..._crash"; -k keeps this script's smoke test out)
TESTS = [
    "tests/annotation/test_import_fuzz.py",
    "tests/annotation/test_safe_format.py::test_no_safe_file_makes_an_import_crash",
]


def crashes(report: Path) -> int:
    """Failed and erroring tests in pytest's JUnit XML report (0 when it wrote none)."""
    try:
        root = ET.parse(report).getroot()
    except (OSError, ET.ParseError):
        return 0
    suites = [root] if root.tag == "testsuite" else list(root)
    return sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="examples per test")
    parser.add_argument("--seed", type=int, help="hypothesis's seed (default: a fresh one)")
    parser.add_argument("--seconds", type=float, help="stop the run after this long")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    print(f"fuzz: seed {seed} (again: bench/import_fuzz.py --seed {seed})", flush=True)
    env = {**os.environ, "FUZZ_EXAMPLES": str(args.examples)}
    env.pop("CI", None)  # not the "ci" profile: the "fuzz" one below, with the seed
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             # the tests in an order of the seed too: a run stopped at --seconds leaves
             # out other tests each time
             f"--randomly-seed={seed}",
             "--hypothesis-profile=fuzz", f"--hypothesis-seed={seed}",
             f"--junitxml={report}", "-k", "crash", *TESTS],
            cwd=ROOT,
            env=env,
        )  # fmt: skip
        stopped = False
        try:
            proc.wait(timeout=args.seconds)
        except subprocess.TimeoutExpired:
            # SIGINT: pytest stops, reports what it found so far and writes its report
            stopped = True
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        found = crashes(report)
    if proc.returncode not in (0, 1) and not stopped:  # no tests, a usage error...
        print(f"fuzz: pytest ended with status {proc.returncode}")
        return proc.returncode
    outcome = (
        f"{found} test(s) crashed (falsifying examples above; pin each as an @example with its fix)"
        if found
        else "no crash"
    )
    print(
        f"fuzz: {args.examples} examples per test, seed {seed}, "
        f"{time.monotonic() - start:.0f} s{' (stopped at --seconds)' if stopped else ''}, "
        f"{outcome}"
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
