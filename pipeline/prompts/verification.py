"""Claim verification prompts (paper Table 12), binary and ternary.

The nine few-shot demos are VeriScore's human-labelled examples (data/README.md). In
binary mode their Contradicted/Inconclusive labels become Unsupported, as the paper says;
the reference code compares against "support" and so turns every demo into Unsupported.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from pipeline.types import Evidence

VERSION = "veriscore-verify-v2"  # v2: results read Title / Link / Content, as released
DEMOS = Path(__file__).parent / "data" / "few_shot_examples.jsonl"

SYSTEM = {
    "binary": "You are a helpful assistant who can judge whether a claim is supported by the "
    "search results or not.",
    "ternary": "You are a helpful assistant who can judge whether a claim is supported or "
    "contradicted by the search results, or whether there is no enough information to make "
    "a judgement.",
}

_TERNARY = """You need to judge whether a claim is supported or contradicted by Google search \
results, or whether there is no enough information to make the judgement (i.e., inconclusive). \
When doing the task, take into consideration whether the link of the search result is of a \
trustworthy source. Mark your answer with ### signs.

Below are the definitions of the three categories:

Supported: A claim is supported by the search results if everything in the claim is supported \
and nothing is contradicted by the search results. There can be some search results that are not \
fully related to the claim.

Contradicted: A claim is contradicted by the search results if something in the claim is \
contradicted by some search results. There should be no search result that supports the same part.

Inconclusive: A claim is inconclusive based on the search results if:
- a part of a claim cannot be verified by the search results,
- a part of a claim is supported and contradicted by different pieces of evidence,
- the entity/person mentioned in the claim has no clear referent (e.g., "the approach", \
"Emily", "a book")."""

_BINARY = """You need to judge whether a claim is supported or not by Google search results. \
When doing the task, take into consideration whether the link of the search result is of a \
trustworthy source. Mark your answer with ### signs.

Below are the definitions of the two categories:

Supported: A claim is supported by the search results if everything in the claim is supported \
and nothing is contradicted by the search results. There can be some search results that are not \
fully related to the claim.

Unsupported: If a claim is not supported by the search results, mark it as unsupported."""

INSTRUCTIONS = {"binary": _BINARY, "ternary": _TERNARY}


@functools.cache
def demos() -> list[dict[str, str]]:
    with DEMOS.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def demo_label(human_label: str, mode: str) -> str:
    if mode == "binary":
        return "Supported." if human_label.startswith("Supported") else "Unsupported."
    return human_label


def format_evidence(evidence: list[Evidence]) -> str:
    if not evidence:
        return "No search results."
    return "\n\n".join(
        f"Search result {i}\nTitle: {e.title.strip()}\nLink: {e.link.strip()}\n"
        f"Content: {e.snippet.strip()}"
        for i, e in enumerate(evidence, start=1)
    )


def verification_messages(
    claim: str, evidence: list[Evidence], *, mode: str
) -> list[dict[str, str]]:
    shots = "\n\n".join(
        f"Claim: {d['claim'].strip()}\n\n{d['search_result'].strip()}\n\n"
        f"Your decision: ###{demo_label(d['human_label'], mode)}###"
        for d in demos()
    )
    user = (
        f"{INSTRUCTIONS[mode]}\n\nHere are some examples:\n\n{shots}\n\n"
        f"Your task:\n\nClaim: {claim.strip()}\n\n{format_evidence(evidence)}\n\nYour decision:"
    )
    return [{"role": "system", "content": SYSTEM[mode]}, {"role": "user", "content": user}]
