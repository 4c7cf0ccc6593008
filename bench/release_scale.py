"""Benchmark: a release (annotation/release) of a large project of SYNTHETIC answers.

    .venv/bin/python bench/release_scale.py                  # 100,000 items x 3 annotators
    .venv/bin/python bench/release_scale.py --items 10000    # another size
    .venv/bin/python bench/release_scale.py --quick          # 300 items, a smoke run

The project is bench/report_scale.py's (`build_synthetic`: 40 % verification, 30 %
comparison, 30 % segment items, every item answered by every annotator, two synthetic
verifiers on every claim), made in a throwaway SQLite database (a temporary file,
migrated from scratch, removed afterwards). Its answers are random draws around a hidden
true label; they say nothing about any real annotation.

Timed: `build_release` with the zip, in a fresh Python process (its one-off imports timed
apart), with its CPU time, its peak resident set (VmHWM) and the load average; the issue's
targets are < 60 s and < 1 GB at 100,000 items x 3. The CPU yardstick (a fixed pure-Python
loop, timed before and after) says how fast this machine ran at the time: on a loaded
machine the wall time grows, the yardstick with it.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from measure import peak_rss_mb, yardstick  # noqa: E402

TARGET_SECONDS = 60
TARGET_MB = 1024


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def child(project_id: int, out: str, bootstrap: int) -> None:
    """The fresh process: one release of an existing project, its figures as JSON."""
    t0 = time.perf_counter()
    from annotation import kinds, reports
    from annotation.models import Project
    from annotation.release import ReleaseOptions, build_release

    kinds.all_specs()
    reports.warm_up()
    imports = time.perf_counter() - t0
    project = Project.objects.get(pk=project_id)
    t0, c0 = time.perf_counter(), time.process_time()
    release = build_release(project, Path(out), ReleaseOptions(bootstrap=bootstrap), make_zip=True)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    sizes = {str(p.relative_to(out)): p.stat().st_size for p in Path(out).rglob("*") if p.is_file()}
    assert release.zip is not None
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu": cpu,
                "imports": imports,
                "max_rss_mb": peak_rss_mb(),
                "rows": release.rows,
                "folder_mb": sum(sizes.values()) / 2**20,
                "zip_mb": release.zip.stat().st_size / 2**20,
            }
        )
    )


def bench(n_items: int, args: argparse.Namespace, tmp: str) -> bool:
    from report_scale import build_synthetic

    from annotation.models import Answer

    t0 = time.perf_counter()
    project = build_synthetic(n_items, n_annotators=args.annotators)
    built = time.perf_counter() - t0
    answers = Answer.objects.filter(assignment__item__project=project).count()
    print(
        f"\nSYNTHETIC data: {n_items} items x {args.annotators} annotators, {answers} "
        f"synthetic answers (built in {built:.1f} s; not real annotations)"
    )
    before = yardstick()
    out = str(Path(tmp) / f"release-{n_items}")
    command = [sys.executable, __file__, "--child", str(project.pk), "--out", out]
    command += ["--bootstrap", str(args.bootstrap)]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    after = yardstick()
    if run.returncode:
        print(run.stderr, file=sys.stderr)
        return False
    got = json.loads(run.stdout.strip().splitlines()[-1])
    rows = ", ".join(f"{k} {v:,}" for k, v in got["rows"].items())
    fast = got["seconds"] < TARGET_SECONDS
    small = got["max_rss_mb"] < TARGET_MB
    print(f"release: {rows}")
    print(
        f"files {got['folder_mb']:.1f} MB, zip {got['zip_mb']:.1f} MB; one-off imports of the "
        f"fresh process {got['imports']:.1f} s (not counted)"
    )
    print(
        f"build_release with the zip: {got['seconds']:.1f} s, CPU {got['cpu']:.1f} s "
        f"({load()}) - target < {TARGET_SECONDS} s at 100,000 x 3: "
        f"{'met' if fast else 'NOT met'}"
    )
    print(
        f"peak resident set of that process: {got['max_rss_mb']:.0f} MB - target < "
        f"{TARGET_MB} MB: {'met' if small else 'NOT met'}"
    )
    print(f"CPU yardstick (bench/measure.py): {before:.3f} s before, {after:.3f} s after")
    return fast and small


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--annotators", type=int, default=3)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="300 items: a smoke run")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="release-bench-")
    if args.child is None:
        os.environ.pop("DATABASE_URL", None)
        os.environ["SQLITE_PATH"] = str(Path(tmp) / "bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    sys.path.insert(0, str(ROOT))
    try:
        import django

        django.setup()
        if args.child is not None:
            child(args.child, args.out, args.bootstrap)
            return 0
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        call_command("createcachetable", verbosity=0)
        ok = bench(300 if args.quick else args.items, args, tmp)
    finally:
        if args.child is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
