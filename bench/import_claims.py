"""Benchmark: one canonical document with a very long claim list, imported as
`import_data` does; the time per claim of a large list against a small one.

    .venv/bin/python bench/import_claims.py              # 5,000 and 200,000 claims
    .venv/bin/python bench/import_claims.py --quick      # 500 and 20,000: a smoke run

Each file is one SYNTHETIC document ("SYNTHETIC" in its id and every claim; not real
data) whose one system has N short claims (200,000 claims: about 3 MB, under the 20 MB
that moves an upload to the background). Each size is imported by bench/import_scale.py's
child process into a throwaway SQLite database. Printed: seconds and microseconds per
claim of each size, and the ratio of the largest's per-claim time to the smallest's
(the target: at most 2); the exit status is 3 above it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import yardstick_line

HERE = Path(__file__).resolve().parent
TARGET = 2.0


def write_file(path: Path, claims: int) -> None:
    record = {
        "id": f"SYNTHETIC-long-list-{claims}",
        "response": "SYNTHETIC response with a very long claim list.",
        "claim_lists": {"SYNTHETIC extractor": [f"SYNTHETIC c{k}." for k in range(claims)]},
    }
    path.write_text(json.dumps(record) + "\n")


def run(path: Path, database: Path) -> dict[str, float]:
    env = {**os.environ, "SQLITE_PATH": str(database)}
    env.pop("DATABASE_URL", None)
    out = subprocess.run(
        [sys.executable, str(HERE / "import_scale.py"), "--child", str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="500 and 20,000 claims")
    args = parser.parse_args(argv)
    sizes = [500, 20_000] if args.quick else [5_000, 200_000]
    tmp = Path(tempfile.mkdtemp(prefix="claims-bench-"))
    per_claim = []
    print(yardstick_line())
    try:
        for n in sizes:
            path = tmp / f"synthetic-{n}.jsonl"
            write_file(path, n)
            r = run(path, tmp / f"bench-{n}.sqlite3")
            assert r["claims"] == n, r
            per_claim.append(r["seconds"] / n)
            print(
                f"SQLite: one document of {n:,} claims ({path.stat().st_size / 2**20:.1f} MB) "
                f"in {r['seconds']:.2f} s: {per_claim[-1] * 1e6:.1f} us per claim "
                f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ratio = per_claim[-1] / per_claim[0]
    print(
        f"per-claim time of {sizes[-1]:,} claims / of {sizes[0]:,}: {ratio:.2f} "
        f"(target: at most {TARGET:g})"
    )
    print(yardstick_line())
    if ratio > TARGET:
        print("ABOVE TARGET")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
