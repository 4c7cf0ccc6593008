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
from collections.abc import Callable
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
SEARCH_N = 5  # our default: results per sentence shown to the model
# The released code (verifastscore 0.1.5) joins every organic result of the plain query
# (Serper gives 10), queries at most 2048 characters, samples at temperature 0.7 with up
# to 2048 new tokens, and scores with a fixed K of 17 and recall = claims / K.
REFERENCE_SEARCH_N = None  # Serper's default (10): the released body has no "num"
REFERENCE_TEMPERATURE = 0.7
REFERENCE_K = 17
MAX_QUERY = 2048
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


def reference_evidence_text(per_sentence: list[list[Evidence]]) -> str:
    # Every result's snippet, "" when it has none (its SearchAPI always sets the key).
    return "\n\n".join("\n".join(e.snippet for e in found) for found in per_sentence)


def reference_facts(raw: str) -> list[tuple[str, str]]:
    """As the released code reads an answer: every `(.+): (Supported|Unsupported)` match,
    none when there is no match or the first names "No verifiable claim"."""
    found = _JUDGMENT.findall(raw)
    if not found or "no verifiable claim" in found[0][0].lower():
        return []
    return [(claim, SUPPORTED if label == "Supported" else UNSUPPORTED) for claim, label in found]


def released_f1(supported: int, claims: int, k: float = REFERENCE_K) -> float:
    """The released score of one response: P = S / |C|, R = min(1, |C| / K), their F1;
    0 without a claim."""
    if claims == 0:
        return 0.0
    precision, recall = supported / claims, min(1.0, claims / k)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def released_scores(results: list[ResponseResult]) -> dict[str, float | None]:
    """The mean released score per "model / domain" over responses neither abstained nor
    incomplete; None where there is none."""
    groups: dict[str, list[float]] = {}
    for r in results:
        scores = groups.setdefault(f"{r.model} / {r.domain}", [])
        if not r.abstained and not r.incomplete:
            scores.append(released_f1(r.count(SUPPORTED), r.n_claims))
    return {g: sum(s) / len(s) if s else None for g, s in sorted(groups.items())}


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
    search_n: int | None = SEARCH_N,
    reference: Callable[[str], list[str]] | None = None,
) -> None:
    """Retrieve per sentence, then extract and verify in one call, filling `result`.
    With `reference` (the sentence splitter), as the released code does it: the whole
    response split, each distinct sentence searched once, all its results joined, the
    call sampled at temperature 0.7 for every response (its own call, never shared), its
    prompt without the chat template's generation prompt (`add_generation_prompt: false`,
    which vLLM reads), and evidence already in the input row used as there: a row with
    `claim_search_results` ({sentence: [{title, snippet, link}]}) is not searched, a row
    with `evidence` (text) is shown that text."""
    if result.abstained:
        return
    sentences = reference(result.response.strip()) if reference else sentences_of(result.response)
    result.sentences = [SentenceClaims(index=i, text=s, claims=[]) for i, s in enumerate(sentences)]
    given = _row_evidence(result) if reference else None
    if isinstance(given, str):
        result.errors.append(given)
        for sent in result.sentences:
            sent.failed = True
        return

    async def search(sentence: str) -> list[Evidence]:
        evidence, cached = await searcher.search(sentence, search_n)
        if cached:
            result.usage.cached_search_calls += 1
        elif searcher.name != "bm25":
            result.usage.search_calls += 1
        return evidence

    queries = list(dict.fromkeys(sentences)) if reference else sentences
    if given is not None and given[0] is not None:
        queries = []  # the row's own results: the released code does not search
    found = await asyncio.gather(
        *(search(q[:MAX_QUERY] if reference else q) for q in queries), return_exceptions=True
    )
    for query, hit in zip(queries, found, strict=True):
        if isinstance(hit, SearchError):
            for sent in result.sentences:
                sent.failed = sent.failed or sent.text == query
            result.errors.append(str(hit))
        elif isinstance(hit, BaseException):
            raise hit
    if any(s.failed for s in result.sentences):
        return  # without all the evidence the one call would judge on part of it
    per_sentence = [hit for hit in found if isinstance(hit, list)]
    evidence_of = reference_evidence_text if reference else evidence_text
    text = evidence_of(per_sentence)
    if given is not None:
        per_sentence = given[0] if given[0] is not None else per_sentence
        text = given[1] if given[1] is not None else text
    prompt = messages(result.response, text, system_message(prompt_dir))
    temperature = REFERENCE_TEMPERATURE if reference else 0.0
    try:
        answer = await llm.chat(
            prompt, model=model, temperature=temperature, max_tokens=2048,
            extra={"add_generation_prompt": False} if reference else None,
            distinct=result.id if reference else None,
        )  # fmt: skip
    except LLMError as e:
        result.errors.append(f"verifastscore call for {result.id!r} failed: {e}")
        for sent in result.sentences:
            sent.failed = True
        return
    answer.add_to(result.usage)
    parsed = reference_facts(answer.text) if reference else parse_facts(answer.text)
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


def _row_evidence(
    result: ResponseResult,
) -> tuple[list[list[Evidence]] | None, str | None] | str | None:
    """The evidence an input row already holds (kept in its metadata by the reader):
    (results per sentence or None, evidence text or None); None when it holds none; an
    error message when it holds something the released code could not use."""
    results, text = result.metadata.get("claim_search_results"), result.metadata.get("evidence")
    if results is None and text is None:
        return None
    where = f"response {result.id!r}"
    if text is not None and not isinstance(text, str):
        return f"{where}: `evidence` must be text, not {type(text).__name__}"
    if results is None:
        return None, text
    if not isinstance(results, dict) or not all(isinstance(v, list) for v in results.values()):
        return f"{where}: `claim_search_results` must be {{sentence: [results]}}"
    per_sentence: list[list[Evidence]] = []
    for found in results.values():
        if not all(isinstance(r, dict) and ("snippet" in r or "title" in r) for r in found):
            return f"{where}: a `claim_search_results` result needs a snippet or a title"
        per_sentence.append(
            [
                Evidence(
                    i + 1,
                    str(r.get("title", "")),
                    str(r.get("snippet", "")),
                    str(r.get("link", "")),
                )
                for i, r in enumerate(found)
            ]
        )
    if text is None:  # as released: a result's snippet when it has the key, else its title
        text = "\n\n".join(
            "\n".join(str(r["snippet"] if "snippet" in r else r["title"]) for r in found)
            for found in results.values()
        )
    return per_sentence, text


def _sentence_for(claim: str, sentences: list[str]) -> int:
    """The sentence sharing most words with the claim (the model does not say which)."""
    words = set(re.findall(r"\w+", claim.lower()))
    overlaps = [len(words & set(re.findall(r"\w+", s.lower()))) for s in sentences]
    return max(range(len(sentences)), key=lambda i: overlaps[i]) if sentences else 0
