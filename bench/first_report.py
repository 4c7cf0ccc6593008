"""The demo report's first request after a server start (issue 43: under 1 s, median of 5
restarts, on a quiet machine).

    .venv/bin/python bench/first_report.py               # 5 restarts, the cache emptied each time
    .venv/bin/python bench/first_report.py --cache kept  # the report cached by an earlier server
    .venv/bin/python bench/first_report.py --restarts 3 --workers 4

It builds the demo (`load_demo`) in a throwaway SQLite database once, then, each time:
starts the server as `make serve` does (migrate, collectstatic, `gunicorn annotation.wsgi
--preload --workers WEB_CONCURRENCY`, SQLITE_TIMEOUT=5), waits until every worker has
booted (gunicorn says so; no request is sent before the measured one), requests the demo
report once as a browser opens it (the researcher's session, made in the database, so the
report is the server's first request; Sec-Fetch-Mode: navigate), and stops the server.
With `--cache empty` (the default) the cache table is emptied before each start (the data
changed since the report was last computed: the page shows progress, then fills in); with
`--cache kept` the cache stays as `load_demo` (which computes the demo's report) or an
earlier server left it.

Printed: each request's time (from sending to the last byte) and status, the median,
what the first response held (the finished report or the progress page), the load
average, and a CPU yardstick (a fixed pure-Python loop, best of 3) to compare machines
and loads.
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import yardstick_line

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
GUNICORN = str(Path(PYTHON).with_name("gunicorn"))

SESSION = """
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from annotation.management.commands.load_demo import DEMO_PROJECT, RESEARCHER
from annotation.models import Project
user = User.objects.get(username=RESEARCHER[0])
s = SessionStore()
s[SESSION_KEY] = str(user.pk)
s[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
s[HASH_SESSION_KEY] = user.get_session_auth_hash()
s.create()
print(s.session_key, Project.objects.get(name=DEMO_PROJECT).pk)
"""


def manage(env: dict[str, str], *args: str) -> str:
    out = subprocess.run(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    return out.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(env: dict[str, str], port: int, workers: int) -> subprocess.Popen[str]:
    """`make serve`'s commands; returns once every worker has booted."""
    manage(env, "migrate", "--noinput")
    manage(env, "collectstatic", "--noinput", "-v", "0")
    server = subprocess.Popen(
        [GUNICORN, "annotation.wsgi", "--preload", "--bind", f"127.0.0.1:{port}"]
        + ["--workers", str(workers), "--access-logfile", "-"],
        cwd=ROOT,
        env={**env, "SQLITE_TIMEOUT": "5"},
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    booted = 0
    assert server.stderr is not None
    for line in server.stderr:  # a state, not a time: gunicorn's own log lines
        booted += "Booting worker" in line
        if booted == workers:
            return server
    raise SystemExit(f"the server stopped before its workers booted (exit {server.wait()})")


def request(port: int, path: str, session: str) -> tuple[float, int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    start = time.perf_counter()
    # as a browser opens a page (Sec-Fetch-Mode: the report page shows progress to one)
    headers = {"Cookie": f"sessionid={session}", "Sec-Fetch-Mode": "navigate"}
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    body = response.read().decode("utf-8", "replace")
    took = time.perf_counter() - start
    conn.close()
    return took, response.status, body


def held(body: str) -> str:
    if 'id="report-progress"' in body:
        return "progress page"
    sections = len(re.findall(r"<section id=\"[^\"]*\" class=\"report-section", body))
    return f"report ({sections} sections)" if sections else "report"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restarts", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--cache", choices=["empty", "kept"], default="empty")
    opts = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the server on the way out
    tmp = Path(tempfile.mkdtemp(prefix="first-report-"))
    env = {
        **os.environ,
        "SQLITE_PATH": str(tmp / "db.sqlite3"),
        "STATIC_ROOT": str(tmp / "static"),
        "DJANGO_SETTINGS_MODULE": "annotation.settings",
    }
    env.pop("DATABASE_URL", None)
    try:
        manage(env, "migrate", "--noinput")
        manage(env, "load_demo")
        session, project = manage(env, "shell", "-c", SESSION).split()[-2:]
        path = f"/p/{project}/report/"
        times = []
        for n in range(1, opts.restarts + 1):
            if opts.cache == "empty":
                manage(env, "shell", "-c", "from django.core.cache import cache; cache.clear()")
            port = free_port()
            server = start(env, port, opts.workers)
            try:
                took, status, body = request(port, path, session)
            finally:
                server.terminate()
                server.wait()
            if status != 200:
                raise SystemExit(f"restart {n}: status {status}, not the report")
            times.append(took)
            print(f"restart {n}: {took:.2f} s, status {status}, {held(body)}", flush=True)
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"median {statistics.median(times):.2f} s over {len(times)} restarts "
            f"(cache {opts.cache}, {opts.workers} workers); load average {load}; "
            f"{yardstick_line()}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
