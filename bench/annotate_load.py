"""Load benchmark: annotators against the production server, side by side with Label Studio.

    .venv/bin/python bench/annotate_load.py                        # SQLite
    .venv/bin/python bench/annotate_load.py --database postgres    # a throwaway PostgreSQL
    .venv/bin/python bench/annotate_load.py --smoke                # 3 annotators, seconds, no LS

A fresh project in a temporary directory (your database is never touched): 50 annotator
accounts, each with a queue of comparison items. The server is the one `make serve` runs
(gunicorn --preload, --web-workers workers, default two per core, WhiteNoise). A separate
process drives the load:

- paced: every annotator starts one next -> draft -> submit cycle every 5 s;
- saturating: every annotator runs cycles back to back.

Both through the pages (a session made at set-up, as for a browser that logged in
before; the CSRF cookie and header and the htmx headers the page sends) and through the
API (one token per annotator). "next" is the queue lookup plus the item
(pages: /next/ -> 302 -> the item page; API: the queue's first pending entry, then the
item), "submit" the final POST. Afterwards every confirmed submission is checked in the
database: stored exactly once, with the value sent.

Then the same paced and saturating loads against Label Studio (the server built by
scripts/labelstudio-venv, under gunicorn with as many workers, on its SQLite database):
next task (GET /api/projects/<id>/next), create annotation (POST
/api/tasks/<id>/annotations/), one Label Studio user per annotator. The ratios compare
the two. The machine's load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from measure import yardstick_line

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PASSWORD = "load-test-password"
JUSTIFICATION = "List 1 covers every fact of the text."
READY_SECONDS = 1200  # a guard against a server that never comes up (Label Studio's first
# start migrates its database: many minutes on a busy 2-core machine)


# --------------------------------------------------------------------------- driver side


@dataclass
class Result:
    target: str
    load: str
    annotators: int
    seconds: float = 0.0
    cycles: int = 0
    finished_queues: int = 0
    next_ms: list[float] = field(default_factory=list)
    submit_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    confirmed: list[list[Any]] = field(default_factory=list)  # [annotator, assignment, choice]
    load_average: str = ""


class QueueFinished(Exception):
    pass


class Failed(Exception):
    pass


def _check(r: httpx.Response, *ok: int) -> httpx.Response:
    if r.status_code not in ok:
        raise Failed(f"HTTP {r.status_code} {r.request.method} {_shape(r.request.url.path)}")
    return r


def _shape(path: str) -> str:
    return re.sub(r"/\d+", "/<id>", path)


class PageAnnotator:
    """What the browser sends: session cookie, CSRF token header, htmx headers."""

    def __init__(self, client: httpx.AsyncClient, spec: dict[str, Any], n: int) -> None:
        self.client, self.spec, self.n = client, spec, n
        self.username = spec["users"][n]
        self.headers: dict[str, str] = {}

    async def login(self) -> None:
        # A session made at set-up (Django's force_login), as for a browser that logged in
        # earlier: 50 password hashes at once would measure PBKDF2, not the platform.
        self.client.cookies.set(self.spec["session_cookie"], self.spec["sessions"][self.n])
        _check(await self.client.get(f"/p/{self.spec['project']}/queue/"), 200)
        csrf = self.client.cookies[self.spec["csrf_cookie"]]
        self.headers = {"X-CSRFToken": csrf, "HX-Request": "true"}

    async def next(self) -> int:
        r = _check(await self.client.get(f"/p/{self.spec['project']}/next/"), 302)
        found = re.match(r"/a/(\d+)/$", r.headers["location"])
        if r.headers["location"] == f"/p/{self.spec['project']}/queue/":
            raise QueueFinished
        if not found:
            raise Failed(f"next redirects to {_shape(r.headers['location'])}")
        _check(await self.client.get(r.headers["location"]), 200)
        return int(found.group(1))

    async def draft(self, assignment: int, choice: str) -> None:
        _check(
            await self.client.post(
                f"/a/{assignment}/",
                headers=self.headers,
                data={"action": "draft", "choice": choice},
            ),
            200,
        )

    async def submit(self, assignment: int, choice: str) -> None:
        r = _check(
            await self.client.post(
                f"/a/{assignment}/",
                headers=self.headers,
                data={
                    "action": "submit",
                    "choice": choice,
                    "hard": "no",
                    "justification": JUSTIFICATION,
                },
            ),
            200,
        )
        if "HX-Redirect" not in r.headers:
            raise Failed("submit not accepted (form errors)")


def _answers(choice: str, *, full: bool = True) -> dict[str, Any]:
    rows = [{"unit": "item", "field": "choice", "value": choice}]
    if full:
        rows += [
            {"unit": "item", "field": "hard", "value": "no"},
            {"unit": "item", "field": "justification", "value": JUSTIFICATION},
        ]
    return {"answers": rows}


class TokenAnnotator:
    """A script's client: one API token per annotator."""

    def __init__(self, client: httpx.AsyncClient, spec: dict[str, Any], n: int) -> None:
        self.client, self.spec = client, spec
        self.username = spec["users"][n]
        client.headers["Authorization"] = f"Token {spec['tokens'][n]}"


class ApiAnnotator(TokenAnnotator):
    async def login(self) -> None:
        _check(await self.client.get("/api/assignments/", params={"page_size": 1}), 200)

    async def next(self) -> int:
        r = _check(
            await self.client.get(
                "/api/assignments/",
                params={"project": self.spec["project"], "status": "pending", "page_size": 1},
            ),
            200,
        )
        rows = r.json()["results"]
        if not rows:
            raise QueueFinished
        _check(await self.client.get(f"/api/assignments/{rows[0]['id']}/"), 200)
        return int(rows[0]["id"])

    async def draft(self, assignment: int, choice: str) -> None:
        _check(
            await self.client.post(
                f"/api/assignments/{assignment}/draft/", json=_answers(choice, full=False)
            ),
            200,
        )

    async def submit(self, assignment: int, choice: str) -> None:
        _check(
            await self.client.post(f"/api/assignments/{assignment}/submit/", json=_answers(choice)),
            200,
        )


class LabelStudioAnnotator(TokenAnnotator):
    """Label Studio's API: the next task of the labelling stream, then an annotation."""

    async def login(self) -> None:
        _check(await self.client.get(f"/api/projects/{self.spec['project']}/"), 200)

    async def next(self) -> int:
        r = await self.client.get(f"/api/projects/{self.spec['project']}/next")
        if r.status_code == 404:
            raise QueueFinished
        return int(_check(r, 200).json()["id"])

    async def draft(self, assignment: int, choice: str) -> None:
        pass  # the same shape as the measurement: next task, create annotation

    async def submit(self, assignment: int, choice: str) -> None:
        result = [
            {
                "from_name": "choice",
                "to_name": "text",
                "type": "choices",
                "value": {"choices": [choice]},
            }
        ]
        _check(
            await self.client.post(
                f"/api/tasks/{assignment}/annotations/", json={"result": result}
            ),
            201,
        )


KINDS = {"pages": PageAnnotator, "api": ApiAnnotator, "labelstudio": LabelStudioAnnotator}


async def _login(n: int, spec: dict[str, Any], client: httpx.AsyncClient, res: Result) -> Any:
    who = KINDS[spec["kind"]](client, spec, n)
    try:
        await who.login()
    except (Failed, httpx.HTTPError) as e:
        key = f"login: {e if isinstance(e, Failed) else type(e).__name__}"
        res.errors[key] = res.errors.get(key, 0) + 1
        return None
    return who


async def _cycles(n: int, who: Any, spec: dict[str, Any], res: Result, t0: float) -> None:
    duration, pace = spec["duration"], spec["pace"]
    # Paced annotators start spread over the first period, then one cycle every `pace` s.
    start = t0 + (pace * n / spec["annotators"] if pace else 0.0)
    rng = random.Random(n)
    k = 0
    while True:
        due = start + k * pace
        now = time.monotonic()
        if max(due, now) >= t0 + duration:
            return
        if due > now:
            await asyncio.sleep(due - now)
        k += 1
        choice = rng.choice("12")
        try:
            t = time.monotonic()
            assignment = await who.next()
            res.next_ms.append((time.monotonic() - t) * 1000)
            await who.draft(assignment, choice)
            t = time.monotonic()
            await who.submit(assignment, choice)
            res.submit_ms.append((time.monotonic() - t) * 1000)
            res.confirmed.append([who.username, assignment, choice])
            res.cycles += 1
        except QueueFinished:
            res.finished_queues += 1
            return
        except (Failed, httpx.HTTPError) as e:
            key = str(e) if isinstance(e, Failed) else type(e).__name__
            res.errors[key] = res.errors.get(key, 0) + 1
            await asyncio.sleep(1)  # what a person does after an error page


async def _drive(spec: dict[str, Any]) -> Result:
    """Every annotator logs in first (not timed; it also warms up every server worker),
    then the load runs for its duration."""
    res = Result(target=spec["target"], load=spec["load"], annotators=spec["annotators"])
    clients = [
        httpx.AsyncClient(base_url=spec["url"], timeout=spec["timeout"])
        for _ in range(spec["annotators"])
    ]
    try:
        who = await asyncio.gather(*(_login(n, spec, c, res) for n, c in enumerate(clients)))
        t0 = time.monotonic()
        await asyncio.gather(*(_cycles(n, w, spec, res, t0) for n, w in enumerate(who) if w))
        res.seconds = time.monotonic() - t0
    finally:
        for c in clients:
            await c.aclose()
    return res


# --------------------------------------------------------------------------- figures


def pct(values: list[float], p: int) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


def row(r: Result) -> str:
    errors = sum(r.errors.values())
    return (
        f"{r.target:<12} {r.load:<10} {pct(r.next_ms, 50):7.0f} {pct(r.next_ms, 95):7.0f} "
        f"{pct(r.next_ms, 99):7.0f}   {pct(r.submit_ms, 50):7.0f} {pct(r.submit_ms, 95):7.0f} "
        f"{pct(r.submit_ms, 99):7.0f}   {r.cycles / r.seconds:7.1f} {r.cycles:6d} {errors:6d}"
        f"   {r.load_average}"
    )


HEADER = (
    f"{'target':<12} {'load':<10} {'next p50':>7} {'p95':>7} {'p99':>7}   "
    f"{'submit p50':>7} {'p95':>7} {'p99':>7}   {'cycles/s':>7} {'cycles':>6} {'errors':>6}"
    "   load average (1, 5, 15 min)"
)


def loadavg() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


# --------------------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while True:
        if proc.poll() is not None:
            sys.exit(f"the server exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url, timeout=5).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"the server at {url} did not come up in {READY_SECONDS}s")
        time.sleep(0.5)


def gunicorn(
    bin_dir: Path,
    app: list[str],
    *,
    port: int,
    workers: int,
    env: dict[str, str],
    cwd: Path,
    log: Path,
) -> subprocess.Popen[bytes]:
    # No control socket: its default path in ~/.gunicorn is shared by every instance.
    command = [
        str(bin_dir / "gunicorn"),
        *app,
        "--no-control-socket",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
        "--timeout",
        "120",
    ]
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_load(spec: dict[str, Any], work: Path) -> Result:
    """The load, from a separate process (the server's workers must not share our GIL)."""
    path = work / f"spec-{spec['target']}-{spec['load']}.json"
    path.write_text(json.dumps(spec))
    before = loadavg()
    out = subprocess.run(
        [sys.executable, __file__, "--drive", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        sys.exit(f"the load generator failed:\n{out.stderr[-3000:]}")
    res = Result(**json.loads(out.stdout))
    res.load_average = f"{before} -> {loadavg()}"
    print(row(res), flush=True)
    for what, n in sorted(res.errors.items()):
        print(f"    {n} x {what}")
    if res.finished_queues:
        print(f"    {res.finished_queues} annotators finished their queue")
    return res


# --------------------------------------------------------------------------- our platform


def django_env(work: Path, database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")}
    env.update(
        VAR_DIR=str(work / "var"),
        STATIC_ROOT=str(work / "static"),
        DEBUG="false",
        ALLOWED_HOSTS="127.0.0.1",
        LOG_LEVEL="ERROR",
        DJANGO_SETTINGS_MODULE="annotation.settings",
        SQLITE_TIMEOUT="5",  # as `make serve`
    )
    if database_url:
        env["DATABASE_URL"] = database_url
    else:
        env["SQLITE_PATH"] = str(work / "db.sqlite3")
    return env


def setup_project(annotators: int, per_annotator: int, overlap: int) -> dict[str, Any]:
    """Runs inside Django: the project, its annotators (instructions read) and items."""
    from django.conf import settings
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from annotation.ingest import import_file
    from annotation.kinds.comparison import comparison_items
    from annotation.models import Membership, Project, System, assign

    project = Project.objects.create(name="LOAD TEST", instructions="Compare the two lists.")
    password = make_password(PASSWORD)
    users = User.objects.bulk_create(
        User(username=f"load{n:03d}", password=password) for n in range(annotators)
    )
    for u in users:
        project.add_member(u, Membership.ANNOTATOR)
    docs = -(-annotators * per_annotator // overlap)
    lines = "\n".join(
        json.dumps(
            {
                "id": f"load-{i}",
                "question": f"Who was person {i}?",
                "domain": "Biography",
                "response": f"Person {i} was born in 1900. Person {i} was a painter.",
                "claim_lists": {
                    "extractor-a": [f"Person {i} was born in 1900.", f"Person {i} was a painter."],
                    "extractor-b": [f"Person {i} was a painter born in 1900."],
                },
            }
        )
        for i in range(docs)
    )
    import_file(project=project, text=lines, file="load.jsonl")
    a, b = (System.objects.get(project=project, name=n) for n in ("extractor-a", "extractor-b"))
    items = comparison_items(project=project, system_a=a, system_b=b)
    assign(items, project=project, k=overlap, fraction=1.0, seed=0)
    for m in project.memberships.filter(role=Membership.ANNOTATOR):
        m.acknowledge()
    return {
        "project": project.pk,
        "users": [u.username for u in users],
        "tokens": [Token.objects.create(user=u).key for u in users],
        "sessions": [_session(u) for u in users],
        "session_cookie": settings.SESSION_COOKIE_NAME,
        "csrf_cookie": settings.CSRF_COOKIE_NAME,
    }


def _session(user: Any) -> str:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def exactly_once(results: list[Result], project: int) -> tuple[bool, str]:
    from annotation.models import Answer, Assignment

    confirmed = [c for r in results for c in r.confirmed]
    ids = [c[1] for c in confirmed]
    duplicated = len(ids) - len(set(ids))
    rows = {a.pk: a for a in Assignment.objects.filter(pk__in=ids).select_related("annotator")}
    choices: dict[int, list[str]] = {}
    for assignment, value in Answer.objects.filter(
        assignment_id__in=ids, unit="item", field="choice"
    ).values_list("assignment_id", "value"):
        choices.setdefault(assignment, []).append(value)
    wrong = [
        c
        for c in confirmed
        if c[1] not in rows
        or rows[c[1]].status != Assignment.SUBMITTED
        or rows[c[1]].annotator.username != c[0]
        or choices.get(c[1]) != [c[2]]
    ]
    stored = Assignment.objects.filter(
        item__project_id=project, status=Assignment.SUBMITTED
    ).count()
    ok = not duplicated and not wrong and stored >= len(set(ids))
    return ok, (
        f"{len(confirmed)} confirmed, {stored} stored as submitted, {len(wrong)} missing or "
        f"wrong, {duplicated} confirmed twice, {stored - len(set(ids))} stored without a "
        "confirmation (a client gave up first)"
    )


def bench_platform(
    args: argparse.Namespace, work: Path, database_url: str
) -> tuple[list[Result], bool]:
    env = django_env(work, database_url)
    for name in ("DATABASE_URL", "SQLITE_PATH"):  # never the caller's database
        os.environ.pop(name, None)
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0)
    call_command("collectstatic", "--noinput", verbosity=0)
    t = time.monotonic()
    spec = setup_project(args.annotators, args.per_annotator, args.overlap)
    print(
        f"setup: {args.annotators} annotators, {args.per_annotator} items each "
        f"({time.monotonic() - t:.0f}s)",
        flush=True,
    )
    connections.close_all()

    port = free_port()
    log = work / "gunicorn.log"
    server = gunicorn(
        BIN,
        ["annotation.wsgi", "--preload"],
        port=port,
        workers=args.web_workers,
        env=env,
        cwd=ROOT,
        log=log,
    )
    url = f"http://127.0.0.1:{port}"
    results = []
    try:
        wait_ready(f"{url}/login/", server, log)
        for kind in ("pages", "api"):
            for load, pace, duration in (
                ("paced", args.pace, args.paced_seconds),
                ("saturating", 0, args.saturating_seconds),
            ):
                results.append(
                    run_load(
                        {
                            **spec,
                            "url": url,
                            "kind": kind,
                            "target": kind,
                            "load": load,
                            "pace": pace,
                            "duration": duration,
                            "annotators": args.annotators,
                            "timeout": args.timeout,
                        },
                        work,
                    )
                )
    finally:
        stop(server)
    ok, summary = exactly_once(results, spec["project"])
    print(f"exactly once: {'yes' if ok else 'NO'}: {summary}")
    connections.close_all()
    return results, ok


# --------------------------------------------------------------------------- Label Studio

LS_CONFIG = """<View>
  <Text name="text" value="$text"/>
  <Choices name="choice" toName="text" choice="single" required="true">
    <Choice value="1"/><Choice value="2"/>
  </Choices>
</View>"""

LS_USERS = """
import json, os
from organizations.models import Organization
from rest_framework.authtoken.models import Token
from users.models import User
org = Organization.objects.first()
owner = org.created_by
tokens = []
for n in range(int(os.environ["LOAD_ANNOTATORS"])):
    name = f"load{n:03d}"
    u, _ = User.objects.get_or_create(email=f"{name}@example.org", defaults={"username": name})
    u.set_password("load-test-password"); u.active_organization = org; u.save()
    org.add_user(u)
    tokens.append(Token.objects.get_or_create(user=u)[0].key)
print(json.dumps({"owner": Token.objects.get_or_create(user=owner)[0].key, "tokens": tokens}))
"""


def bench_label_studio(args: argparse.Namespace, work: Path) -> list[Result]:
    built = subprocess.run(
        [str(ROOT / "scripts" / "labelstudio-venv")], capture_output=True, text=True, check=False
    )
    venv = Path(built.stdout.strip().splitlines()[-1]) if built.stdout.strip() else None
    if venv is None or not (venv / "bin" / "label-studio").exists():
        print(f"Label Studio is not available: {built.stderr.strip()[-500:]}")
        return []
    if not (venv / "bin" / "gunicorn").exists():
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "gunicorn"], check=True)
    data = work / "label-studio"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "SQLITE_PATH", "VAR_DIR")
    }
    env.update(
        LATEST_VERSION_CHECK="false",
        COLLECT_ANALYTICS="false",
        LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN="true",
        LABEL_STUDIO_BASE_DATA_DIR=str(data),
        DEBUG="false",
        LOG_LEVEL="ERROR",
        SECRET_KEY="load-test-label-studio-secret",
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # `label-studio start` creates the database, the admin and its organisation (minutes:
    # the empty, initialised data directory is kept next to the venv and copied next time) ...
    pristine = venv.parent / f"{venv.name}.bench-data"
    if not pristine.exists():
        data.mkdir()
        log = data / "server.log"
        first = subprocess.Popen(
            [
                str(venv / "bin" / "label-studio"),
                "start",
                "--no-browser",
                "--internal-host",
                "127.0.0.1",
                "--port",
                str(port),
                "--data-dir",
                str(data),
                "--username",
                "admin@example.org",
                "--password",
                "admin-password-123",
                "--user-token",
                "load-test-admin-token-0123456789",
                "--enable-legacy-api-token",
            ],
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            cwd=data,
        )
        try:
            wait_ready(f"{url}/health", first, log)
        finally:
            stop(first)
        shutil.copytree(data, pristine.with_suffix(".tmp"), dirs_exist_ok=True)
        pristine.with_suffix(".tmp").rename(pristine)
    else:
        shutil.copytree(pristine, data)
    # ... then its annotators (one user and token each), and the server under gunicorn.
    package = next((venv / "lib").glob("python3*/site-packages/label_studio"))
    made = subprocess.run(
        [str(venv / "bin" / "python"), str(package / "manage.py"), "shell", "-c", LS_USERS],
        env={**env, "LOAD_ANNOTATORS": str(args.annotators)},
        cwd=data,
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        sys.exit(f"could not create Label Studio users:\n{made.stderr[-3000:]}")
    users = json.loads(made.stdout.strip().splitlines()[-1])
    glog = data / "gunicorn.log"
    server = gunicorn(
        venv / "bin",
        ["core.wsgi:application"],
        port=port,
        workers=args.web_workers,
        cwd=package,
        log=glog,
        env={**env, "DJANGO_SETTINGS_MODULE": "core.settings.label_studio"},
    )
    results = []
    try:
        wait_ready(f"{url}/health", server, glog)
        owner = httpx.Client(
            base_url=url, headers={"Authorization": f"Token {users['owner']}"}, timeout=120
        )
        tasks = args.annotators * args.per_annotator
        project = _check(
            owner.post("/api/projects/", json={"title": "LOAD TEST", "label_config": LS_CONFIG}),
            201,
        ).json()["id"]
        _check(
            owner.post(
                f"/api/projects/{project}/import",
                json=[
                    {"text": f"Person {i} was born in 1900. Person {i} was a painter."}
                    for i in range(tasks)
                ],
            ),
            201,
        )
        spec = {
            "project": project,
            "users": [f"load{n:03d}" for n in range(args.annotators)],
            "tokens": users["tokens"],
            "url": url,
            "kind": "labelstudio",
            "target": "labelstudio",
            "annotators": args.annotators,
            "timeout": args.timeout,
        }
        for load, pace, duration in (
            ("paced", args.pace, args.paced_seconds),
            ("saturating", 0, args.saturating_seconds),
        ):
            results.append(
                run_load({**spec, "load": load, "pace": pace, "duration": duration}, work)
            )
    finally:
        stop(server)
    return results


# --------------------------------------------------------------------------- main


def ratios(ours: list[Result], theirs: list[Result]) -> None:
    ls = {r.load: r for r in theirs}
    print(
        "\nratios against Label Studio (ours / Label Studio; latency below 1 and throughput "
        "above 1 are better)"
    )
    for r in ours:
        other = ls.get(r.load)
        if other is None or not other.cycles or not r.cycles:
            continue
        print(
            f"  {r.target:<6} {r.load:<10}"
            f" next p95 {pct(r.next_ms, 95) / pct(other.next_ms, 95):5.2f}"
            f"   submit p95 {pct(r.submit_ms, 95) / pct(other.submit_ms, 95):5.2f}"
            f"   cycles/s {(r.cycles / r.seconds) / (other.cycles / other.seconds):5.2f}"
        )


def start_postgres() -> tuple[str, dict[str, str]]:
    out = subprocess.run(
        [str(ROOT / "scripts" / "ensure-postgres")], capture_output=True, text=True, check=True
    ).stdout
    values = dict(re.findall(r"export (\w+)=(\S+)", out))
    return values["DATABASE_URL"], values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--per-annotator", type=int, default=120, help="items in each queue")
    parser.add_argument("--overlap", type=int, default=5, help="annotators per item")
    parser.add_argument("--pace", type=float, default=5.0, help="seconds between paced cycles")
    parser.add_argument("--paced-seconds", type=float, default=30.0)
    parser.add_argument("--saturating-seconds", type=float, default=20.0)
    parser.add_argument("--web-workers", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=60.0, help="client timeout per request")
    parser.add_argument("--no-label-studio", action="store_true")
    parser.add_argument("--label-studio-only", action="store_true")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="3 annotators, 2+2 seconds, no Label Studio: does it all work?",
    )
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        spec = json.loads(Path(args.drive).read_text())
        print(json.dumps(asdict(asyncio.run(_drive(spec)))))
        return
    if args.smoke:
        args.annotators, args.per_annotator, args.overlap = 3, 30, 1
        args.pace, args.paced_seconds, args.saturating_seconds = 1.0, 2.0, 2.0
        args.no_label_studio = True

    work = Path(tempfile.mkdtemp(prefix="annotate-load-"))
    pg: dict[str, str] = {}
    try:
        database_url = ""
        if args.database == "postgres":
            database_url, pg = start_postgres()
        print(
            f"annotate_load: {args.annotators} annotators, {args.web_workers} gunicorn workers, "
            f"{args.database}, {os.cpu_count()} CPUs, load average {loadavg()}"
        )
        print(
            f"paced: one cycle per annotator every {args.pace:g}s for {args.paced_seconds:g}s; "
            f"saturating: back to back for {args.saturating_seconds:g}s; times in ms\n"
        )
        print(yardstick_line())
        print(HEADER, flush=True)
        ours, ok = [], True
        if not args.label_studio_only:
            ours, ok = bench_platform(args, work, database_url)
        if not args.no_label_studio:
            theirs = bench_label_studio(args, work)
            ratios(ours, theirs)
        print(yardstick_line())
        if not ok:
            sys.exit(1)
    finally:
        if pg:
            subprocess.run(
                [str(ROOT / "scripts" / "ensure-postgres"), "stop"],
                env={**os.environ, **pg},
                check=False,
            )
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
