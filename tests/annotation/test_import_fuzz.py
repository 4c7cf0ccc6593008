"""Fuzzing every importer (SAFE's in test_safe_format.py): no input makes an import raise
anything but ImportFailed, and a file that was accepted adds nothing when imported again.
Derandomized when CI=true (the "ci" profile of tests/conftest.py); bench/import_fuzz.py
runs them longer with a fresh seed (.ci/run's fuzz step too). A crash it finds is pinned
here as an @example with its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from annotation.ingest import ImportFailed, import_file
from annotation.models import Claim, Document, Evidence, Project, Segment, Verdict
from pipeline.dataformats import mapped

pytestmark = pytest.mark.slow

TEXT = st.text(
    st.characters(codec="utf-8") | st.sampled_from(["\x00", "\ud800", "\u2028", "\u0085", "\n"]),
    max_size=12,
)
HUGE = "<an integer of 4301 digits>"  # json.dumps cannot write one: put in by file_text
LEAF = st.none() | st.booleans() | st.integers(-3, 3) | st.floats() | TEXT | st.just(HUGE)
JSON = st.recursive(
    LEAF, lambda c: st.lists(c, max_size=3) | st.dictionaries(TEXT, c, max_size=3), max_leaves=8
)

BASES: dict[str, dict[str, Any]] = {
    "canonical": {
        "id": "d1",
        "response": "A. B.",
        "question": "Q?",
        "domain": "x",
        "source_model": "m",
        "metadata": {"k": 1},
        "claim_lists": {
            "s": [
                "A.",
                {
                    "text": "B.",
                    "sentence_index": 1,
                    "evidence": [{"title": "t", "snippet": "s", "link": "https://e.org"}],
                    "verdicts": {"v": "supported"},
                },
            ]
        },
        "abstained": [],
        "segments": ["A.", {"text": "B.", "labels": {"l": True}}],
    },
    "veriscore": {
        "question": "Q?",
        "response": "A. B.",
        "model": "m",
        "prompt_source": "x",
        "abstained": False,
        "claim_list": [["A."], ["No verifiable claim."]],
        "all_claims": ["A."],
        "claim_search_results": {"A.": [{"title": "t", "snippet": "s", "link": "https://e.org"}]},
        "claim_verification_result": [
            {"claim": "A.", "search_results": "", "verification_result": "supported"}
        ],
    },
    "veriscore-input": {"question": "Q?", "response": "A.", "model": "m", "prompt_source": "x"},
    "factscore": {
        "input": "Question: Tell me a bio of X.",
        "output": "X sings.",
        "topic": "X",
        "cat": [],
        "annotations": [
            {
                "text": "X sings.",
                "is-relevant": True,
                "model-atomic-facts": [{"text": "X sings."}],
                "human-atomic-facts": [{"text": "X sings.", "label": "S"}],
            }
        ],
    },
    "felm": {
        "index": "0",
        "source": "s",
        "prompt": "P?",
        "response": "A. B.",
        "segmented_response": ["A.", "B."],
        "labels": [True, False],
        "comment": ["", ""],
        "type": [None, None],
        "ref": [],
    },
}


@st.composite
def record(draw: st.DrawFn, fmt: str) -> dict[str, Any]:
    """The format's record with some keys dropped, some values replaced by any JSON value,
    and maybe a key of its own."""
    base = dict(MAPPED if fmt == "mapping" else BASES[fmt])
    for key in draw(st.lists(st.sampled_from(sorted(base)), max_size=3, unique=True)):
        if draw(st.booleans()):
            del base[key]
        else:
            base[key] = draw(JSON)
    if draw(st.booleans()):
        base[draw(TEXT)] = draw(JSON)
    return base


def file_text(rows: list[dict[str, Any]], raw: str | None) -> str:
    lines = [json.dumps(r, ensure_ascii=False) for r in rows]
    if raw is not None:
        lines.insert(len(lines) // 2, raw)
    return "\n".join(lines).replace(json.dumps(HUGE), "9" * 4301)


def counts(project: Project) -> tuple[int, ...]:
    return (
        Document.objects.filter(project=project).count(),
        Claim.objects.filter(claim_list__document__project=project).count(),
        Evidence.objects.filter(claim__claim_list__document__project=project).count(),
        Segment.objects.filter(document__project=project).count(),
        Verdict.objects.filter(system__project=project).count(),
    )


def check(text: str | bytes, fmt: str, **options: str) -> None:
    project = Project.objects.create(name="fuzz")
    try:
        import_file(project=project, text=text, file="fuzz.jsonl", fmt=fmt, **options)
    except ImportFailed as e:
        assert e.errors and counts(project) == (0, 0, 0, 0, 0)
        return
    before = counts(project)
    again = import_file(project=project, text=text, file="fuzz.jsonl", fmt=fmt, **options)
    assert counts(project) == before
    assert (
        again.documents_created,
        again.claims_created,
        again.evidence_created,
        again.segments_created,
        again.verdicts_created,
    ) == (0, 0, 0, 0, 0)


# Derandomized or not as the loaded profile says (tests/conftest.py: "ci" when CI=true)
FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("fmt", sorted(BASES))
def test_no_record_makes_an_import_crash(db: None, fmt: str) -> None:
    @FUZZ
    @given(
        rows=st.lists(record(fmt), min_size=1, max_size=3),
        raw=st.none() | TEXT,
        detect=st.booleans(),
    )
    def run(rows: list[dict[str, Any]], raw: str | None, detect: bool) -> None:
        check(file_text(rows, raw), "auto" if detect else fmt)

    run()


MAPPED = {
    "id": "a",
    "response": "A. B.",
    "claims": ["A.", "B."],
    "labels": [True, False],
    "sentences": [
        {"text": "A.", "claims": [{"claim": "A.", "evidence": [{"url": "https://e.org"}]}]}
    ],
    "abstained": False,
}
EXPRESSION = (
    st.sampled_from(
        [
            "response",
            "id",
            "@",
            "claims",
            "labels",
            "sentences",
            "text",
            "claim",
            "evidence",
            "url",
            "abstained",
            "zip(claims, labels)",
            "zip(claims)",
            "zip(claims, response)",
            "[0]",
            "[1]",
            "abs(response)",
            "response || ''",
            "length(claims)",
            "`null`",
            "`[1, 2]`",
            "'x'",
            "(" * 3000 + "id" + ")" * 3000,
            # what JMESPath gives that is not JSON, and its functions' odd results
            "to_number('nan')",
            "to_number('-inf')",
            "`1e400`",
            "[to_number('nan')]",
            "ceil(to_number('nan'))",
            "floor(`1e400`)",
            "sort_by(claims, &@)",
            "max_by(sentences, &text)",
            "map(&text, sentences)",
        ]
    )
    | TEXT
)
# An expression reference (`&expr`: a jmespath.visitor._Expression, not a JSON value)
# alone, in a list or an object, through a function or a comparison
REFERENCE = st.builds(
    lambda wrap, name: wrap.replace("$", "&" + name),
    st.sampled_from(
        [
            "$",
            "[$]",
            "{a: $}",
            "[[`1`, $]]",
            "not_null($)",
            "to_string($)",
            "to_number($)",
            "to_array($)",
            "[$][0]",
            "$ || 'x'",
            "[?@ == $]",
            "length([$])",
            "contains([$], $)",
        ]
    ),
    st.sampled_from(["id", "@", "response", "claims", "[0]"]),
)
EXPRESSION = EXPRESSION | REFERENCE
LEVELS = {"claims": mapped.KEYS["claims"], "segments": mapped.KEYS["segments"]}


@st.composite
def mapping(draw: st.DrawFn) -> dict[str, Any]:
    """A mapping of some keys of every level (names or expressions), maybe a key that is
    none, maybe a values table."""

    def level(keys: tuple[str, ...], where: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in draw(st.lists(st.sampled_from(keys), max_size=5, unique=True)):
            path = f"{where}.{key}" if where else key
            if path in LEVELS:
                out[key] = level(LEVELS[path], path)
            elif path == "claims.evidence":
                out[key] = level(mapped.KEYS[path], path)
            elif path in mapped.NAMES:
                out[key] = draw(st.sampled_from(["x", "refuse", "replace"]) | TEXT)
            elif path == "values":
                out[key] = draw(st.dictionaries(st.sampled_from(["true", "false", "a"]), TEXT))
            else:
                out[key] = draw(EXPRESSION)
        return out

    out = level(mapped.KEYS[""], "")
    out.setdefault("response", draw(EXPRESSION))
    if draw(st.booleans()):
        out[draw(TEXT)] = draw(JSON)
    return out


@FUZZ
@given(rows=st.lists(record("mapping"), min_size=1, max_size=3), spec=mapping())
# issue 36: the expression reference reached json.dumps in the error message
@example(rows=[MAPPED], spec={"response": "&id"})
@example(rows=[MAPPED], spec={"response": "response", "claims": {"items": "[&id]", "text": "@"}})
@example(rows=[MAPPED], spec={"response": "to_string(&id)"})  # a new address each run
@example(rows=[MAPPED], spec={"response": "ceil(to_number('nan'))"})  # ValueError
def test_no_mapping_makes_an_import_crash(
    db: None, rows: list[dict[str, Any]], spec: dict[str, Any]
) -> None:
    check(file_text(rows, None), "mapping", mapping=json.dumps(spec))


@FUZZ
@given(data=st.binary(max_size=200))
def test_no_bytes_make_an_import_crash(db: None, data: bytes) -> None:
    check(data, "auto")


def test_the_fuzz_strategies_reach_accepted_files(db: None) -> None:
    """Guard: every base record imports, so the fuzz tests explore past the first check."""
    for fmt, base in BASES.items():
        project = Project.objects.create(name=fmt)
        summary = import_file(project=project, text=json.dumps(base), file=f"{fmt}.jsonl", fmt=fmt)
        assert summary.documents_created == 1, fmt
    spec = {"response": "response", "claims": {"items": "zip(claims, labels)", "text": "[0]"}}
    summary = import_file(
        project=Project.objects.create(name="mapped"),
        text=json.dumps(MAPPED),
        file="m.jsonl",
        mapping=json.dumps(spec),
    )
    assert (summary.documents_created, summary.claims_created) == (1, 2)


def test_the_long_fuzz_bench_runs() -> None:
    # The bench's child pytest on its own SQLite test database: with this session's
    # DATABASE_URL it would create PostgreSQL's "test_<name>" again, the database this
    # session is using (it dropped it at its end: the PostgreSQL pass's teardown then found
    # no test database).
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "bench/import_fuzz.py", "--examples", "3"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fuzz: 3 examples per test" in done.stdout and "no crash" in done.stdout
