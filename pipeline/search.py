"""Evidence retrieval: Serper (Google) over HTTP, or BM25 over a local JSONL corpus.

This is the only module that calls a search API. A failed search raises SearchError,
which the run records against the claim and carries on.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any, Protocol

import httpx
from rank_bm25 import BM25Okapi

from pipeline.cache import Cache, make_key
from pipeline.types import Evidence

SERPER_URL = "https://google.serper.dev"


class SearchError(RuntimeError):
    pass


class Searcher(Protocol):
    name: str

    async def search(self, query: str, n: int | None) -> tuple[list[Evidence], bool]:
        """Top-n results for a query (None: the engine's default number, as the released
        VeriScore asks Serper), and whether they came from the cache."""
        ...

    async def aclose(self) -> None: ...


def evidence_from_serper(data: dict[str, Any], n: int | None) -> list[Evidence]:
    results: list[Evidence] = []
    for item in data.get("organic", [])[:n]:
        results.append(
            Evidence(
                rank=len(results) + 1,
                title=str(item.get("title", "")),
                snippet=str(item.get("snippet", "")),
                link=str(item.get("link", "")),
            )
        )
    return results


class SerperSearcher:
    name = "serper"

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str = SERPER_URL,
        cache: Cache | None = None,
        offline: bool = False,
        concurrency: int = 32,
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff: float = 1.0,
    ) -> None:
        self.api_key = api_key or ""
        self.base_url = base_url.rstrip("/")
        self.cache = cache
        self.offline = offline
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.retries = 0
        self.finished = 0  # searches that ended (answered, cached or failed)
        self._loop: asyncio.AbstractEventLoop | None = None

    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._http = httpx.AsyncClient(timeout=self.timeout)
            self._slots = asyncio.Semaphore(self.concurrency)

    async def search(self, query: str, n: int | None) -> tuple[list[Evidence], bool]:
        # The key leaves out the endpoint and the API key: the same query gets the same
        # answer wherever it was recorded, which is what lets recorded responses replay.
        request = {"engine": "serper", "query": query, "n": n}
        try:
            if self.cache is None:
                data, cached = await self._call(query, n), False
            else:
                data, cached = await self.cache.once(
                    make_key("search", request),
                    "search",
                    request,
                    lambda: self._call(query, n),
                    offline=self.offline,
                )
        finally:
            self.finished += 1
        return evidence_from_serper(data, n), cached

    async def _call(self, query: str, n: int | None) -> dict[str, Any]:
        if not self.api_key:
            raise SearchError("no Serper API key (set SERPER_API_KEY or --serper-key)")
        self._bind()
        attempt = 0
        while True:
            try:
                async with self._slots, asyncio.timeout(self.timeout):  # whole call, as in llm.py
                    r = await self._http.post(
                        f"{self.base_url}/search",
                        json={"q": query} if n is None else {"q": query, "num": n},
                        headers={"X-API-KEY": self.api_key},
                    )
                if 400 <= r.status_code < 500 and r.status_code not in (408, 429):
                    # A bad key or a bad request will not get better by asking again.
                    raise SearchError(f"Serper HTTP {r.status_code} for {query!r}: {r.text[:200]}")
                r.raise_for_status()
                data = r.json()
                if not isinstance(data, dict):
                    raise ValueError("Serper answer is not a JSON object")
                return {"organic": data.get("organic", [])}
            except (httpx.HTTPError, ValueError, TimeoutError) as e:
                if attempt >= self.max_retries:
                    what = (
                        f"no answer within {self.timeout:g} s" if isinstance(e, TimeoutError) else e
                    )
                    raise SearchError(f"search failed for {query!r}: {what}") from e
                attempt += 1
                self.retries += 1
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1) * random.uniform(0.5, 1.0))

    async def aclose(self) -> None:
        if self._loop is asyncio.get_running_loop():
            await self._http.aclose()
        self._loop = None


_WORD = re.compile(r"\w+")
_STOP = frozenset(
    "a an the of in on at to for and or but is are was were be been by with as from that this "
    "it its which who whom what when where how".split()
)


def tokenize(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


class BM25Searcher:
    """A local index for offline or knowledge-base evaluation (FActScore-style).

    Documents are cut into passages of about `passage_words` words, so that a result's
    snippet is the part of the document that matched, as a search engine's would be.
    """

    name = "bm25"

    def __init__(self, corpus: str | Path, *, passage_words: int = 100) -> None:
        self.passages: list[Evidence] = []
        with Path(corpus).open(encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                doc = json.loads(line)
                words = str(doc.get("text", "")).split()
                for start in range(0, max(len(words), 1), passage_words):
                    self.passages.append(
                        Evidence(
                            rank=0,
                            title=str(doc.get("title", "")),
                            snippet=" ".join(words[start : start + passage_words]),
                            link=str(doc.get("url", "")),
                        )
                    )
        if not self.passages:
            raise ValueError(f"BM25 corpus {corpus} has no documents")
        tokens = [tokenize(f"{p.title} {p.snippet}") for p in self.passages]
        self.vocab = [set(t) for t in tokens]
        self.index = BM25Okapi(tokens)

    async def search(self, query: str, n: int | None) -> tuple[list[Evidence], bool]:
        n = 10 if n is None else n
        words = tokenize(query)
        scores = self.index.get_scores(words)
        # Okapi IDF goes negative for words in most passages (always, in a tiny corpus),
        # so "shares a word with the query" decides what is a hit, not the score's sign.
        matching = [i for i in range(len(scores)) if self.vocab[i].intersection(words)]
        hits = sorted(matching, key=lambda i: -scores[i])[:n]
        return [
            Evidence(rank, self.passages[i].title, self.passages[i].snippet, self.passages[i].link)
            for rank, i in enumerate(hits, start=1)
        ], False

    async def aclose(self) -> None:
        return None
