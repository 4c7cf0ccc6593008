"""What a run will cost, before any call is made (`--estimate`).

Extraction is exact: the windows are known, so are the prompts and which of them are
already cached. Verification depends on how many claims extraction finds, so it is
projected from VeriScore's recorded gpt-4 calls (fixtures/llm): 0.86 claims per sentence
and about 15 output tokens per extraction answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipeline.cache import make_key
from pipeline.extract import plan
from pipeline.llm import (
    CACHE_MIN_TOKENS,
    LLMClient,
    chat_request,
    cost_usd,
    count_message_tokens,
    count_tokens,
    price,
)
from pipeline.prompts import verification_messages
from pipeline.prompts.folder import PromptDir
from pipeline.split import PYSBD
from pipeline.types import Evidence, ResponseInput

CLAIMS_PER_SENTENCE = 0.86
EXTRACTION_OUTPUT_TOKENS = 15
VERIFICATION_OUTPUT_TOKENS = 60  # reasoning, then ###Label###
TYPICAL_EVIDENCE = [
    Evidence(i, "A typical search result title - Site", "x " * 60, "https://example.org/page")
    for i in range(1, 6)
]


@dataclass(frozen=True)
class EstimateRow:
    stage: str
    model: str
    calls: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    exact: bool
    cached_tokens: int = 0  # of prompt_tokens, expected from the provider's prompt cache


def cacheable_prefix(a: list[dict[str, str]], b: list[dict[str, str]]) -> int:
    """Tokens at the start two prompts share, as the provider's prompt cache counts them
    (nothing below 1024 tokens, then in steps of 128)."""
    x = "".join(m["role"] + m["content"] for m in a)
    y = "".join(m["role"] + m["content"] for m in b)
    n, end = 0, min(len(x), len(y))
    while n < end and x[n : n + 1024] == y[n : n + 1024]:  # a block at a time, then by char
        n += 1024
    n = min(n, end)
    while n < end and x[n] == y[n]:
        n += 1
    tokens = count_tokens(x[:n]) if n else 0
    return tokens // 128 * 128 if tokens >= CACHE_MIN_TOKENS else 0


def estimate_run(
    inputs: list[ResponseInput],
    *,
    llm: LLMClient,
    extractor: str,
    label_mode: str,
    extraction_model: str | None = None,
    verification_model: str | None = None,
    evidence_in_prompt: int = 5,
    stages: tuple[str, ...] = ("extract", "verify"),
    claims: int | None = None,
    prompts: PromptDir | None = None,
    batch: bool = False,
    reference: Callable[[str], list[str]] | None = None,
    splitter: str = PYSBD,
    seed: int | None = None,
    temperature: float = 0.0,
) -> list[EstimateRow]:
    """`claims`: the known claim count when verifying an existing claims file.
    `reference`, `splitter`, `seed`, `temperature`: as the run makes its calls."""
    rows = []
    sentences = 0
    ex_model = extraction_model or llm.model
    if "extract" in stages:
        calls = cached = p_tokens = hits = 0
        first: list[dict[str, str]] | None = None
        for inp in inputs:
            calls_of = plan(
                inp.response,
                inp.question,
                extractor,
                prompts,
                reference=reference,
                splitter=splitter,
            )
            for _, messages in calls_of:
                sentences += 1
                request = chat_request(ex_model, messages, temperature, seed=seed)
                if llm.cache is not None and llm.cache.get(make_key("chat", request)) is not None:
                    cached += 1
                    continue
                calls += 1
                p_tokens += count_message_tokens(messages)
                if first is None:
                    first = messages
                else:
                    hits += cacheable_prefix(first, messages)
        c_tokens = calls * EXTRACTION_OUTPUT_TOKENS
        rows.append(
            EstimateRow(
                "extraction",
                ex_model,
                calls,
                cached,
                p_tokens,
                c_tokens,
                cost_usd(ex_model, p_tokens, c_tokens, cached_tokens=hits, batch=batch),
                True,
                hits,
            )
        )
    if "verify" in stages:
        v_model = verification_model or llm.model
        exact = claims is not None
        if claims is None:
            claims = round(sentences * CLAIMS_PER_SENTENCE)
        render = prompts.verification_messages if prompts else verification_messages
        typical = render(
            "A claim of about twelve words taken from a typical response.",
            TYPICAL_EVIDENCE[:evidence_in_prompt],
            mode=label_mode,
        )
        other = render("Another claim.", TYPICAL_EVIDENCE[:evidence_in_prompt], mode=label_mode)
        per_call = count_message_tokens(typical)
        p_tokens, c_tokens = claims * per_call, claims * VERIFICATION_OUTPUT_TOKENS
        hits = max(0, claims - 1) * cacheable_prefix(typical, other)
        rows.append(
            EstimateRow(
                "verification",
                v_model,
                claims,
                0,
                p_tokens,
                c_tokens,
                cost_usd(v_model, p_tokens, c_tokens, cached_tokens=hits, batch=batch),
                False,
                hits,
            )
        )
        rows.append(EstimateRow("search", "serper", claims, 0, 0, 0, 0.0, exact))
    return rows


def format_estimate(rows: list[EstimateRow]) -> str:
    head = (
        f"{'stage':<13} {'model':<22} {'calls':>7} {'cached':>7} {'in tok':>10} "
        f"{'cached in':>10} {'out tok':>9} {'USD':>9}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        mark = "" if r.exact else " ~"
        lines.append(
            f"{r.stage:<13} {r.model[:22]:<22} {r.calls:>7} {r.cached:>7} {r.prompt_tokens:>10} "
            f"{r.cached_tokens:>10} {r.completion_tokens:>9} {r.cost_usd:>9.4f}{mark}"
        )
    total = sum(r.cost_usd for r in rows)
    lines.append(f"total ~ ${total:.4f} (~: projected from the recorded claims-per-sentence rate)")
    unknown = sorted({r.model for r in rows if r.stage != "search" and price(r.model) is None})
    if unknown:
        lines.append(f"no price known for {', '.join(unknown)}: counted as $0")
    return "\n".join(lines)
