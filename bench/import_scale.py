"""Benchmark: `import_data` on a large SYNTHETIC canonical file.

    .venv/bin/python bench/import_scale.py                  # 100,000 and 1,000,000 lines
    .venv/bin/python bench/import_scale.py --lines 100000   # one size
    .venv/bin/python bench/import_scale.py --quick          # 300 lines, a smoke run
    DATABASE_URL=postgres://... .venv/bin/python bench/import_scale.py   # SQLite, then PostgreSQL
    DATABASE_URL=... .venv/bin/python bench/import_scale.py --database postgres   # PostgreSQL only

Each line is one synthetic document ("SYNTHETIC" in its id, question and text; not
real data): a 500-character response, a question, and two systems with 15 claims each.
Each size runs in a child process (so its peak resident memory is its own) that
imports the file into a fresh project, as `manage.py import_data` does, on a throwaway
SQLite database (a temporary file, migrated from scratch) and, when DATABASE_URL is
set, on a throwaway database of that PostgreSQL server (created, migrated from scratch
and dropped afterwards: its user needs CREATEDB; deleting 30,000,000 claims row by row
would take longer than importing them). Printed, and at
the end side by side: documents per second, the child's peak resident memory (max RSS),
the importing process's CPU time (both its threads), PostgreSQL's server process's CPU
time when the server runs on this machine (read from /proc), and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from measure import peak_rss_mb, yardstick_line

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = 15
SYSTEMS = ("SYNTHETIC extractor A", "SYNTHETIC extractor B")


def write_file(path: Path, lines: int) -> None:
    """`lines` synthetic canonical documents."""
    words = "synthetic text about nothing in particular, written for a benchmark only "
    response = (words * 8)[:500]
    with open(path, "w") as f:
        for i in range(lines):
            record = {
                "id": f"synthetic-{i}",
                "question": f"SYNTHETIC question number {i}?",
                "response": response,
                "claim_lists": {
                    name: [
                        f"SYNTHETIC claim {k} of document {i} by {name[-1]}." for k in range(CLAIMS)
                    ]
                    for name in SYSTEMS
                },
            }
            f.write(json.dumps(record) + "\n")


def child(path: Path) -> None:
    """Import `path` into a fresh project; print seconds and max RSS as JSON."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from annotation.ingest import import_file
    from annotation.models import Project

    call_command("migrate", verbosity=0)
    project = Project.objects.create(
        name=f"SYNTHETIC import benchmark {time.time_ns()}",
        description="Synthetic documents from bench/import_scale.py; not real data.",
    )
    server = server_cpu_reader()
    s0, t0, c0 = server(), time.perf_counter(), time.process_time()
    summary = import_file(project=project, path=path, file=path.name, fmt="canonical")
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    s1 = server()
    server_cpu = s1 - s0 if s0 is not None and s1 is not None else None
    rss = peak_rss_mb()
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_seconds": cpu,
                "server_cpu_seconds": server_cpu,
                "documents": summary.documents_created,
                "claims": summary.claims_created,
                "max_rss_mb": rss,
                "load": os.getloadavg()[0],
            }
        ),
        flush=True,
    )


def server_cpu_reader() -> Callable[[], float | None]:
    """A function giving the CPU seconds used so far by this connection's PostgreSQL
    server process, when it runs on this machine and /proc shows it (None otherwise)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return lambda: None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        stat = Path(f"/proc/{cursor.fetchone()[0]}/stat")

    def read() -> float | None:
        try:  # utime and stime, fields 14 and 15, after the ")" that ends the name
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # another machine's server, or not ours to read
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    return read


def run(path: Path, lines: int, database: str, env: dict[str, str]) -> dict[str, Any] | None:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        print(out.stderr, file=sys.stderr)
        return None
    r: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    r.update(database=database, lines=lines, rate=r["documents"] / r["seconds"])
    server = r["server_cpu_seconds"]
    print(
        f"{database}: {lines:,} lines ({path.stat().st_size / 2**20:.0f} MB), "
        f"{r['documents']:,} documents and {r['claims']:,} claims in {r['seconds']:.1f} s: "
        f"{r['rate']:,.0f} documents/s; peak resident memory {r['max_rss_mb']:.0f} MB "
        f"(this process's CPU time {r['cpu_seconds']:.1f} s: "
        f"{r['documents'] / max(r['cpu_seconds'], 1e-9):,.0f} documents per CPU second"
        + (f"; the server process's CPU time {server:.1f} s" if server is not None else "")
        + f"; load average {r['load']:.1f} on {os.cpu_count()} cores)"
    )
    return r


@contextmanager
def throwaway_database(url: str) -> Iterator[str]:
    """The URL of a new, empty database on `url`'s server, dropped afterwards."""
    import psycopg

    name = f"import_bench_{os.getpid()}_{time.time_ns()}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield urlunsplit(urlsplit(url)._replace(path=f"/{name}"))
        finally:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def table(results: list[dict[str, Any]]) -> str:
    """The runs side by side (a Markdown table)."""
    rows = [
        "| database | lines | time | documents/s | importing process CPU | server CPU "
        "| peak memory | load average |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        server = r["server_cpu_seconds"]
        rows.append(
            f"| {r['database']} | {r['lines']:,} | {r['seconds']:.1f} s | {r['rate']:,.0f} "
            f"| {r['cpu_seconds']:.1f} s | {'' if server is None else f'{server:.1f} s'} "
            f"| {r['max_rss_mb']:.0f} MB | {r['load']:.1f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, action="append")
    parser.add_argument("--quick", action="store_true", help="300 lines: a smoke run")
    parser.add_argument(
        "--database",
        choices=["sqlite", "postgres", "both"],
        help="default: both when DATABASE_URL is set, else sqlite",
    )
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    sizes = [300] if args.quick else (args.lines or [100_000, 1_000_000])
    database = args.database or ("both" if os.environ.get("DATABASE_URL") else "sqlite")
    if database != "sqlite" and not os.environ.get("DATABASE_URL"):
        print(f"--database {database} needs DATABASE_URL (scripts/ensure-postgres)")
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="import-bench-"))
    results: list[dict[str, Any] | None] = []
    print(yardstick_line())
    try:
        for lines in sizes:
            path = tmp / f"synthetic-{lines}.jsonl"
            write_file(path, lines)
            print(
                f"SYNTHETIC canonical file: {lines:,} documents, each a 500-character "
                f"response, a question and {len(SYSTEMS)} systems x {CLAIMS} claims"
            )
            if database in ("sqlite", "both"):
                sqlite = {**os.environ, "SQLITE_PATH": str(tmp / f"bench-{lines}.sqlite3")}
                sqlite.pop("DATABASE_URL", None)
                results.append(run(path, lines, "SQLite", sqlite))
                for name in tmp.glob("bench-*.sqlite3*"):
                    name.unlink()
            if database in ("postgres", "both"):
                with throwaway_database(os.environ["DATABASE_URL"]) as url:
                    results.append(
                        run(path, lines, "PostgreSQL", {**os.environ, "DATABASE_URL": url})
                    )
            path.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    done = [r for r in results if r is not None]
    print(table(done))
    print(yardstick_line())
    ok = len(done) == len(results) and all(r["documents"] == r["lines"] for r in done)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
