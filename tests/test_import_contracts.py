"""`make lint`'s import contracts (`lint-imports`, configured in pyproject.toml): run on a
copy of the project, unchanged and with an injected cycle, layer violation or Django
import, to show each one fails (and an import under `if TYPE_CHECKING:` does not)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    skip = shutil.ignore_patterns("__pycache__")
    for package in ("annotation", "pipeline"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=skip)
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "import_contracts.py", tmp_path / "scripts")
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=project, capture_output=True, text=True
    )


def append(path: Path, code: str) -> None:
    path.write_text(path.read_text() + "\n\n" + code)


def test_the_project_keeps_its_contracts_and_type_checking_imports_do_not_count(
    project: Path,
) -> None:
    # an import that would climb from models to the pages, only for the type checker
    append(
        project / "annotation" / "models.py",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from .views import annotator  # noqa: F401\n",
    )
    result = lint_imports(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def test_a_lazy_import_that_closes_a_cycle_fails(project: Path) -> None:
    # inside a function, models reaches gold, which imports models back through kinds
    append(
        project / "annotation" / "models.py",
        "def probe() -> None:\n    from .gold import label_rows  # noqa: F401\n",
    )
    result = lint_imports(project)
    assert result.returncode == 1
    assert "No import cycle (imports inside functions count) BROKEN" in result.stdout
    # the cycle found: models -> gold -> (answers, hiring.models, kinds, forms) -> models
    assert "Import cycle of 6 modules: annotation.answers, annotation.forms, " in result.stdout
    assert "annotation.models is not allowed to import annotation.gold" in result.stdout


def test_a_lazy_import_that_climbs_a_layer_fails(project: Path) -> None:
    # no cycle (operations imports no view), still a lower box importing a higher one
    append(
        project / "annotation" / "operations.py",
        "def probe() -> None:\n    from .views import common  # noqa: F401\n",
    )
    result = lint_imports(project)
    assert result.returncode == 1
    assert "No import cycle (imports inside functions count) KEPT" in result.stdout
    assert "annotation.operations is not allowed to import annotation.views" in result.stdout


def test_django_in_the_statistics_fails(project: Path) -> None:
    append(project / "annotation" / "stats" / "ratings.py", "from django.db import models\n")
    result = lint_imports(project)
    assert result.returncode == 1
    assert "plain Python: no Django, no annotation app BROKEN" in result.stdout
    assert "annotation.stats.ratings -> django" in result.stdout


def private_uses(path: Path) -> list[str]:
    """`from x import _name` and `module._name` (a module this file imported) in one file."""
    tree = ast.parse(path.read_text())
    modules: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path}:{node.lineno}: from {node.module} import {alias.name}")
                elif node.level or (node.module or "").startswith(("annotation", "pipeline")):
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name.split(".")[0] for a in node.names)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr != "_meta"  # Django's documented model API
        ):
            found.append(f"{path}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_uses_another_modules_private_names(tmp_path: Path) -> None:
    found = [
        use
        for package in ("annotation", "pipeline")
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        for use in private_uses(path)
    ]
    assert found == []
    # the check finds both spellings
    (tmp_path / "m.py").write_text("from .x import _hidden\nfrom . import y\ny._inner()\n")
    assert [u.split(": ", 1)[1] for u in private_uses(tmp_path / "m.py")] == [
        "from x import _hidden",
        "y._inner",
    ]
