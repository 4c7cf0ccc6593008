"""Claim verification: parse the verifier's answer (pure) and make the call (async)."""

from __future__ import annotations

import re

from pipeline.llm import LLMClient, LLMError
from pipeline.prompts import verification_messages
from pipeline.prompts.folder import PromptDir
from pipeline.types import (
    CONTRADICTED,
    ERROR,
    INCONCLUSIVE,
    SUPPORTED,
    UNPARSED,
    UNSUPPORTED,
    Evidence,
    Usage,
    Verdict,
)

LABELS = {
    "binary": (SUPPORTED, UNSUPPORTED),
    "ternary": (SUPPORTED, CONTRADICTED, INCONCLUSIVE),
}

# Longest first, so "unsupported" is never read as "supported".
_WORDS = "unsupported|not supported|supported|contradicted|inconclusive"
_MARKED = re.compile(r"#{2,}\s*\**\s*(" + _WORDS + r")\b[^#]*#{2,}", re.IGNORECASE)
_MARKED_OPEN = re.compile(r"#{2,}\s*\**\s*(" + _WORDS + r")\b", re.IGNORECASE)
_DECISION = re.compile(r"decision\W{0,5}\s*\**\s*(" + _WORDS + r")\b", re.IGNORECASE)
_BARE = re.compile(r"^\W*(" + _WORDS + r")\W*$", re.IGNORECASE)


def _label(word: str, mode: str) -> str | None:
    word = " ".join(word.lower().split())
    if word == "not supported":
        word = UNSUPPORTED
    if mode == "binary" and word in (CONTRADICTED, INCONCLUSIVE):
        return UNSUPPORTED  # what the paper does to ternary answers in binary mode
    return word if word in LABELS[mode] else None


def parse_verdict(raw: str, mode: str) -> str | None:
    """The label in a verifier answer, or None when there is no clear one.

    Models often reason first and then give "###Label###", sometimes naming other labels
    on the way, so the last marked label wins. Without ### marks we accept "Decision:
    Label" or a final line that is just the label, and nothing looser: a guess here would
    silently bias the score.
    """
    for pattern in (_MARKED, _MARKED_OPEN, _DECISION):
        found = pattern.findall(raw)
        if found:
            return _label(found[-1], mode)
    lines = [line for line in raw.strip().splitlines() if line.strip()]
    if lines:
        bare = _BARE.match(lines[-1])
        if bare:
            return _label(bare.group(1), mode)
    return None


def released_verdict(raw: str, mode: str) -> str | None:
    """The released VeriScore 2.0.3's reading (claim_verifier.py): the answer stripped
    (get_response.py), every "#" removed, the text before the first full stop,
    lower-cased; only "supported" counts as supported there (veriscore.py). Any other
    label of the mode is kept as that label; anything else (reasoning first, no label) is
    None: unparsed, which the reference scoring counts as not supported, as released."""
    clean = raw.strip().replace("#", "").split(".")[0].lower()
    return _label(clean, mode) if clean in _WORDS.split("|") else None


def to_verdict(raw: str, mode: str, *, reference: bool = False) -> Verdict:
    label = released_verdict(raw, mode) if reference else parse_verdict(raw, mode)
    if label is None:
        return Verdict(label=UNPARSED, raw_output=raw, parsed=False)
    return Verdict(label=label, raw_output=raw, parsed=True)


async def verify_claim(
    claim: str,
    evidence: list[Evidence],
    *,
    llm: LLMClient,
    mode: str = "binary",
    model: str | None = None,
    usage: Usage,
    errors: list[str],
    prompts: PromptDir | None = None,
    seed: int | None = None,
    temperature: float = 0.0,
    reference: bool = False,
) -> Verdict:
    """`reference`: the answer read by the released rule (released_verdict)."""
    render = prompts.verification_messages if prompts else verification_messages
    messages = render(claim, evidence, mode=mode)
    try:
        result = await llm.chat(messages, model=model, temperature=temperature, seed=seed)
    except LLMError as e:
        errors.append(f"verification of {claim!r} failed: {e}")
        return Verdict(label=ERROR, raw_output="", parsed=False)
    result.add_to(usage)
    return to_verdict(result.text, mode, reference=reference)
