"""The reference mode's released rules, each on its own (the whole against the released
code itself: test_reference_parity.py): the verdict rule, the Serper body, empty
responses, and the figures utils.get_veriscore prints."""

from __future__ import annotations

import asyncio

import pytest

from pipeline.fakes import FakeSerper
from pipeline.run import is_abstained
from pipeline.score import format_table, score_results
from pipeline.search import SerperSearcher
from pipeline.types import SUPPORTED, UNSUPPORTED, Claim, ClaimResult, ResponseResult, Verdict
from pipeline.verify import parse_verdict, released_verdict


@pytest.mark.parametrize(
    ("answer", "ours", "released"),
    [
        ("###Supported.###", "supported", "supported"),
        ("  ###Supported.###\n", "supported", "supported"),  # the released code strips
        ("###Supported###", "supported", "supported"),
        ("It is in result 2.\n\n###Supported.###", "supported", None),  # reasons first
        ("###Supported.### It is in result 2.", "supported", "supported"),  # appended
        ("###Supported###\nIt is in result 2.", "supported", None),  # appended, no stop
        ("The claim reads as supported: result 2.", None, None),  # no label
        ("###Unsupported.###", "unsupported", "unsupported"),
        ("###Contradicted.###", "unsupported", "unsupported"),  # binary: not supported
    ],
)
def test_the_released_verdict_rule(answer: str, ours: str | None, released: str | None) -> None:
    assert parse_verdict(answer, "binary") == ours
    assert released_verdict(answer, "binary") == released
    assert (released_verdict(answer, "ternary") == SUPPORTED) == (released == SUPPORTED)


def test_the_released_code_abstains_no_empty_response() -> None:
    for text in ("", "  \n"):
        assert is_abstained(text) and not is_abstained(text, "veriscore")
    assert is_abstained(" Sorry, I can't do that. ", "veriscore")


def test_the_reference_search_body_has_no_num() -> None:
    async def search(n: int | None) -> int:
        searcher = SerperSearcher(api_key="k", base_url=serper.url)
        try:
            evidence, _ = await searcher.search("The Danube flows into the Black Sea", n)
        finally:
            await searcher.aclose()
        return len(evidence)

    with FakeSerper() as serper:
        assert (asyncio.run(search(None)), asyncio.run(search(3))) == (5, 3)  # its default: all
        bodies = [r["body"] for r in serper.requests]
    assert bodies == [
        {"q": "The Danube flows into the Black Sea"},
        {"q": "The Danube flows into the Black Sea", "num": 3},
    ]


def result(
    n: int, domain: str, model: str, labels: list[str], abstained: bool = False
) -> ResponseResult:
    claims = [
        ClaimResult(Claim(f"c{n}-{i}", i, ""), verdict=Verdict(label, "", True))
        for i, label in enumerate(labels)
    ]
    return ResponseResult(
        str(n), "text", None, model, domain, abstained, "veriscore", "", "", "", "binary",
        "serper", claims=claims,
    )  # fmt: skip


def test_the_released_figures_by_hand() -> None:
    """utils.get_stats and get_avg_numbers worked by hand. Domain d: claim counts
    (2, 0, 4, 1) sorted (0, 1, 2, 4): K_median = element 2 = 2, K_max = 4. The claimless
    response counts for K and is left out of the means (the released code divides by 0).
    Model a: (S, C) = (1, 2): P 0.5, R@2 0.5, F1 0.5; R@4 0.25, F1 1/3.
    (4, 4): P 1, R@2 1, F1 1; R@4 1, F1 1. Means: 0.75 and 2/3.
    Model b: (0, 1): F1 0 at both K."""
    s, u = SUPPORTED, UNSUPPORTED
    results = [
        result(0, "d", "a", [], abstained=True),
        result(1, "d", "a", [s, u]),
        result(2, "d", "a", []),
        result(3, "d", "a", [s, s, s, s]),
        result(4, "d", "b", [u]),
    ]
    table = score_results(results, mode="reference")
    released = table.released
    assert released["k"] == {"d": {"K_median": 2, "K_max": 4}}
    assert released["printed"] == (
        "[d-a] \nF1@k median: 0.750, F1@k max: 0.667\n[d-b] \nF1@k median: 0.000, F1@k max: 0.000"
    )
    assert released["errors"] == [
        {"id": "0", "error": "UnboundLocalError"},  # an abstention first
        {"id": "2", "error": "ZeroDivisionError"},
    ]
    row_a = table.rows[0]
    assert (row_a.responses, row_a.claimless, row_a.k) == (2, 1, 2.0)
    assert row_a.veriscore == pytest.approx(75.0)
    assert "released: ZeroDivisionError on 1 response(s) (2)" in format_table(table)
    assert score_results(results).released == {}  # the default mode has none
