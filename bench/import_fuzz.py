"""Fuzzing every importer for longer than the suite does: the property tests of
tests/annotation/test_import_fuzz.py (each format, mapping files, raw bytes) and
test_safe_format.py (SAFE), with many examples each, randomized (not derandomized as
in CI): "a named error or a clean import, never anything else".

    .venv/bin/python bench/import_fuzz.py                  # 2,000 examples per test
    .venv/bin/python bench/import_fuzz.py --examples 200   # a shorter run

Printed: the examples per test, the tests run and how long they took; the exit status
is pytest's (a crash found is shown with the smallest input hypothesis could make).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the property tests (all named "..._crash"; -k keeps this script's smoke test out)
TESTS = [
    "tests/annotation/test_import_fuzz.py",
    "tests/annotation/test_safe_format.py::test_no_safe_file_makes_an_import_crash",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="examples per test")
    args = parser.parse_args()
    env = {**os.environ, "FUZZ_EXAMPLES": str(args.examples)}
    env.pop("CI", None)  # randomized: each run explores new inputs
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "crash", *TESTS],
        cwd=ROOT,
        env=env,
    )
    print(
        f"fuzz: {args.examples} examples per test, {time.monotonic() - start:.0f} s, "
        f"{'no crash' if done.returncode == 0 else 'FAILED'}"
    )
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
