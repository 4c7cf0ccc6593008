from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pipeline.cache import Cache
from pipeline.fakes import FakeSerper
from pipeline.search import BM25Searcher, SearchError, SerperSearcher

from .conftest import FIXTURES

RECORDED = json.loads((FIXTURES / "search" / "search_cache_ee40f6d.json").read_text())


def search(searcher: object, query: str, n: int = 10) -> tuple[list, bool]:
    async def go() -> tuple[list, bool]:
        try:
            return await searcher.search(query, n)  # type: ignore[attr-defined]
        finally:
            await searcher.aclose()  # type: ignore[attr-defined]

    return asyncio.run(go())


def serper(server: FakeSerper, **kw: object) -> SerperSearcher:
    # a deadline far from anything a loaded machine takes to answer: a guard, not a timing
    return SerperSearcher(api_key="k", base_url=server.url, backoff=0.0, timeout=60.0, **kw)  # type: ignore[arg-type]


def test_it_returns_title_snippet_and_link_of_real_recorded_results(
    fake_serper: FakeSerper,
) -> None:
    query = next(q for q, v in RECORDED.items() if len(v.get("organic", [])) == 10)
    evidence, cached = search(serper(fake_serper), query, 5)
    assert not cached
    assert [e.rank for e in evidence] == [1, 2, 3, 4, 5]
    first = RECORDED[query]["organic"][0]
    assert (evidence[0].title, evidence[0].snippet, evidence[0].link) == (
        first["title"],
        first["snippet"],
        first["link"],
    )
    body = fake_serper.requests[0]["body"]
    assert body == {"q": query, "num": 5}


def test_search_answers_are_cached(fake_serper: FakeSerper, tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c.sqlite")
    search(serper(fake_serper, cache=cache), "Ada Lovelace was born in 1815.")
    evidence, cached = search(serper(fake_serper, cache=cache), "Ada Lovelace was born in 1815.")
    assert cached and evidence
    assert len(fake_serper.requests) == 1


@pytest.mark.parametrize("fault", ["429", "500", "garbage", "timeout"])
def test_a_failing_search_raises_search_error_after_retries(fault: str) -> None:
    # Only the hang needs a short deadline (1 s against 3 s); for the other faults the
    # deadline is far from anything a loaded machine takes to answer, so each attempt
    # ends with the fault, never with the deadline.
    with FakeSerper(fault_rate=1.0, faults=(fault,), hang=3.0) as server:
        searcher = SerperSearcher(
            api_key="k",
            base_url=server.url,
            backoff=0.0,
            timeout=1.0 if fault == "timeout" else 60.0,
            max_retries=2,
        )
        with pytest.raises(SearchError):
            search(searcher, "anything")
        assert len(server.requests) == 3


def test_a_missing_key_is_an_error_not_a_crash(fake_serper: FakeSerper) -> None:
    with pytest.raises(SearchError, match="no Serper API key"):
        search(SerperSearcher(api_key=None, base_url=fake_serper.url), "q")


def test_a_client_error_is_not_retried(fake_serper: FakeSerper) -> None:
    with pytest.raises(SearchError, match="404"):
        search(SerperSearcher(api_key="k", base_url=fake_serper.url + "/nope", backoff=0.0), "q")
    assert len(fake_serper.requests) == 1


def test_bm25_finds_the_matching_passage(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    docs = [
        {
            "title": "Ada Lovelace",
            "text": "Ada Lovelace was an English mathematician born in 1815 in London.",
            "url": "https://a",
        },
        {"title": "Danube", "text": "The Danube flows into the Black Sea.", "url": "https://d"},
        {"title": "Rome", "text": "Rome is the capital of Italy.", "url": "https://r"},
    ]
    corpus.write_text("\n".join(json.dumps(d) for d in docs))
    evidence, cached = search(BM25Searcher(corpus), "Where does the Danube flow?", 2)
    assert not cached
    assert (
        evidence[0].title == "Danube" and evidence[0].link == "https://d" and evidence[0].rank == 1
    )
    assert "Black Sea" in evidence[0].snippet
    assert len(evidence) == 1  # documents sharing no word with the query are not results


def test_the_timeout_is_a_total_deadline_against_a_server_that_drips_bytes() -> None:
    with FakeSerper(drip=0.5) as server:
        searcher = SerperSearcher(
            api_key="k", base_url=server.url, backoff=0.0, timeout=1.0, max_retries=0
        )
        with pytest.raises(SearchError, match="no answer within 1 s"):
            search(searcher, "anything")
        assert len(server.requests) == 1
