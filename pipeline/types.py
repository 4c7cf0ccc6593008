"""Plain dataclasses passed between the pipeline steps and handed to callers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Verdict labels. "unparsed" and "error" are never counted as supported or unsupported:
# they are left out of the precision denominator and reported on their own.
SUPPORTED = "supported"
UNSUPPORTED = "unsupported"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
UNPARSED = "unparsed"
ERROR = "error"


@dataclass
class ResponseInput:
    """One response to evaluate. `domain` is VeriScore's `prompt_source`."""

    id: str
    response: str
    question: str | None = None
    model: str = ""
    domain: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Window:
    """The text shown to the extractor for one sentence (VeriScore's sliding window)."""

    index: int
    sentence: str
    snippet: str


@dataclass
class SentenceClaims:
    index: int
    text: str
    claims: list[str]
    raw_output: str = ""
    failed: bool = False


@dataclass
class Claim:
    text: str
    sentence_index: int
    sentence: str


@dataclass
class Evidence:
    rank: int
    title: str
    snippet: str
    link: str


@dataclass
class Verdict:
    label: str
    raw_output: str
    parsed: bool


@dataclass
class ClaimResult:
    claim: Claim
    evidence: list[Evidence] = field(default_factory=list)
    verdict: Verdict | None = None
    search_error: str | None = None


@dataclass
class Usage:
    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cached_prompt_tokens: int = 0  # of prompt_tokens, read from the provider's prompt cache
    search_calls: int = 0
    cached_search_calls: int = 0

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.cached_prompt_tokens += other.cached_prompt_tokens
        self.search_calls += other.search_calls
        self.cached_search_calls += other.cached_search_calls


@dataclass
class ResponseResult:
    """Everything the pipeline learnt about one response, with how it was produced."""

    id: str
    response: str
    question: str | None
    model: str
    domain: str
    abstained: bool
    extractor: str
    extraction_model: str
    verification_model: str
    prompt_version: str
    label_mode: str
    retriever: str
    sentences: list[SentenceClaims] = field(default_factory=list)
    claims: list[ClaimResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def count(self, label: str) -> int:
        return sum(1 for c in self.claims if c.verdict is not None and c.verdict.label == label)

    @property
    def n_claims(self) -> int:
        return len(self.claims)

    @property
    def n_supported(self) -> int:
        return self.count(SUPPORTED)

    @property
    def failed_units(self) -> int:
        """Calls that failed after their retries: sentences not extracted, claims not
        searched or not verified. A failure is never an answer ("no claim", unsupported)."""
        return sum(s.failed for s in self.sentences) + sum(
            1
            for c in self.claims
            if c.search_error is not None or (c.verdict is not None and c.verdict.label == ERROR)
        )

    @property
    def incomplete(self) -> bool:
        """Some of its calls failed: its claim count and score would be wrong, so scoring
        leaves it out (and says how many it left out)."""
        return any(s.failed for s in self.sentences) or any(  # failed_units > 0, sooner
            c.search_error is not None or (c.verdict is not None and c.verdict.label == ERROR)
            for c in self.claims
        )

    @property
    def n_unverified(self) -> int:
        """Claims without a usable verdict: unparsed answers, failed calls, not yet verified."""
        return sum(
            1 for c in self.claims if c.verdict is None or c.verdict.label in (UNPARSED, ERROR)
        )


def result_from_dict(data: dict[str, Any]) -> ResponseResult:
    """Inverse of dataclasses.asdict for ResponseResult (used to resume from JSONL files)."""
    d = dict(data)
    d["sentences"] = [SentenceClaims(**s) for s in d.get("sentences", [])]
    claims = []
    for c in d.get("claims", []):
        claims.append(
            ClaimResult(
                claim=Claim(**c["claim"]),
                evidence=[Evidence(**e) for e in c.get("evidence", [])],
                verdict=Verdict(**c["verdict"]) if c.get("verdict") else None,
                search_error=c.get("search_error"),
            )
        )
    d["claims"] = claims
    d["usage"] = Usage(**d.get("usage", {}))
    return ResponseResult(**d)
