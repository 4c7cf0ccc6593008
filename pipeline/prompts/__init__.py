"""Prompt builders. Each returns chat messages; the version strings go on every result."""

from __future__ import annotations

from pipeline.prompts import atomic, extraction, verification
from pipeline.prompts.atomic import atomic_messages
from pipeline.prompts.extraction import extraction_messages
from pipeline.prompts.verification import verification_messages

EXTRACTOR_VERSIONS = {"veriscore": extraction.VERSION, "atomic": atomic.VERSION}


def prompt_version(extractor: str, prompt_dir: str | None = None) -> str:
    if prompt_dir:
        from pipeline.prompts.folder import load_prompt_dir

        version = load_prompt_dir(prompt_dir).version
        extract = version if extractor == "veriscore" else EXTRACTOR_VERSIONS[extractor]
        return f"{extract}+{version}"
    return f"{EXTRACTOR_VERSIONS[extractor]}+{verification.VERSION}"


__all__ = [
    "atomic_messages",
    "extraction_messages",
    "verification_messages",
    "prompt_version",
]
