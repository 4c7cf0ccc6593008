"""The WSGI module a server loads: it builds the application and warms up what each
process's first report would otherwise do once (reports.warm_up)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LOAD = """
import sys
import annotation.wsgi
from django.template import engines
from threadpoolctl import _realpath

loader = engines["django"].engine.template_loaders[0]
cached = set(loader.get_template_cache)
assert {"annotation/report_file.html", "annotation/_report_body.html"} <= cached, cached
assert _realpath.cache_info().currsize > 0  # threadpoolctl's scan of the libraries is done
print("ok", callable(annotation.wsgi.application))
"""


def test_the_wsgi_module_loads_and_warms_up_the_reports(tmp_path: Path) -> None:
    env = os.environ | {"SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    env.pop("DATABASE_URL", None)  # the module only; no database is opened
    done = subprocess.run(
        [sys.executable, "-c", LOAD], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok True"
