"""The pipeline's shared exception: its own module so that `llm` and `batch` both import it
without importing each other back."""

from __future__ import annotations


class LLMError(RuntimeError):
    """A call that failed for good (after retries, or a request the server refuses)."""
