"""Rules of issue 42 ("statistics a reader can check") kept by a test: no function over
80 lines (docstrings count), no object built by `tuple.__new__`, no cache keyed by `id()`,
anywhere in annotation/ (tests and migrations aside). Each checker is also shown to find a
violation in a sample, so the rule cannot pass by reading nothing."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 80


def sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted((ROOT / "annotation").rglob("*.py")):
        if {"tests", "migrations"} & set(path.parts):
            continue
        yield str(path.relative_to(ROOT)), ast.parse(path.read_text(), filename=str(path))


def long_functions(name: str, tree: ast.Module) -> list[str]:
    return [
        f"{name}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_LINES
    ]


def hidden_constructions(name: str, tree: ast.Module) -> list[str]:
    """Calls of `tuple.__new__` and of the builtin `id` (an `id()`-keyed cache needs one)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "__new__":
            if isinstance(f.value, ast.Name) and f.value.id == "tuple":
                found.append(f"{name}:{node.lineno} tuple.__new__")
        if isinstance(f, ast.Name) and f.id == "id":
            found.append(f"{name}:{node.lineno} id()")
    return found


def test_no_function_is_longer_than_80_lines() -> None:
    assert [line for name, tree in sources() for line in long_functions(name, tree)] == []


def test_nothing_is_built_by_tuple_new_or_cached_under_id() -> None:
    assert [line for name, tree in sources() for line in hidden_constructions(name, tree)] == []


def test_the_checkers_find_what_they_look_for() -> None:
    body = "\n".join(f"    x = {i}" for i in range(MAX_LINES))
    sample = ast.parse(
        f"def long():\n{body}\n\n"
        "def short(rows, cache):\n"
        "    row = tuple.__new__(Row, rows)\n"
        "    return cache.setdefault(id(rows), row)\n"
    )
    assert long_functions("sample.py", sample) == ["sample.py:1 long (81 lines)"]
    assert hidden_constructions("sample.py", sample) == [
        "sample.py:84 tuple.__new__",
        "sample.py:85 id()",
    ]
    assert sum(1 for _ in sources()) > 100  # the whole package was read
