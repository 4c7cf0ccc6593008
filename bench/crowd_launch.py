"""A crowd study's launch: strangers join through the invite link, train, work, leave.

    .venv/bin/python bench/crowd_launch.py                      # 1,000 workers over 5 minutes
    .venv/bin/python bench/crowd_launch.py --workers 100 --minutes 1
    .venv/bin/python bench/crowd_launch.py --saturate           # then arrivals at once: the ceiling
    .venv/bin/python bench/crowd_launch.py --target potato      # the same launch against Potato
    .venv/bin/python bench/crowd_launch.py --smoke              # 12 workers, seconds (CI)

Our platform runs as `make serve` runs it (gunicorn --preload, two workers per core) with
the task worker (`manage.py db_worker`) on a throwaway PostgreSQL (scripts/ensure-postgres)
whose data are thrown away afterwards. One invite link (Prolific's PROLIFIC_PID), two
training items (reference: not hard), a quota of real comparison items per person, the
items planned for an overlap of 3. The server trusts X-Forwarded-For (LOGIN_IP_HEADER, as
behind the lab's proxy) and every simulated worker sends its own address.

Workers arrive as a Poisson process (seeded). Each opens the link, presses Start (join),
acknowledges the instructions, opens its first item (first page), then answers: a share
answers the training wrong and is screened out (the invite's screened-out code), the
others do their quota (next = /next/ and the item page it redirects to; submit = the
answer's POST), with think times drawn from a log-normal (the demo holds no recorded
active times: median --think-median s, sigma 0.6). Some abandon midway, some leave for a
while and come back. Then the database is checked: no answer lost or doubled, no item
over its planned overlap (nor one person twice on it), every hire the platform counts as
completed saw its completion code, every screened-out hire's open items back in the pool.

`--target potato` drives Potato 2.x (potato-annotation, in its own venv built by
scripts/potato-venv) with the same seed, arrivals and answers: its Prolific login
(?PROLIFIC_PID=...), its instances one after the other (next), its annotation POST
(submit); Potato has no training gate, so nobody is screened out there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from annotate_load import (
    BIN,
    ROOT,
    django_env,
    free_port,
    gunicorn,
    loadavg,
    pct,
    start_postgres,
    stop,
    wait_ready,
)
from measure import yardstick_line

if str(ROOT) not in sys.path:  # this clone's code, whatever the venv's editable install points at
    sys.path.insert(0, str(ROOT))

ENDPOINTS = ("join", "first page", "next", "submit")
JUSTIFICATION = "List 1 covers every fact of the text."
PLANNED_OVERLAP = 3


@dataclass
class Plan:
    """One simulated worker: when it arrives and what it will do (drawn from the seed)."""

    n: int
    arrive: float
    fails: bool
    abandon_after: int | None  # submissions, then gone for good
    away_after: int | None  # submissions, then away for `away_seconds`, then back
    away_seconds: float
    thinks: list[float]


def plans(args: argparse.Namespace) -> list[Plan]:
    rng = random.Random(args.seed)
    t, out = 0.0, []
    rate = args.workers / (args.minutes * 60) if args.minutes else 0.0
    for n in range(args.workers):
        t = t + rng.expovariate(rate) if rate else 0.0
        steps = args.training + args.quota
        out.append(
            Plan(
                n=n,
                arrive=t,
                fails=rng.random() < args.fail_share,
                abandon_after=rng.randrange(1, steps)
                if rng.random() < args.abandon_share
                else None,
                away_after=rng.randrange(1, steps) if rng.random() < args.return_share else None,
                away_seconds=rng.uniform(10, 40) * args.think_scale,
                thinks=[
                    rng.lognormvariate(math.log(args.think_median), 0.6) * args.think_scale
                    for _ in range(steps + 2)
                ],
            )
        )
    return out


@dataclass
class Result:
    target: str
    workers: int
    seconds: float = 0.0
    ms: dict[str, list[float]] = field(default_factory=lambda: {e: [] for e in ENDPOINTS})
    statuses: dict[str, int] = field(default_factory=dict)  # "endpoint status" -> count
    errors: dict[str, int] = field(default_factory=dict)
    confirmed: list[list[Any]] = field(default_factory=list)  # [worker id, assignment, hard]
    completed: dict[str, str] = field(default_factory=dict)  # worker id -> code seen
    screened: dict[str, str] = field(default_factory=dict)
    abandoned: int = 0
    returned: int = 0
    samples: list[dict[str, int]] = field(default_factory=list)
    driver_cpu: float = 0.0  # the load generator's own CPU seconds (it shares the cores)


class Failed(Exception):
    pass


class Done(Exception):
    pass


def _count(res: Result, key: str) -> None:
    res.statuses[key] = res.statuses.get(key, 0) + 1


async def _timed(
    res: Result, what: str, call: Any, *ok: int, record: bool = True
) -> httpx.Response:
    t = time.monotonic()
    r = await call
    if record:
        res.ms[what].append((time.monotonic() - t) * 1000)
    _count(res, f"{what} {r.status_code}")
    if r.status_code not in ok:
        raise Failed(f"{what}: HTTP {r.status_code}")
    return r


# --------------------------------------------------------------------------- our platform


class OurWorker:
    def __init__(self, client: httpx.AsyncClient, spec: dict[str, Any], plan: Plan) -> None:
        self.c, self.spec, self.plan = client, spec, plan
        self.pid = f"pw{spec['seed']}x{plan.n:05d}"
        self.headers: dict[str, str] = {}

    async def join(self, res: Result) -> None:
        url = f"/join/{self.spec['key']}/"
        params = {"PROLIFIC_PID": self.pid, "STUDY_ID": "launch", "SESSION_ID": f"s{self.plan.n}"}
        await _timed(res, "join", self.c.get(url, params=params), 200, record=False)
        csrf = self.c.cookies.get("csrftoken", "")
        data = {**params, "csrfmiddlewaretoken": csrf}
        await _timed(res, "join", self.c.post(url, data=data, headers={"X-CSRFToken": csrf}), 200)
        self.headers = {"X-CSRFToken": self.c.cookies.get("csrftoken", csrf), "HX-Request": "true"}
        project = self.spec["project"]
        r = await self.c.post(f"/p/{project}/instructions/", headers=self.headers)
        _count(res, f"instructions {r.status_code}")

    async def next(self, res: Result, what: str) -> int:
        """The next item (its page opened), or Done with the code the page shows."""
        t = time.monotonic()
        r = await self.c.get(f"/p/{self.spec['project']}/next/")
        location = r.headers.get("location", "")
        found = re.match(r"/a/(\d+)/$", location)
        if r.status_code == 302 and found:
            page = await self.c.get(location)
            res.ms[what].append((time.monotonic() - t) * 1000)
            _count(res, f"{what} {page.status_code}")
            if page.status_code != 200:
                raise Failed(f"{what}: item page HTTP {page.status_code}")
            return int(found.group(1))
        res.ms[what].append((time.monotonic() - t) * 1000)
        _count(res, f"{what} {r.status_code}")
        if r.status_code != 200:
            raise Failed(f"{what}: HTTP {r.status_code} to {location or '-'}")
        for kind, pattern in (("completed", "completion-code"), ("screened", "screened-out-code")):
            code = re.search(rf'id="{pattern}">([^<]+)<', r.text)
            if code:
                raise Done(kind, code.group(1))
        raise Done("other", "")

    async def submit(self, res: Result, assignment: int) -> None:
        hard = "yes" if self.plan.fails else "no"
        data = {"action": "submit", "choice": "1", "hard": hard, "justification": JUSTIFICATION}
        r = await _timed(
            res, "submit", self.c.post(f"/a/{assignment}/", data=data, headers=self.headers), 200
        )
        if "HX-Redirect" not in r.headers:
            raise Failed("submit: not accepted (form errors)")
        res.confirmed.append([self.pid, assignment, hard])


async def _work(who: Any, plan: Plan, res: Result) -> None:
    try:
        await who.join(res)
        what, done = "first page", 0
        while True:
            try:
                assignment = await who.next(res, what)
            except Done as end:
                kind, code = end.args
                if kind == "completed":
                    res.completed[who.pid] = code
                elif kind == "screened":
                    res.screened[who.pid] = code
                return
            what = "next"
            await asyncio.sleep(plan.thinks[min(done, len(plan.thinks) - 1)])
            await who.submit(res, assignment)
            done += 1
            if plan.abandon_after is not None and done >= plan.abandon_after:
                res.abandoned += 1
                return
            if plan.away_after is not None and done == plan.away_after:
                res.returned += 1
                await asyncio.sleep(plan.away_seconds)
    except (Failed, httpx.HTTPError) as e:
        key = str(e) if isinstance(e, Failed) else type(e).__name__
        res.errors[key] = res.errors.get(key, 0) + 1


async def _arrive(spec: dict[str, Any], plan: Plan, res: Result, t0: float) -> None:
    """One worker: its own client (cookies, one connection, its own address), made when
    it arrives. Plain HTTP to this machine: verify=False builds no certificate store
    (measured: 22.6 ms of CPU per client with it, 1.1 ms without; made up front for
    1,000 workers, that was 20 s of the same two cores at the launch's start)."""
    await asyncio.sleep(max(0.0, t0 + plan.arrive - time.monotonic()))
    args = spec["args"]
    address = f"10.{plan.n // 65536 % 256}.{plan.n // 256 % 256}.{plan.n % 256 + 1}"
    async with httpx.AsyncClient(
        base_url=spec["url"],
        timeout=args["timeout"],
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        headers={"X-Forwarded-For": address},
        verify=False,
    ) as c:
        kind = PotatoWorker if spec["target"] == "potato" else OurWorker
        await _work(kind(c, spec, plan), plan, res)


async def _drive(spec: dict[str, Any]) -> Result:
    args = argparse.Namespace(**spec["args"])
    res = Result(target=spec["target"], workers=args.workers)
    cpu, t0 = time.process_time(), time.monotonic()
    await asyncio.gather(*(_arrive(spec, plan, res, t0) for plan in plans(args)))
    res.seconds = time.monotonic() - t0
    res.driver_cpu = time.process_time() - cpu
    return res


def setup_project(args: argparse.Namespace) -> dict[str, Any]:
    """Inside Django: the project, its researcher, items for the planned overlap, the
    training items and the invite."""
    from django.contrib.auth.models import User

    from annotation import hiring
    from annotation.hiring import HiringPolicy, Invite
    from annotation.ingest import import_file
    from annotation.kinds.comparison import comparison_items
    from annotation.models import Membership, Project, System

    project = Project.objects.create(name="LAUNCH", instructions="Compare the two lists.")
    owner, _ = User.objects.get_or_create(username="launch-researcher")
    project.add_member(owner, Membership.RESEARCHER)
    n_items = args.training + math.ceil(args.workers * args.quota / PLANNED_OVERLAP) + 1
    lines = "\n".join(
        json.dumps(
            {
                "id": f"launch-{i}",
                "question": f"Who was person {i}?",
                "domain": "Biography",
                "response": f"Person {i} was born in 1900. Person {i} was a painter.",
                "claim_lists": {
                    "extractor-a": [f"Person {i} was born in 1900.", f"Person {i} was a painter."],
                    "extractor-b": [f"Person {i} was a painter born in 1900."],
                },
            }
        )
        for i in range(n_items)
    )
    import_file(project=project, text=lines, file="launch.jsonl")
    a, b = (System.objects.get(project=project, name=n) for n in ("extractor-a", "extractor-b"))
    items = comparison_items(project=project, system_a=a, system_b=b)
    for item in items[: args.training]:
        hiring.mark(item, hiring.TRAINING, {"item.hard": "no"}, "Not hard: list 1 has it all.")
    HiringPolicy.of(project)
    HiringPolicy.objects.filter(project=project).update(pass_mark=0.5)
    invite = Invite.objects.create(
        project=project,
        created_by=owner,
        extra_params=["STUDY_ID", "SESSION_ID"],
        items_per_person=args.quota,
        completion_code="LAUNCH-OK",
        screened_out_code="LAUNCH-OUT",
    )
    return {"project": project.pk, "key": invite.key, "seed": args.seed}


def check(res: Result, project_id: int) -> tuple[bool, list[str]]:
    """The database after the run: what the issue asks never to happen."""
    from django.db.models import Count, Q

    from annotation import hiring
    from annotation.hiring import Hire
    from annotation.models import Answer, Assignment, Item

    lines, ok = [], True
    ids = [c[1] for c in res.confirmed]
    rows = {
        a["pk"]: a
        for a in Assignment.objects.filter(pk__in=ids).values("pk", "status", "annotator_id")
    }
    owners = dict(
        Hire.objects.filter(invite__project_id=project_id).values_list(
            "worker_id", "membership__user_id"
        )
    )
    hard = dict(
        Answer.objects.filter(assignment_id__in=ids, field="hard").values_list(
            "assignment_id", "value"
        )
    )
    lost = [
        c
        for c in res.confirmed
        if rows.get(c[1], {}).get("status") != Assignment.SUBMITTED
        or rows[c[1]]["annotator_id"] != owners.get(c[0])
        or hard.get(c[1]) != c[2]
    ]
    doubled = len(ids) - len(set(ids))
    twice = (
        Answer.objects.filter(assignment_id__in=ids)
        .values("assignment_id", "unit", "field")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count()
    )
    lines.append(
        f"answers: {len(ids)} confirmed, {len(lost)} lost or wrong, {doubled} confirmed twice, "
        f"{twice} stored twice"
    )
    ok &= not lost and not doubled and not twice
    regular = Item.objects.filter(project_id=project_id, quality__isnull=True)
    counts = regular.annotate(n=Count("assignments")).values_list("n", flat=True)
    over = sum(1 for n in counts if n > PLANNED_OVERLAP)
    same = (
        Assignment.objects.filter(item__project_id=project_id)
        .values("item_id", "annotator_id")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count()
    )
    lines.append(
        f"items: {len(counts)} study items, most assigned {max(counts, default=0)} "
        f"(planned {PLANNED_OVERLAP}), {over} over, {same} given twice to one person"
    )
    ok &= not over and not same
    hires = list(Hire.objects.filter(invite__project_id=project_id).select_related("membership"))
    done = [h for h in hires if h.completed_at is not None]
    no_code = [h.worker_id for h in done if res.completed.get(h.worker_id) != "LAUNCH-OK"]
    out = [h for h in hires if hiring.screened_out(h)]
    still_open = (
        Assignment.objects.filter(annotator_id__in=[h.membership.user_id for h in out])
        .filter(Q(status=Assignment.PENDING) | Q(status=Assignment.DRAFT))
        .count()
    )
    wrong_out = [
        h.worker_id
        for h in out
        if h.worker_id in res.screened and res.screened[h.worker_id] != "LAUNCH-OUT"
    ]
    lines.append(
        f"hires: {len(hires)} joined, {len(done)} completed ({len(no_code)} without their "
        f"code), {len(out)} screened out ({still_open} open items kept, {len(wrong_out)} with "
        f"a wrong code), {res.abandoned} abandoned, {res.returned} came back"
    )
    ok &= not no_code and not still_open and not wrong_out
    return ok, lines


# --------------------------------------------------------------------------- database watch


def watch_database(
    database_url: str, stop_event: threading.Event, into: list[dict[str, int]]
) -> None:
    """Every second: the server's connections (by state) and locks (held, waited for)."""
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        while not stop_event.wait(1.0):
            states = dict(
                conn.execute(
                    "SELECT coalesce(state, 'other'), count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() GROUP BY 1"
                ).fetchall()
            )
            held, waiting = conn.execute(
                "SELECT count(*) FILTER (WHERE granted), count(*) FILTER (WHERE NOT granted) "
                "FROM pg_locks"
            ).fetchone() or (0, 0)
            into.append(
                {
                    "connections": sum(states.values()),
                    "active": states.get("active", 0),
                    "idle in transaction": states.get("idle in transaction", 0),
                    "locks": held,
                    "lock waits": waiting,
                }
            )


# --------------------------------------------------------------------------- running


def runs_of(args: argparse.Namespace) -> list[tuple[str, argparse.Namespace]]:
    """The launch, then (--saturate) everyone at once with the next seed: the ceiling."""
    runs = [("launch", args)]
    if args.saturate:
        at_once = argparse.Namespace(**{**vars(args), "minutes": 0.0, "seed": args.seed + 1})
        runs.append(("saturating", at_once))
    return runs


def run_driver(spec: dict[str, Any], work: Path) -> Result:
    """The load from its own process (the servers must not share our GIL)."""
    path = work / f"spec-{spec['target']}.json"
    path.write_text(json.dumps(spec))
    out = subprocess.run(
        [sys.executable, __file__, "--drive", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        sys.exit(f"the load generator failed:\n{out.stderr[-3000:]}")
    return Result(**json.loads(out.stdout))


def report(res: Result, title: str) -> None:
    print(f"\n{title}: {res.workers} workers in {res.seconds:.0f} s (load average {loadavg()})")
    print(f"  {'endpoint':<11} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    for e in ENDPOINTS:
        v = res.ms[e]
        print(f"  {e:<11} {len(v):6d} {pct(v, 50):8.0f} {pct(v, 95):8.0f} {pct(v, 99):8.0f}")
    print("  statuses: " + ", ".join(f"{k}: {n}" for k, n in sorted(res.statuses.items())))
    fives = sum(n for k, n in res.statuses.items() if k.split()[-1].startswith("5"))
    print(
        f"  5xx: {fives}; errors: "
        + (", ".join(f"{n} x {k}" for k, n in res.errors.items()) or "none")
    )
    if res.samples:
        top = {k: max(s[k] for s in res.samples) for k in res.samples[0]}
        print("  database, most at once: " + ", ".join(f"{k} {v}" for k, v in top.items()))


def _tree(pid: int) -> list[int]:
    """The process and its descendants (from /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text().split()]
            except OSError:
                pass
    return out


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these processes and their descendants (living ones, and the
    children they waited for)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for root in pids:
        for p in _tree(root):
            try:
                fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / tick


def postmaster(database_url: str) -> int | None:
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT setting FROM pg_settings WHERE name = 'data_directory'"
        ).fetchone()
    try:
        return int((Path(row[0]) / "postmaster.pid").read_text().split()[0]) if row else None
    except (OSError, ValueError):
        return None


def cpu_line(res: Result, seconds: dict[str, float]) -> str:
    """The servers' CPU per timed request: what a 2-core machine's ceiling divides."""
    n = sum(len(v) for v in res.ms.values()) or 1
    seconds = {**seconds, "load generator": res.driver_cpu}
    parts = ", ".join(
        f"{k} {v:.1f} s ({v / n * 1000:.1f} ms per request)" for k, v in seconds.items()
    )
    return f"  server CPU over the run: {parts}; {n} timed requests"


def bench_ours(args: argparse.Namespace, work: Path, database_url: str) -> bool:
    env = django_env(work, database_url)
    env.update(
        LOGIN_IP_HEADER="HTTP_X_FORWARDED_FOR",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        TASKS_BACKEND="django_tasks_db.DatabaseBackend",
    )
    for name in ("DATABASE_URL", "SQLITE_PATH"):
        os.environ.pop(name, None)
    os.environ.update(env)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)
    call_command("collectstatic", "--noinput", verbosity=0)
    spec = setup_project(args)
    print(
        f"join limits: {settings.JOIN_RATE_PER_INVITE} per invite, "
        f"{settings.JOIN_RATE_PER_ADDRESS} per address (X-Forwarded-For trusted)"
    )
    connections.close_all()
    port = free_port()
    log = work / "gunicorn.log"
    server = gunicorn(
        BIN, ["annotation.wsgi", "--preload"], port=port, workers=args.web_workers, env=env,
        cwd=ROOT, log=log,
    )  # fmt: skip
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "db_worker"],
        cwd=ROOT,
        env=env,
        stdout=(work / "worker.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    samples: list[dict[str, int]] = []
    done = threading.Event()
    watcher = threading.Thread(target=watch_database, args=(database_url, done, samples))
    ok = True
    try:
        wait_ready(f"{url}/login/", server, log)
        watcher.start()
        for title, a in runs_of(args):
            if title == "saturating":
                spec = setup_project(a)
                connections.close_all()
            samples.clear()
            pg_pid = postmaster(database_url)
            roots = {"gunicorn": [server.pid], "task worker": [worker.pid]}
            roots["PostgreSQL"] = [pg_pid] if pg_pid else []
            before = {k: cpu_seconds(v) for k, v in roots.items()}
            res = run_driver({**spec, "url": url, "target": "ours", "args": vars(a)}, work)
            used = {k: cpu_seconds(v) - before[k] for k, v in roots.items()}
            res.samples = list(samples)
            report(res, f"ours, {title}")
            print(cpu_line(res, used))
            good, lines = check(res, spec["project"])
            connections.close_all()
            for line in lines:
                print("  " + line)
            print(f"  consistent: {'yes' if good else 'NO'}")
            fives = sum(n for k, n in res.statuses.items() if k.split()[-1].startswith("5"))
            if fives:
                print("  server log (end):\n" + log.read_text()[-3000:])
            ok &= good and not fives and not res.errors
    finally:
        done.set()
        if watcher.is_alive():
            watcher.join()
        stop(worker)
        stop(server)
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=1000)
    parser.add_argument("--minutes", type=float, default=5.0, help="arrivals spread over this")
    parser.add_argument("--quota", type=int, default=5, help="real items per worker")
    parser.add_argument("--training", type=int, default=2)
    parser.add_argument("--fail-share", type=float, default=0.15)
    parser.add_argument("--abandon-share", type=float, default=0.1)
    parser.add_argument("--return-share", type=float, default=0.1)
    parser.add_argument("--think-median", type=float, default=8.0, help="seconds per item")
    parser.add_argument("--think-scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--web-workers", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--saturate", action="store_true", help="then all arrive at once")
    parser.add_argument("--target", choices=["ours", "potato", "both"], default="ours")
    parser.add_argument("--smoke", action="store_true", help="12 workers in seconds")
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        spec = json.loads(Path(args.drive).read_text())
        print(json.dumps(asdict(asyncio.run(_drive(spec)))))
        return
    if args.smoke:
        args.workers, args.minutes, args.think_scale = 12, 0.1, 0.01
        args.fail_share, args.abandon_share, args.return_share = 0.25, 0.2, 0.2
        args.saturate = True
    print(yardstick_line())
    print(
        f"crowd_launch: {args.workers} workers over {args.minutes:g} min, quota {args.quota}, "
        f"{args.training} training items, seed {args.seed}, {args.web_workers} gunicorn workers"
    )
    work = Path(tempfile.mkdtemp(prefix="crowd-launch-"))
    pg: dict[str, str] = {}
    ok = True
    try:
        if args.target in ("ours", "both"):
            database_url, pg = start_postgres()
            ok &= bench_ours(args, work, database_url)
        if args.target in ("potato", "both"):
            ok &= bench_potato(args, work)
        print(yardstick_line())
    finally:
        if pg:
            subprocess.run(
                [str(ROOT / "scripts" / "ensure-postgres"), "stop"],
                env={**os.environ, **pg},
                check=False,
            )
        shutil.rmtree(work, ignore_errors=True)
    if not ok:
        sys.exit(1)


# --------------------------------------------------------------------------- Potato


POTATO_CONFIG = """annotation_task_name: LAUNCH
task_dir: {dir}
output_annotation_dir: {dir}/annotation_output
data_files: [data.jsonl]
item_properties: {{id_key: id, text_key: text}}
login: {{type: url_direct, url_argument: PROLIFIC_PID}}
require_password: false
assignment_strategy: least_annotated
max_annotations_per_user: {quota}
num_annotators_per_item: {overlap}
max_annotations_per_item: {overlap}
annotation_schemes:
  - annotation_type: radio
    name: choice
    description: Which claim list covers the text better?
    labels: ["1", "2"]
  - annotation_type: radio
    name: hard
    description: Was it hard to decide?
    labels: ["yes", "no"]
  - annotation_type: text
    name: justification
    description: Why?
"""


class PotatoWorker:
    """Potato's pages as its browser script drives them: the Prolific link logs in
    (url_direct), the annotation page names its instance, /updateinstance stores the
    labels (submit), POST /annotate next_instance moves on and the page is loaded again
    (next). Its quota is max_annotations_per_user; no training gate."""

    INSTANCE = re.compile(r'id="instance_id"[^>]*value="([^"]*)"')

    def __init__(self, client: httpx.AsyncClient, spec: dict[str, Any], plan: Plan) -> None:
        self.c, self.spec, self.plan = client, spec, plan
        self.pid = f"pw{spec['seed']}x{plan.n:05d}"
        self.current: str | None = None
        self.started = False

    async def join(self, res: Result) -> None:
        params = {"PROLIFIC_PID": self.pid, "STUDY_ID": "launch", "SESSION_ID": f"s{self.plan.n}"}
        await _timed(res, "join", self.c.get("/", params=params), 302)

    async def next(self, res: Result, what: str) -> str:
        t = time.monotonic()
        if self.started:
            r = await self.c.post(
                "/annotate",
                json={"action": "next_instance", "instance_id": self.current},
                headers={"X-Potato-Navigation": "1"},
            )
            if r.status_code not in (200, 302):
                _count(res, f"{what} {r.status_code}")
                raise Failed(f"{what}: HTTP {r.status_code}")
        self.started = True
        page = await self.c.get("/annotate", follow_redirects=True)
        res.ms[what].append((time.monotonic() - t) * 1000)
        _count(res, f"{what} {page.status_code}")
        if page.status_code != 200:
            raise Failed(f"{what}: HTTP {page.status_code}")
        found = self.INSTANCE.search(page.text)
        if not found or not found.group(1):
            raise Done("completed", "")
        self.current = found.group(1)
        return self.current

    async def submit(self, res: Result, instance: str) -> None:
        hard = "yes" if self.plan.fails else "no"
        body = {
            "instance_id": instance,
            "annotations": {"choice:1": "true", f"hard:{hard}": "true",
                            "justification:text_box": JUSTIFICATION},
        }  # fmt: skip
        r = await _timed(res, "submit", self.c.post("/updateinstance", json=body), 200)
        if r.json().get("status") == "error":
            raise Failed(f"submit: refused ({r.json().get('message', '')[:80]})")
        res.confirmed.append([self.pid, instance, hard])


def potato_check(res: Result, out: Path, overlap: int) -> tuple[bool, list[str]]:
    """Potato's stored state after the run (each user's user_state.json)."""
    stored: dict[tuple[str, str], str] = {}
    per_item: dict[str, int] = {}
    for state in out.glob("*/user_state.json"):
        data = json.loads(state.read_text())
        for instance, labels in data.get("instance_id_to_label_to_value", {}).items():
            per_item[instance] = per_item.get(instance, 0) + 1
            for key, value in labels:
                if key["schema"] == "hard" and value == "true":
                    stored[(data["user_id"], instance)] = key["name"]
    lost = [c for c in res.confirmed if stored.get((c[0], c[1])) != c[2]]
    ids = [(c[0], c[1]) for c in res.confirmed]
    over = sum(1 for n in per_item.values() if n > overlap)
    lines = [
        f"answers: {len(ids)} confirmed, {len(lost)} lost or wrong, "
        f"{len(ids) - len(set(ids))} confirmed twice",
        f"items: {len(per_item)} annotated, most annotated {max(per_item.values(), default=0)} "
        f"(planned {overlap}), {over} over",
        f"workers: {len(res.completed)} reached the end, {res.abandoned} abandoned, "
        f"{res.returned} came back (no training gate: nobody screened out)",
    ]
    return not lost and not over and len(ids) == len(set(ids)), lines


def bench_potato(args: argparse.Namespace, work: Path) -> bool:
    built = subprocess.run(
        [str(ROOT / "scripts" / "potato-venv")], capture_output=True, text=True, check=False
    )
    venv = Path(built.stdout.strip().splitlines()[-1]) if built.stdout.strip() else None
    if venv is None or not (venv / "bin" / "gunicorn").exists():
        print(f"Potato is not available: {built.stderr.strip()[-500:]}")
        return False
    folder = work / "potato"
    folder.mkdir()
    runs = 2 if args.saturate else 1  # one server for both runs: items for both
    n_items = math.ceil(runs * args.workers * args.quota / PLANNED_OVERLAP) + 1
    with (folder / "data.jsonl").open("w") as f:
        for i in range(n_items):
            text = f"Person {i} was born in 1900. Person {i} was a painter."
            f.write(json.dumps({"id": f"launch-{i}", "text": text}) + "\n")
    config = folder / "config.yaml"
    config.write_text(POTATO_CONFIG.format(dir=folder, quota=args.quota, overlap=PLANNED_OVERLAP))
    port = free_port()
    log = folder / "server.log"
    # Potato keeps its state in memory, per process: one gunicorn worker (its WSGI
    # factory), threads for concurrency.
    server = gunicorn(
        venv / "bin",
        [f"potato.flask_server:create_app('{config}')", "--threads", "8"],
        port=port, workers=1, env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=folder, log=log,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    ok = True
    try:
        wait_ready(f"{url}/health", server, log)
        for title, a in runs_of(args):
            spec = {"seed": a.seed, "url": url, "target": "potato", "args": vars(a)}
            before = cpu_seconds([server.pid])
            res = run_driver(spec, work)
            report(res, f"potato, {title}")
            print(cpu_line(res, {"gunicorn (Potato)": cpu_seconds([server.pid]) - before}))
            fives = sum(n for k, n in res.statuses.items() if k.split()[-1].startswith("5"))
            ok &= not fives and not res.errors
    finally:
        stop(server)
    good, lines = potato_check(res, folder / "annotation_output", PLANNED_OVERLAP)
    for line in lines:
        print("  " + line)
    print(f"  consistent: {'yes' if good else 'NO'} (Potato's saved state after the runs)")
    return ok and good


if __name__ == "__main__":
    main()
