"""Where the report's CPU goes: each section of `reports.build_report` timed apart, in a warmed
process, on a kept SYNTHETIC database, to compare two versions of the code back to back.

    .venv/bin/python bench/report_sections.py --db /tmp/r10k.sqlite3             # builds it first
    .venv/bin/python bench/report_sections.py --db /tmp/r10k.sqlite3 --code ../old-checkout
    .venv/bin/python bench/report_sections.py --db /tmp/r100k.sqlite3 --items 100000 --repeat 1
    .venv/bin/python bench/report_sections.py --db /tmp/r10k.sqlite3 --profile 30

The database is bench/report_scale.py's SYNTHETIC project (`build_synthetic`, its sentences
counted), made at --db when the file does not exist and kept, so that runs of different code
read the same data. --code puts another checkout first on the import path (its `annotation`
and `pipeline` are timed; the database must be one its migrations know). Printed: the CPU
yardstick (bench/measure.py), then each part's CPU time, the minimum over --repeat builds
(each build: `report_data`, every section, the report's HTML), largest first; --profile N
adds one more build under cProfile, its N costliest functions by own time.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from measure import yardstick_line

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="the SQLite file (made if absent)")
    parser.add_argument("--items", type=int, default=10_000, help="when the file is made")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to time")
    parser.add_argument("--repeat", type=int, default=4)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--profile", type=int, default=0)
    args = parser.parse_args(argv)
    new = not args.db.exists()
    os.environ.pop("DATABASE_URL", None)
    os.environ["SQLITE_PATH"] = str(args.db.resolve())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    sys.path[:0] = [str(args.code.resolve())]
    import django

    django.setup()
    if new:
        make(args.items)
    from annotation.models import Project

    project = Project.objects.get(name__startswith="SYNTHETIC")
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        for part, seconds in timed_build(project, args.bootstrap).items():
            best[part] = min(best.get(part, float("inf")), seconds)
    print(yardstick_line())
    print(f"code {args.code.resolve()}, {args.db}: CPU, minimum of {args.repeat} builds")
    for part, seconds in sorted(best.items(), key=lambda kv: -kv[1]):
        print(f"  {part:<32} {seconds:7.3f} s")
    if args.profile:
        import cProfile
        import pstats

        from annotation import reports

        profiler = cProfile.Profile(time.process_time)
        profiler.runcall(reports.build_report, project, bootstrap=args.bootstrap)
        pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(args.profile)
    return 0


def make(items: int) -> None:
    from django.core.management import call_command
    from report_scale import build_synthetic

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    project = build_synthetic(items)
    from annotation.reports.metrics import store_sentence_counts

    store_sentence_counts(project.pk)


def timed_build(project: Any, bootstrap: int) -> dict[str, float]:
    """One uncached report and its HTML: the CPU seconds of the shared data
    (`report_data`), of each section (`reports.isolated`, by its slug), of the whole build
    and of the HTML."""
    from django.template.loader import render_to_string

    from annotation import kinds, reports

    kinds.all_specs()
    reports.warm_up()
    times: dict[str, float] = {}

    def clocked(name: str | None, function: Any) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            start = time.process_time()
            try:
                return function(*a, **k)
            finally:
                key = name or a[0]  # isolated(slug, title, build)
                times[key] = times.get(key, 0.0) + time.process_time() - start

        return run

    saved = reports.report_data, reports.isolated
    reports.report_data = clocked("shared data (report_data)", saved[0])
    reports.isolated = clocked(None, saved[1])
    try:
        report = clocked("whole build", reports.build_report)(project, bootstrap=bootstrap)
        context = {"project": project, "report": report, "css": "", "standalone": True}
        clocked("HTML", render_to_string)("annotation/report_file.html", context)
    finally:
        reports.report_data, reports.isolated = saved
    return times


if __name__ == "__main__":
    sys.exit(main())
