"""Server CPU and queries per request on a hired worker's path (issue 41's bottleneck).

    .venv/bin/python bench/crowd_cpu.py                    # 60 hires (10 of them warm-up)
    .venv/bin/python bench/crowd_cpu.py --hires 120 --profile 30

In one process, on a throwaway PostgreSQL (scripts/ensure-postgres) with the production
settings (DEBUG off, prepared statements, the cached template loader), each hire walks
the path `bench/crowd_launch.py` drives, one request after the other through Django's
test client (CSRF enforced, its own X-Forwarded-For): the invite link (GET), Start
(POST: join), the instructions' acknowledgement, then /next/ (its redirect) and the item
page it leads to, and the answer's POST (submit), until the end page (the completion or
screened-out code). Per kind of request it prints the mean CPU of this process
(time.process_time: the view, the template, Django, psycopg and the test client's own
small share), of the PostgreSQL backend serving it (/proc/<pid>/stat, clock ticks summed
over all requests of the kind), and the queries. The first --warm hires are not counted
(prepared statements, template and URL caches fill up). --profile N prints cProfile's
top functions for N more hires.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from pathlib import Path
from typing import Any

from annotate_load import ROOT, django_env, loadavg, start_postgres
from crowd_launch import JUSTIFICATION, plans, setup_project
from measure import yardstick_line

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

KINDS = ("join page", "join", "instructions", "next", "item page", "submit", "end page")
TICK = os.sysconf("SC_CLK_TCK")


class Meter:
    """CPU (this process and the database backend) and queries per kind of request."""

    def __init__(self, backend_pid: int) -> None:
        self.stat = Path(f"/proc/{backend_pid}/stat")
        self.cpu: dict[str, float] = defaultdict(float)
        self.db_ticks: dict[str, int] = defaultdict(int)
        self.queries: dict[str, int] = defaultdict(int)
        self.n: dict[str, int] = defaultdict(int)
        self.on = True
        self._count = 0
        self.last = (0.0, 0, 0)
        self.show = False
        self.profile: cProfile.Profile | None = None
        self.only: str | None = None

    def ticks(self) -> int:
        fields = self.stat.read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    def query(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self._count += 1
        if self.show:
            where = [
                f"{Path(f.filename).name}:{f.lineno} {f.name}"
                for f in traceback.extract_stack()
                if "/annotation/" in f.filename
            ]
            print(f"    [{self._count}] {sql[:150]}\n        {' < '.join(reversed(where))}")
        return execute(sql, params, many, context)

    def call(self, kind: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        ticks, self._count = self.ticks(), 0
        profiled = self.profile is not None and kind == (self.only or kind)
        if profiled:
            self.profile.enable()
        if self.show:
            print(f"  -- {kind} {args[0]}")
        t = time.process_time()
        response = fn(*args, **kwargs)
        if profiled:
            self.profile.disable()
        self.last = (time.process_time() - t, self.ticks() - ticks, self._count)
        self._add(kind, 1)
        return response

    def _add(self, kind: str, sign: int) -> None:
        if self.on:
            cpu, ticks, queries = self.last
            self.cpu[kind] += sign * cpu
            self.db_ticks[kind] += sign * ticks
            self.queries[kind] += sign * queries
            self.n[kind] += sign

    def relabel(self, old: str, new: str) -> None:
        """The last request was a `new`, not an `old`."""
        self._add(old, -1)
        self._add(new, 1)


def walk(client: Any, meter: Meter, spec: dict[str, Any], n: int, fails: bool) -> str:
    """One hire from the invite link to the end page; returns how it ended."""
    url = f"/join/{spec['key']}/"
    params = {"PROLIFIC_PID": f"cpu{n:05d}", "STUDY_ID": "launch", "SESSION_ID": f"s{n}"}
    r = meter.call("join page", client.get, url, params)
    assert r.status_code == 200, r.status_code
    csrf = client.cookies["csrftoken"].value
    r = meter.call("join", client.post, url, {**params, "csrfmiddlewaretoken": csrf})
    assert r.status_code == 200, r.status_code
    csrf = client.cookies["csrftoken"].value
    headers = {"HTTP_X_CSRFTOKEN": csrf, "HTTP_HX_REQUEST": "true"}
    project = spec["project"]
    r = meter.call("instructions", client.post, f"/p/{project}/instructions/", **headers)
    assert r.status_code == 302, r.status_code
    hard = "yes" if fails else "no"
    answer = {"action": "submit", "choice": "1", "hard": hard, "justification": JUSTIFICATION}
    while True:
        r = meter.call("next", client.get, f"/p/{project}/next/")
        found = re.match(r"/a/(\d+)/$", r.headers.get("location", ""))
        if r.status_code == 302 and found:
            page = meter.call("item page", client.get, found.group(0))
            assert page.status_code == 200, page.status_code
        else:  # not an item: the end page
            meter.relabel("next", "end page")
            text = r.content.decode()
            for kind in ("completion-code", "screened-out-code"):
                if f'id="{kind}"' in text:
                    return kind
            return f"other {r.status_code} {r.headers.get('location', '')}"
        r = meter.call("submit", client.post, found.group(0), answer, **headers)
        assert r.status_code == 200 and "HX-Redirect" in r.headers, r.status_code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hires", type=int, default=60)
    parser.add_argument("--warm", type=int, default=10)
    parser.add_argument("--quota", type=int, default=5)
    parser.add_argument("--profile", type=int, default=0, help="then N hires under cProfile")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", action="store_true", help="print the SQL of the last hire")
    parser.add_argument("--only", choices=KINDS, help="profile only this kind of request")
    args = parser.parse_args()
    print(yardstick_line())
    work = Path(tempfile.mkdtemp(prefix="crowd-cpu-"))
    database_url, pg = start_postgres()
    try:
        run(args, work, database_url)
        print(yardstick_line())
    finally:
        subprocess.run(
            [str(ROOT / "scripts" / "ensure-postgres"), "stop"],
            env={**os.environ, **pg},
            check=False,
        )


def run(args: argparse.Namespace, work: Path, database_url: str) -> None:
    os.environ.update(
        django_env(work, database_url),
        LOGIN_IP_HEADER="HTTP_X_FORWARDED_FOR",
        ALLOWED_HOSTS="testserver",
    )
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    call_command("migrate", verbosity=0)
    total = args.warm + args.hires + args.profile
    launch = argparse.Namespace(
        workers=total, minutes=1.0, quota=args.quota, training=2, fail_share=0.15,
        abandon_share=0.0, return_share=0.0, think_median=1.0, think_scale=0.0, seed=args.seed,
    )  # fmt: skip
    spec = setup_project(launch)
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    meter = Meter(backend)
    ends: dict[str, int] = defaultdict(int)
    profile = cProfile.Profile(time.process_time)  # CPU, not the waits for PostgreSQL
    with connection.execute_wrapper(meter.query):
        for plan in plans(launch):
            meter.on = args.warm <= plan.n < args.warm + args.hires
            client = Client(
                enforce_csrf_checks=True,
                HTTP_X_FORWARDED_FOR=f"10.0.{plan.n // 256}.{plan.n % 256 + 1}",
            )
            if plan.n >= args.warm + args.hires:
                meter.profile, meter.only = profile, args.only
            meter.show = args.show and plan.n == total - 1
            ends[walk(client, meter, spec, plan.n, plan.fails)] += 1
    print(
        f"crowd_cpu: {args.hires} hires measured after {args.warm} warm-up, quota {args.quota}, "
        f"2 training items; ends: {dict(ends)}; load average {loadavg()}"
    )
    print(f"  {'request':<13} {'n':>5} {'CPU ms':>8} {'+ PG ms':>8} {'queries':>8}")
    for kind in KINDS:
        n = meter.n[kind] or 1
        print(
            f"  {kind:<13} {meter.n[kind]:5d} {meter.cpu[kind] / n * 1000:8.1f} "
            f"{meter.db_ticks[kind] / TICK / n * 1000:8.1f} {meter.queries[kind] / n:8.1f}"
        )
    timed = {  # what crowd_launch times: join = Start; first page/next = next + item page
        "join": ["join"],
        "next": ["next", "item page"],
        "submit": ["submit"],
    }
    for name, parts in timed.items():
        ms = sum(
            (meter.cpu[k] + meter.db_ticks[k] / TICK) / (meter.n[k] or 1) * 1000 for k in parts
        )
        print(f"  timed {name}: {ms:.1f} ms CPU (this process + PostgreSQL)")
    if args.profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
        pstats.Stats(profile).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
