"""The manual's strict build (`make docs-build`, run by .ci/run) fails on a broken link.
(Not with --quiet: mkdocs then drops the warnings that --strict counts.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.requires import unavailable

REPO = Path(__file__).resolve().parents[1]


def test_the_strict_build_fails_on_a_broken_link_or_anchor(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).with_name("mkdocs")
    if not mkdocs.exists():
        unavailable("mkdocs is not installed (make install-docs)")
    for name in ("mkdocs.yml", "ARCHITECTURE.md"):  # the manual includes ARCHITECTURE.md
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    build = [str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")]
    assert subprocess.run(build, cwd=tmp_path, capture_output=True).returncode == 0
    with (tmp_path / "docs" / "api.md").open("a") as f:
        f.write("\n[gone](no-such-page.md) and [off](deployment.md#no-such-anchor)\n")
    broken = subprocess.run(build, cwd=tmp_path, capture_output=True, text=True)
    assert broken.returncode != 0
    assert "no-such-page.md" in broken.stderr and "no-such-anchor" in broken.stderr
