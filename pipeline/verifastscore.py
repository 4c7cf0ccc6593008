"""VeriFastScore (Rajendhran et al., EMNLP Findings 2025): one call per response.

Evidence is retrieved per sentence (the sentence is the query); then one call extracts and
verifies every claim of the response at once, laid out as the released code lays it out:

    user:      ### Response\\n<response>\\n### Evidence\\n<evidence>
               (each sentence's snippets joined by \\n, sentences by \\n\\n)
    assistant: ### Facts\\n<claim>: Supported|Unsupported   (one per line)
               or "No verifiable claim."

The released model was trained with its own system message. It is read at run time from
`system_message.txt` in `--prompt-dir` (the released text is not in this code); without a
folder we send our own DEFAULT_SYSTEM. Any OpenAI-compatible server (e.g. vLLM serving the
released model) answers the call. Results are ordinary ResponseResults: one SentenceClaims
per sentence (with its evidence query), the claims with their verdicts, so they are scored,
written and ingested like VeriScore's.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
from pathlib import Path

from pipeline.llm import LLMClient, LLMError
from pipeline.search import Searcher, SearchError
from pipeline.split import split_paragraphs
from pipeline.types import (
    SUPPORTED,
    UNSUPPORTED,
    Claim,
    ClaimResult,
    Evidence,
    ResponseResult,
    SentenceClaims,
    Verdict,
)

SYSTEM_FILE = "system_message.txt"
VERSION = "verifastscore-v1"
SEARCH_N = 5  # the released code's search_res_num
DEFAULT_SYSTEM = (
    "You are given a response and evidence retrieved for each of its sentences. List every "
    "verifiable factual claim the response makes, each rewritten to stand on its own, and "
    "judge each against the evidence. Answer with '### Facts' on the first line, then one "
    "claim per line as '<claim>: Supported' or '<claim>: Unsupported'. If the response makes "
    "no verifiable claim, answer '### Facts' and then 'No verifiable claim.'"
)
_JUDGMENT = re.compile(r"(.+): (Supported|Unsupported)\n?")  # the released code's pattern


@functools.cache
def system_message(prompt_dir: str | None) -> str:
    if not prompt_dir:
        return DEFAULT_SYSTEM
    file = Path(prompt_dir) / SYSTEM_FILE
    if not file.is_file():
        raise ValueError(f"--prompt-dir {prompt_dir}: {SYSTEM_FILE} is missing (VeriFastScore)")
    return file.read_text(encoding="utf-8")


def prompt_version(prompt_dir: str | None) -> str:
    if not prompt_dir:
        return VERSION
    digest = hashlib.sha256(system_message(prompt_dir).encode()).hexdigest()[:10]
    return f"{VERSION}:dir:{Path(prompt_dir).name}:{digest}"


def sentences_of(response: str) -> list[str]:
    return [s for para in split_paragraphs(response) for s in para]


def evidence_text(per_sentence: list[list[Evidence]]) -> str:
    # The released code shows a result's snippet, or its title when it has none.
    return "\n\n".join(
        "\n".join(e.snippet if e.snippet else e.title for e in found) for found in per_sentence
    )


def messages(response: str, evidence: str, system: str) -> list[dict[str, str]]:
    user = "### Response\n" + response.strip() + "\n### Evidence\n" + evidence
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_facts(raw: str) -> list[tuple[str, str]] | None:
    """(claim, label) pairs; [] for "No verifiable claim."; None for an answer in neither
    form (an unparsed answer is not "no claim")."""
    found = _JUDGMENT.findall(raw)
    if found and "no verifiable claim" not in found[0][0].lower():
        return [
            (claim.strip(), SUPPORTED if label == "Supported" else UNSUPPORTED)
            for claim, label in found
        ]
    if "no verifiable claim" in raw.lower():
        return []
    return None


async def process(
    result: ResponseResult,
    *,
    llm: LLMClient,
    searcher: Searcher,
    prompt_dir: str | None,
    model: str | None = None,
    search_n: int = SEARCH_N,
) -> None:
    """Retrieve per sentence, then extract and verify in one call, filling `result`."""
    if result.abstained:
        return
    sentences = sentences_of(result.response)
    result.sentences = [SentenceClaims(index=i, text=s, claims=[]) for i, s in enumerate(sentences)]

    async def search(sentence: str) -> list[Evidence]:
        evidence, cached = await searcher.search(sentence, search_n)
        if cached:
            result.usage.cached_search_calls += 1
        elif searcher.name != "bm25":
            result.usage.search_calls += 1
        return evidence

    found = await asyncio.gather(*(search(s) for s in sentences), return_exceptions=True)
    for sent, hit in zip(result.sentences, found, strict=True):
        if isinstance(hit, SearchError):
            sent.failed = True
            result.errors.append(str(hit))
        elif isinstance(hit, BaseException):
            raise hit
    if any(s.failed for s in result.sentences):
        return  # without all the evidence the one call would judge on part of it
    per_sentence = [hit for hit in found if isinstance(hit, list)]
    prompt = messages(result.response, evidence_text(per_sentence), system_message(prompt_dir))
    try:
        answer = await llm.chat(prompt, model=model, temperature=0.0, max_tokens=2048)
    except LLMError as e:
        result.errors.append(f"verifastscore call for {result.id!r} failed: {e}")
        for sent in result.sentences:
            sent.failed = True
        return
    answer.add_to(result.usage)
    parsed = parse_facts(answer.text)
    raw = answer.text
    if parsed is None:
        for sent in result.sentences:
            sent.failed = True
            sent.raw_output = raw
        result.errors.append(f"verifastscore answer for {result.id!r} has no facts: {raw[:80]!r}")
        return
    evidence = [e for hit in per_sentence for e in hit]
    for text, label in parsed:
        where = _sentence_for(text, sentences)
        result.sentences[where].claims.append(text)
        result.claims.append(
            ClaimResult(
                claim=Claim(text=text, sentence_index=where, sentence=sentences[where]),
                evidence=evidence,
                verdict=Verdict(label=label, raw_output=raw, parsed=True),
            )
        )
    for sent in result.sentences:
        sent.raw_output = raw


def _sentence_for(claim: str, sentences: list[str]) -> int:
    """The sentence sharing most words with the claim (the model does not say which)."""
    words = set(re.findall(r"\w+", claim.lower()))
    overlaps = [len(words & set(re.findall(r"\w+", s.lower()))) for s in sentences]
    return max(range(len(sentences)), key=lambda i: overlaps[i]) if sentences else 0
