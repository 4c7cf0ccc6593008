"""The pipeline's shared exception and the text of one failure: their own module so
that `llm` and `batch` both import them without importing each other back."""

from __future__ import annotations

from typing import Any


class LLMError(RuntimeError):
    """A call that failed for good (after retries, or a request the server refuses)."""


def cut_off(request: dict[str, Any]) -> str:
    """Why an answer that ran out of tokens before any text is a failed call: a reasoning
    model that spent the budget thinking would do it again, and "" is no answer."""
    budget = request.get("max_completion_tokens") or request.get("max_tokens")
    return (
        f"the answer was cut off at {budget} tokens before any text (a reasoning model "
        "spends them on reasoning too): allow more tokens"
    )
