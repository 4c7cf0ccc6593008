"""Kinds are described once, in annotation/kinds/: the rest of the code loops over the
registry. This scans the code for what would say otherwise."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from argparse import ArgumentParser
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.management import call_command

from annotation import kinds
from annotation.forms import AnswerForm, PolicyForm
from annotation.kinds import ITEM, KindSpec, schema
from annotation.kinds.base import Field, ItemInfo, ls_choices
from annotation.models import Item, Project

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
    pages = [*(ROOT / "templates").rglob("*.html"), *(ROOT / "annotation").rglob("*.html")]
    for path in sorted(pages):
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
    assert [s.name for s in specs] == kinds.names() == schema.NAMES
    assert kinds.names()[:4] == ["comparison", "verification", "segment", "atomic"]
    for spec in specs:
        # the kind's page is in its folder: annotation/kinds/<name>/templates/
        assert (ROOT / "annotation/kinds" / spec.name / "templates" / spec.template).exists()
        assert spec.keys, f"{spec.name} lists no keyboard shortcuts"
        categorical = spec.categorical()
        assert {a.field for a in spec.agreement} <= set(categorical), spec.name
        if spec.verdict_field:
            assert spec.verdict_field in categorical and spec.verdict_target is not None
        # each section a kind asks for has its builder (in the kind's folder: report.py)
        for slug in spec.report_sections:
            builder = spec.report_section(slug)
            assert callable(builder) and builder.__module__.startswith(type(spec).__module__)
    with pytest.raises(ValueError, match="unknown item kind 'ranking'"):
        kinds.get("ranking")


# --- adding a kind: a module and its name -------------------------------------------------


class Ranking(KindSpec):
    """A complete kind for the tests: every part the registry asks for."""

    name = "ranking"
    title = "Ranking"
    template = "annotation/comparison.html"  # an existing page, for the test only
    fields = (Field("rank", "Rank", choices=(("1", "First"), ("2", "Second"))),)
    keys = ((("1", "/", "2"), "rank first or second"),)
    view_keys = {"ranked": "ranking: the texts to rank"}
    items_help = "One item per document."

    def view(self, item: Item, *, swapped: bool = False) -> dict[str, Any]:
        return {"ranked": [item.document.response]}

    def form(self, item: Item, data: Any, initial: Any) -> AnswerForm:
        return AnswerForm(data, initial=initial)

    def expected(self, project: Project, items: dict[int, ItemInfo]) -> dict[int, Any]:
        return {pk: [(ITEM, "rank")] for pk in items}

    def items_form(self, project: Project, data: Any = None) -> PolicyForm:
        return PolicyForm(data)

    def label_config(self, slots: int, project: Project) -> str:
        return ls_choices("rank", "response", ["1", "2"])

    def ls_task(self, view: dict[str, Any], slots: int) -> dict[str, Any]:
        return {"ranked": view["ranked"]}

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--depth", type=int, default=3, help="ranking: how deep")


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[KindSpec], None]]:
    """Register a kind as a new one would be: a package annotation/kinds/<name>/ with its
    SPEC, and its name in kinds/schema.py."""

    def register(spec: KindSpec) -> None:
        module = types.ModuleType(f"annotation.kinds.{spec.name}")
        module.SPEC = spec  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
        monkeypatch.setattr(schema, "NAMES", [*schema.NAMES, spec.name])
        kinds._registry.cache_clear()

    yield register
    kinds._registry.cache_clear()


def test_every_registered_kind_has_all_its_parts() -> None:
    for spec in kinds.all_specs():
        assert spec.missing_parts() == [], spec.name


def test_adding_a_kind_is_a_module_and_its_name_and_needs_no_migration(
    registered: Callable[[KindSpec], None], alpha: Project
) -> None:
    with pytest.raises(ValidationError, match="Unknown item kind 'ranking'"):
        Item.objects.create(project=alpha, kind="ranking", document=alpha.documents.first())
    registered(Ranking())
    assert kinds.names()[-1] == "ranking" and kinds.get("ranking").title == "Ranking"
    # no choices on Item.kind: the database schema does not change with the registry
    call_command("makemigrations", "annotation", "--check", "--dry-run", verbosity=0)
    _, _, _, field = Item._meta.get_field("kind").deconstruct()
    assert "choices" not in field
    item = Item.objects.create(project=alpha, kind="ranking", document=alpha.documents.first())
    item.full_clean()
    with pytest.raises(ValidationError, match="Unknown item kind 'nope'"):
        Item(project=alpha, kind="nope", document=item.document).full_clean()
    # create_items takes the kind and its own options from the registry
    out = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stdout(out):
        call_command("create_items", "alpha", "ranking", "--help")
    assert "--depth" in out.getvalue() and "--fraction" in out.getvalue()


@pytest.mark.parametrize("part", [*KindSpec.REQUIRED, "title", "template", "fields", "keys"])
def test_a_kind_that_lacks_a_part_is_refused(
    registered: Callable[[KindSpec], None], part: str
) -> None:
    incomplete = type("Incomplete", (Ranking,), {part: getattr(KindSpec, part, "")})()
    assert incomplete.missing_parts() == [part]
    registered(incomplete)
    with pytest.raises(ImproperlyConfigured, match=rf"'ranking' .* lacks: {part}$"):
        kinds.all_specs()


def test_two_kinds_judging_verdicts_at_one_level_are_refused(
    registered: Callable[[KindSpec], None],
) -> None:
    verification = type(kinds.get("verification"))
    registered(type("Rival", (verification,), {"name": "ranking"})())
    with pytest.raises(ImproperlyConfigured, match="at one level: .*'claim', .*'claim'"):
        kinds.all_specs()


def test_a_kind_whose_template_is_missing_is_refused(
    registered: Callable[[KindSpec], None],
) -> None:
    registered(type("NoPage", (Ranking,), {"template": "annotation/ranking.html"})())
    with pytest.raises(ImproperlyConfigured, match="lacks: template annotation/ranking.html"):
        kinds.get("ranking")
