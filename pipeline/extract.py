"""Claim extraction: parse the extractor's answer (pure) and make the calls (async)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from pipeline.llm import ChatResult, LLMClient, LLMError
from pipeline.prompts import atomic_messages, extraction_messages
from pipeline.prompts.folder import PromptDir
from pipeline.split import (
    PYSBD,
    line_splitter,
    reference_windows,
    split_paragraphs,
    windows_for,
)
from pipeline.types import Claim, SentenceClaims, Usage, Window

NO_CLAIM = "No verifiable claim."

_NO_CLAIM_RE = re.compile(r"^\W*no verifiable (claim|fact)s?\W*$", re.IGNORECASE)
# Bullets and list numbers need a space after them, so "3.5 million" keeps its number.
_BULLET_RE = re.compile(r"^\s*(?:[-*•·–—]+\s*|\(?\d{1,3}[.)]\s+)")
_NOTE_RE = re.compile(r"^\W*(note|notes|explanation|justification)\s*:", re.IGNORECASE)
_HEADER_RE = re.compile(
    r"^\W*(facts|claims|atomic facts|verifiable claims)\s*:?\s*$", re.IGNORECASE
)


def parse_claims(raw: str) -> list[str]:
    """Claims in an extractor answer, in order, without bullets, notes or duplicates.

    An answer that only says "No verifiable claim." gives []. Lines the model adds around
    the list (a "Facts:" header, a "Here are the facts:" lead-in, a "Note: ..." paragraph)
    are dropped; a note ends the list because models put their notes last.
    """
    claims: list[str] = []
    for line in raw.replace("\r", "").split("\n"):
        line = line.strip()
        if not line or _HEADER_RE.match(line):
            continue
        if _NOTE_RE.match(line):
            break
        bulleted = bool(_BULLET_RE.match(line))
        text = _BULLET_RE.sub("", line, count=1) if bulleted else line
        text = text.strip().strip("*_").strip().strip('"').strip()
        # A lead-in sentence ("Here are the facts:") is not a claim.
        if not text or _NO_CLAIM_RE.match(text) or (not bulleted and text.endswith(":")):
            continue
        if text not in claims:
            claims.append(text)
    return claims


def normalise(claim: str) -> str:
    return " ".join(claim.lower().split()).rstrip(".")


def dedupe(sentences: list[SentenceClaims]) -> list[Claim]:
    """Unique claims of a response; each keeps the first sentence it was extracted from."""
    seen: set[str] = set()
    claims = []
    for s in sentences:
        for text in s.claims:
            key = normalise(text)
            if key not in seen:
                seen.add(key)
                claims.append(Claim(text=text, sentence_index=s.index, sentence=s.text))
    return claims


def reference_facts(raw: str) -> list[str]:
    """The claims in an extractor answer as the released VeriScore reads them
    (claim_extractor.py fact_extractor and its de-duplication loop): nothing when the
    answer contains "No verifiable claim."; else each line stripped, every "- " in it
    removed, a leading number dropped; empty lines and lines starting "Note:" skipped.
    A line may keep a space that followed its number, as there: see reference_dedupe."""
    if not raw or NO_CLAIM in raw:
        return []
    lines = [re.sub(r"^\d+\.?\s", "", x.strip().replace("- ", "")) for x in raw.split("\n")]
    return [x for x in lines if x.strip() and not x.startswith("Note:")]


def reference_dedupe(sentences: list[SentenceClaims]) -> list[Claim]:
    """The released code's all_claims: a claim is new unless the same string came before.
    As there, the string is compared before it is stripped and kept stripped, so "1.  X"
    after "X" is a second X."""
    seen: list[str] = []
    claims = []
    for s in sentences:
        for text in s.claims:
            if text not in seen:
                seen.append(text.strip())
                claims.append(Claim(text=text.strip(), sentence_index=s.index, sentence=s.text))
    return claims


def atomic_units(response: str, splitter: str = PYSBD) -> list[Window]:
    """The baseline sees each sentence alone, so its window is the sentence itself."""
    sentences = [s for para in split_paragraphs(response, line_splitter(splitter)) for s in para]
    return [Window(i, s, s) for i, s in enumerate(sentences)]


def plan(
    response: str,
    question: str | None,
    extractor: str,
    prompts: PromptDir | None = None,
    *,
    reference: Callable[[str], list[str]] | None = None,
    splitter: str = PYSBD,
) -> list[tuple[Window, list[dict[str, str]]]]:
    """The extraction calls one response needs: (window, messages) per sentence. With
    `prompts` (a --prompt-dir), the VeriScore extractor's messages come from its templates.
    With `reference` (a sentence splitter), the windows are the released code's."""
    if reference is not None:
        if prompts is None:
            raise ValueError("the reference mode reads its templates from a --prompt-dir")
        windows = reference_windows(response, question, reference(response))
        return [(w, prompts.extraction_messages(w, qa=bool(question))) for w in windows]
    if extractor == "atomic":
        return [(w, atomic_messages(w.sentence)) for w in atomic_units(response, splitter)]
    qa = bool(question and question.strip())
    render = prompts.extraction_messages if prompts else extraction_messages
    return [(w, render(w, qa=qa)) for w in windows_for(response, question, splitter)]


async def extract_claims(
    response: str,
    question: str | None,
    *,
    llm: LLMClient,
    extractor: str = "veriscore",
    model: str | None = None,
    usage: Usage,
    errors: list[str],
    prompts: PromptDir | None = None,
    reference: Callable[[str], list[str]] | None = None,
    seed: int | None = None,
    temperature: float = 0.0,
    splitter: str = PYSBD,
) -> list[SentenceClaims]:
    """One call per sentence, all at once; the LLM client bounds the concurrency.
    With `reference` (the splitter), windows and claims are the released code's."""
    parse = reference_facts if reference is not None else parse_claims

    async def one(window: Window, messages: list[dict[str, str]]) -> SentenceClaims:
        try:
            result: ChatResult = await llm.chat(
                messages, model=model, temperature=temperature, seed=seed
            )
        except LLMError as e:
            errors.append(f"extraction of sentence {window.index} failed: {e}")
            return SentenceClaims(window.index, window.sentence, [], "", failed=True)
        result.add_to(usage)
        return SentenceClaims(window.index, window.sentence, parse(result.text), result.text)

    calls = plan(response, question, extractor, prompts, reference=reference, splitter=splitter)
    return list(await asyncio.gather(*(one(w, m) for w, m in calls)))
