"""Prompt builders. Each returns chat messages; the version strings go on every result."""

from __future__ import annotations

from pipeline.prompts import atomic, extraction, verification
from pipeline.prompts.atomic import atomic_messages
from pipeline.prompts.extraction import extraction_messages
from pipeline.prompts.verification import verification_messages

EXTRACTOR_VERSIONS = {"veriscore": extraction.VERSION, "atomic": atomic.VERSION}


def prompt_version(extractor: str) -> str:
    return f"{EXTRACTOR_VERSIONS[extractor]}+{verification.VERSION}"


__all__ = [
    "atomic_messages",
    "extraction_messages",
    "verification_messages",
    "prompt_version",
]
