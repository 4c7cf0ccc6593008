"""Push and pull against a real Label Studio server (label-studio 1.23.2, in its own
virtualenv built by scripts/labelstudio-venv because it pins Django 5.2)."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from annotation import labelstudio
from annotation.models import Assignment, Item, Project
from tests.requires import unavailable

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "factuality-test-token-0123456789"
STARTUP_SECONDS = int(os.getenv("LABEL_STUDIO_STARTUP_SECONDS", "900"))


def _venv() -> Path:
    """The Label Studio virtualenv (built, or reused from the cache, by the script)."""
    built = subprocess.run(
        [str(ROOT / "scripts" / "labelstudio-venv")], capture_output=True, text=True, timeout=1800
    )
    venv = Path(built.stdout.strip().splitlines()[-1]) if built.stdout.strip() else None
    if venv is None or not (venv / "bin" / "label-studio").exists():
        reason = built.stderr.strip().splitlines()[-1:] or ["unknown reason"]
        unavailable(f"Label Studio server cannot be installed here: {reason[0]}")
    return venv


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def label_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    venv = _venv()
    port = _free_port()
    data = tmp_path_factory.mktemp("label-studio")
    env = {
        **os.environ,
        "LATEST_VERSION_CHECK": "false",
        "COLLECT_ANALYTICS": "false",
        "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
        "DJANGO_SETTINGS_MODULE": "",
        "LABEL_STUDIO_BASE_DATA_DIR": str(data),
    }
    env.pop("DJANGO_SETTINGS_MODULE")
    log = (data / "server.log").open("w")
    server = subprocess.Popen(
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
            TOKEN,
            "--enable-legacy-api-token",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=data,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if server.poll() is not None:
                pytest.fail("Label Studio exited: " + (data / "server.log").read_text()[-2000:])
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"Label Studio not healthy after {STARTUP_SECONDS}s: "
                    + (data / "server.log").read_text()[-2000:]
                )
            time.sleep(1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def test_push_annotate_and_pull(label_studio: str, alpha: Project, alpha_items: list[Item]) -> None:
    out = io.StringIO()
    call_command(
        "labelstudio",
        "push",
        "alpha",
        "--kind",
        "comparison",
        "--url",
        label_studio,
        "--token",
        TOKEN,
        stdout=out,
    )
    ls_project = int(out.getvalue().strip().splitlines()[-1])
    ls = labelstudio.client(label_studio, TOKEN)
    tasks = list(ls.tasks.list(project=ls_project, fields="all"))
    assert len(tasks) == 4
    assert "zz-secret" not in str([t.data for t in tasks])
    # an annotator labels two tasks in Label Studio
    for task in tasks[:2]:
        ls.annotations.create(
            id=task.id,
            result=labelstudio.answers_result(
                {
                    ("item", "choice"): "1",
                    ("item", "hard"): "yes",
                    ("item", "justification"): "List 1 names every fact separately.",
                },
                kind="comparison",
            ),
        )
    me = ls.users.whoami()
    out = io.StringIO()
    call_command(
        "labelstudio",
        "pull",
        "alpha",
        "--ls-project",
        str(ls_project),
        "--url",
        label_studio,
        "--token",
        TOKEN,
        stdout=out,
    )
    assert "2 submitted" in out.getvalue()
    annotator = User.objects.get(username=f"ls-{me.id}")
    done = Assignment.objects.filter(annotator=annotator)
    assert done.count() == 2 and {a.status for a in done} == {"submitted"}
    by_item = {t.data["meta"]["item"]: t.data["meta"]["swapped"] for t in tasks}
    for a in done:
        assert a.answers_dict()[("item", "choice")] == "1"
        assert a.swapped == by_item[a.item_id]


def test_atomic_facts_push_annotate_and_pull(
    label_studio: str, alpha: Project, alpha_atomic: list[Item]
) -> None:
    from tests.annotation.conftest import FACT_LISTER, FACT_VERIFIER

    out = io.StringIO()
    call_command(
        "labelstudio",
        "push",
        "alpha",
        "--kind",
        "atomic",
        "--url",
        label_studio,
        "--token",
        TOKEN,
        stdout=out,
    )
    ls_project = int(out.getvalue().strip().splitlines()[-1])
    ls = labelstudio.client(label_studio, TOKEN)
    tasks = list(ls.tasks.list(project=ls_project, fields="all"))
    assert len(tasks) == 2
    shown = str([t.data for t in tasks])
    assert FACT_LISTER not in shown and FACT_VERIFIER not in shown and "(1900-1970)" in shown
    answers = {
        ("fact:0", "label"): "supported",
        ("fact:1", "label"): "not-supported",
        ("fact:2", "label"): "irrelevant",
    }
    for task in tasks:
        ls.annotations.create(id=task.id, result=labelstudio.answers_result(answers, kind="atomic"))
    me = ls.users.whoami()
    out = io.StringIO()
    call_command(
        "labelstudio",
        "pull",
        "alpha",
        "--ls-project",
        str(ls_project),
        "--url",
        label_studio,
        "--token",
        TOKEN,
        stdout=out,
    )
    assert "2 submitted" in out.getvalue()
    done = Assignment.objects.filter(annotator__username=f"ls-{me.id}", item__kind=Item.ATOMIC)
    assert {a.item_id for a in done} == {i.pk for i in alpha_atomic}
    assert all(a.status == "submitted" and a.answers_dict() == answers for a in done)
