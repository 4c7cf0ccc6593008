"""The released VeriScore's other paths, for `--reference veriscore`.

The released code (veriscore 2.0.3) picks a path per stage: with
`--use_external_extraction_model` / `--use_external_verification_model` (or a model name
that is a folder) it loads a fine-tuned checkpoint and gives it raw prompt strings
(claim_extractor.py, claim_verifier.py); a model name containing "claude" goes to
Anthropic's Messages API (get_response.py); any other to OpenAI's chat completions. Here
a stage's API is the operator's declaration: "completions" (a checkpoint served over
/v1/completions), "anthropic" (the Messages API) or "chat" (pipeline/extract.py,
pipeline/verify.py). Everything the released code builds is rebuilt from its templates,
read at run time from the --prompt-dir (pipeline/prompts/folder.py):

- fine-tuned extractor: the whole response (QA: `Questions:\\n{q}\\nResponse:\\n{r}`) with
  every occurrence of the sentence marked `<SOS>...<EOS>`, in the alpaca template,
  1,000 new tokens; its output read as `(prompt + generation).split("### Response:")[-1]`,
  `</s>` removed, one claim per stripped line, nothing when it says "No verifiable claim.";
- fine-tuned verifier: the no-demo binary instruction (whatever the label mode) and
  `Claim: ...\\n\\n<results>` in the Llama-3 template, 500 new tokens; its output read as
  `(prompt + generation).split("<|end_header_id|>\\n\\n")[-1]` without `<|eot_id|>`, and
  supported only when that is exactly "supported" (the released comparison);
- Claude: the extraction templates' text as the one user message (no system message), the
  Claude verification templates (demos as results, claim, label) and closing instruction,
  temperature 0, max_tokens 1,000; the verdict as the released code reads any API answer
  (text before the first full stop after removing `#`, lower-cased).

The released checkpoint path calls its model once per sentence and per claim (no cache):
so does this one (each call is named by the response and its position in the cache key).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pipeline.extract import reference_facts
from pipeline.llm import APIS, ChatResult, LLMClient, LLMError
from pipeline.prompts.folder import PromptDir
from pipeline.split import reference_windows
from pipeline.types import (
    ERROR,
    SUPPORTED,
    UNPARSED,
    Evidence,
    SentenceClaims,
    Usage,
    Verdict,
    Window,
)
from pipeline.verify import LABELS

__all__ = ["APIS", "extract", "verify"]

EXTRACTION_TOKENS = 1000  # claim_extractor.py: max_new_tokens=1000 / max_tokens=1000
VERIFICATION_TOKENS = 500  # claim_verifier.py, the checkpoint: max_new_tokens=500
API_TOKENS = 1000  # get_response.py for API models


def local_windows(response: str, question: str | None, sentences: list[str]) -> list[Window]:
    """The fine-tuned extractor's input: the whole (stripped) response, every occurrence
    of the sentence marked (str.replace, as released; in the question too)."""
    text = f"Questions:\n{question.strip()}\nResponse:\n{response.strip()}" if question else None
    text = response.strip() if text is None else text
    return [Window(i, s, text.replace(s, f"<SOS>{s}<EOS>")) for i, s in enumerate(sentences)]


def local_claims(prompt: str, generation: str) -> list[str]:
    """Claims as the released code reads the decoded prompt + generation."""
    clean = (prompt + generation).split("### Response:")[-1].strip().replace("</s>", "")
    if not clean or "No verifiable claim." in clean:
        return []
    lines = [x.strip() for x in clean.split("\n")]
    return [x for x in lines if x and not x.startswith("Note:")]


def local_result(prompt: str, generation: str) -> str:
    """The checkpoint verifier's verification_result, as released."""
    tail = (prompt + generation).split("<|end_header_id|>\n\n")[-1]
    return tail.replace("<|eot_id|>", "").strip()


def api_result(text: str) -> str:
    """An API verifier's verification_result, as released (its answer stripped first)."""
    return text.strip().replace("#", "").split(".")[0].lower()


def to_verdict(result: str, raw: str, mode: str) -> Verdict:
    """The released code counts a claim supported only when its result is "supported";
    another label of the mode is kept, anything else is unparsed (not supported)."""
    if result == SUPPORTED or result in LABELS[mode]:
        return Verdict(label=result, raw_output=raw, parsed=True)
    return Verdict(label=UNPARSED, raw_output=raw, parsed=False)


async def _call(
    llm: LLMClient, api: str, prompt: str, model: str | None, max_tokens: int, distinct: str
) -> ChatResult:
    if api == "completions":
        return await llm.complete(
            prompt, model=model, temperature=0, max_tokens=max_tokens, distinct=distinct
        )
    return await llm.anthropic(prompt, model=model, temperature=0, max_tokens=max_tokens)


async def extract(
    response: str,
    question: str | None,
    *,
    api: str,
    llm: LLMClient,
    prompts: PromptDir,
    split: Callable[[str], list[str]],
    model: str | None,
    usage: Usage,
    errors: list[str],
    name: str,
) -> list[SentenceClaims]:
    """One call per sentence on the `api` path ("completions" or "anthropic")."""
    sentences = split(response)
    if api == "completions":
        calls = [
            (w, prompts.alpaca_extraction_prompt(w.snippet))
            for w in local_windows(response, question, sentences)
        ]
    else:
        qa = bool(question)
        calls = [
            (w, prompts.extraction_messages(w, qa=qa)[-1]["content"])
            for w in reference_windows(response, question, sentences)
        ]

    async def one(window: Window, prompt: str) -> SentenceClaims:
        try:
            answer = await _call(
                llm, api, prompt, model, EXTRACTION_TOKENS, f"{name}/sentence/{window.index}"
            )
        except LLMError as e:
            errors.append(f"extraction of sentence {window.index} failed: {e}")
            return SentenceClaims(window.index, window.sentence, [], "", failed=True)
        answer.add_to(usage)
        text = answer.text
        claims = local_claims(prompt, text) if api == "completions" else reference_facts(text)
        return SentenceClaims(window.index, window.sentence, claims, text)

    return list(await asyncio.gather(*(one(w, p) for w, p in calls)))


async def verify(
    claim: str,
    evidence: list[Evidence],
    *,
    api: str,
    llm: LLMClient,
    prompts: PromptDir,
    mode: str,
    model: str | None,
    usage: Usage,
    errors: list[str],
    name: str,
) -> Verdict:
    """One claim on the `api` path ("completions" or "anthropic")."""
    if api == "completions":
        prompt = prompts.alpaca_verification_prompt(claim, evidence)
    else:
        prompt = prompts.claude_verification_prompt(claim, evidence, mode=mode)
    tokens = VERIFICATION_TOKENS if api == "completions" else API_TOKENS
    try:
        answer = await _call(llm, api, prompt, model, tokens, name)
    except LLMError as e:
        errors.append(f"verification of {claim!r} failed: {e}")
        return Verdict(label=ERROR, raw_output="", parsed=False)
    answer.add_to(usage)
    if api == "completions":
        return to_verdict(local_result(prompt, answer.text), answer.text, mode)
    return to_verdict(api_result(answer.text), answer.text, mode)
