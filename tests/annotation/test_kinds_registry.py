"""Kinds are described once, in annotation/kinds/: the rest of the code loops over the
registry. This scans the code for what would say otherwise."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotation import kinds

ROOT = Path(__file__).resolve().parents[2]
NAMES = "|".join(kinds.names())
CONSTANTS = "COMPARISON|VERIFICATION|SEGMENT|ATOMIC"
FORBIDDEN = [
    # a kind constant: Item.COMPARISON, schema.ATOMIC, ...
    re.compile(rf"\b\w+\.({CONSTANTS})\b"),
    re.compile(rf"\bimport .*\b({CONSTANTS})\b"),
    # a branch on a kind (the pattern the lead's stop hook greps for)
    re.compile(r"kind (==|!=) |\.kind (==|!=)"),
    # a kind name written out: "comparison", 'segment', ...
    re.compile(rf"[\"']({NAMES})[\"']"),
]
# Quoted words that are not kinds: the pipeline's extractor named "atomic" (listed with
# "veriscore", or as the page's choice of extractor), and the Verdict model's field
# named "segment".
NOT_KINDS = [
    re.compile(r"[\"']veriscore[\"']"),
    re.compile(r"\(\"atomic\", \"Atomic facts per sentence"),
    re.compile(r"fields=\[\"segment\", \"system\"\]"),
]


def offending_lines() -> list[str]:
    found = []
    for path in sorted([*(ROOT / "annotation").rglob("*.py"), *(ROOT / "pipeline").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("annotation/kinds/", "annotation/migrations/")):
            continue
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            if rel.startswith("pipeline/") and not FORBIDDEN[2].search(line):
                continue  # the pipeline knows no item kinds; "verification" is a step there
            if any(p.search(line) for p in FORBIDDEN) and not any(
                p.search(line) for p in NOT_KINDS
            ):
                found.append(f"{rel}:{n}: {line.strip()}")
    for path in sorted((ROOT / "templates").rglob("*.html")):
        rel = path.relative_to(ROOT).as_posix()
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            if re.search(rf"kind\s*(==|!=)|[\"'](?:{NAMES})[\"']\s*(==|!=)", line):
                found.append(f"{rel}:{n}: {line.strip()}")
    return found


def test_no_code_outside_the_registry_names_a_kind() -> None:
    assert offending_lines() == []


@pytest.mark.parametrize(
    "line",
    [
        "if item.kind == Item.COMPARISON:",
        "items = Item.objects.filter(kind=Item.SEGMENT)",
        "from .kinds.schema import ATOMIC",
        'fields_of = {"verification": 1}',
        "elif kind != 'comparison':",
    ],
)
def test_the_scan_catches_kind_references(line: str) -> None:
    assert any(p.search(line) for p in FORBIDDEN)


def test_every_kind_is_registered_with_its_module() -> None:
    specs = kinds.all_specs()
    assert (
        [s.name for s in specs]
        == kinds.names()
        == ["comparison", "verification", "segment", "atomic"]
    )
    for spec in specs:
        assert (ROOT / "templates" / spec.template).exists(), spec.template
        assert spec.keys, f"{spec.name} lists no keyboard shortcuts"
        categorical = spec.categorical()
        assert {a.field for a in spec.agreement} <= set(categorical), spec.name
        if spec.verdict_field:
            assert spec.verdict_field in categorical and spec.verdict_target is not None
    with pytest.raises(ValueError, match="unknown item kind 'ranking'"):
        kinds.get("ranking")
