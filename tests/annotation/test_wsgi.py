"""The WSGI (and ASGI) module a server loads: it builds the application and warms up what each
process's first report would otherwise do once (reports.warm_up)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

LOAD = """
import sys
import annotation.{module} as server
from django.template import engines
from threadpoolctl import _realpath

loader = engines["django"].engine.template_loaders[0]
cached = set(loader.get_template_cache)
assert {"annotation/report_file.html", "annotation/_report_body.html"} <= cached, cached
assert _realpath.cache_info().currsize > 0  # threadpoolctl's scan of the libraries is done
assert "annotation.views" in sys.modules  # the URLconf is loaded: every view imported
from django.urls import get_resolver
assert get_resolver()._populated  # and its reverse map built: the routes' patterns compiled
print("ok", callable(server.application))
"""


@pytest.mark.parametrize("module", ["wsgi", "asgi"])
def test_the_server_module_loads_and_warms_up_the_reports(tmp_path: Path, module: str) -> None:
    env = os.environ | {"SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    env.pop("DATABASE_URL", None)  # the module only; no database is opened
    done = subprocess.run(
        [sys.executable, "-c", LOAD.replace("{module}", module)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok True"
