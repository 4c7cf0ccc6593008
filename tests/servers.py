"""Real server processes of this site (manage.py runserver) on a private SQLite file, for
tests about what several processes share."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STARTUP_SECONDS = 120  # a deadline for a state (the server answers), not a wait


def site_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"SQLITE_PATH": str(tmp / "db.sqlite3"), "VAR_DIR": str(tmp), **extra})
    return env


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def servers(env: dict[str, str], n: int) -> Iterator[list[str]]:
    """`n` runserver processes on one database; yields their base URLs once each answers."""
    procs, urls = [], []
    try:
        for _ in range(n):
            port = _free_port()
            log = open(Path(env["VAR_DIR"]) / f"server-{port}.log", "w")  # noqa: SIM115
            procs.append(
                (
                    subprocess.Popen(
                        [
                            sys.executable,
                            "manage.py",
                            "runserver",
                            "--noreload",
                            "--skip-checks",
                            f"127.0.0.1:{port}",
                        ],
                        cwd=ROOT,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    ),
                    log,
                )
            )
            urls.append(f"http://127.0.0.1:{port}")
        for (proc, log), url in zip(procs, urls, strict=True):
            deadline = time.monotonic() + STARTUP_SECONDS
            while True:
                assert proc.poll() is None, Path(log.name).read_text()[-2000:]
                try:
                    urllib.request.urlopen(url + "/login/", timeout=5).close()
                    break
                except urllib.error.HTTPError:
                    break  # it answered
                except OSError:
                    assert time.monotonic() < deadline, f"{url} did not answer"
                    time.sleep(0.2)
        yield urls
    finally:
        for proc, log in procs:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
