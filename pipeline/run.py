"""The library API: run responses through extraction, retrieval and verification.

The clients come in as arguments, so a caller (the CLI, a Django background task, a
test) decides which endpoint, search backend and cache file they talk to:

    clients = build_clients(ClientConfig.from_env(cache_path="cache.sqlite"))
    results = run_responses_sync(chunk, config=PipelineConfig(), llm=clients.llm,
                                 searcher=clients.searcher)
    table = score_results(all_results)

Several workers can process different chunks of one run, sharing a cache file or not.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from pipeline import released, split, verifastscore
from pipeline.cache import Cache, OfflineMiss
from pipeline.extract import dedupe, extract_claims, reference_dedupe
from pipeline.llm import LLMClient
from pipeline.prompts import folder, prompt_version
from pipeline.prompts.folder import PromptDir, load_prompt_dir
from pipeline.score import ScoresTable, score_results
from pipeline.search import SERPER_URL, BM25Searcher, Searcher, SearchError, SerperSearcher
from pipeline.types import (
    ERROR,
    ClaimResult,
    ResponseInput,
    ResponseResult,
    Verdict,
)
from pipeline.verify import verify_claim

__all__ = [
    "ClientConfig",
    "Clients",
    "OfflineMiss",
    "PipelineConfig",
    "build_clients",
    "run_responses",
    "run_responses_sync",
    "run_stage",
    "score_results",
    "ScoresTable",
]

Progress = Callable[[int, int], None]

# The released code's list (veriscore.py), plus the empty answer in the default mode.
RELEASED_ABSTAIN_RESPONSES = {
    "I'm sorry, I cannot fulfill that request.",
    "I'm sorry, I can't fulfill that request.",
    "I'm sorry, but I cannot fulfill that request.",
    "I'm sorry, but I can't fulfill that request.",
    "Sorry, but I can't fulfill that request.",
    "Sorry, I can't do that.",
}
ABSTAIN_RESPONSES = RELEASED_ABSTAIN_RESPONSES | {""}


def is_abstained(response: str, reference: str | None = None) -> bool:
    """An abstention. The released VeriScore (reference "veriscore") does not abstain an
    empty or whitespace-only response: it splits and scores it, with no claim."""
    if reference == "veriscore":
        return response.strip() in RELEASED_ABSTAIN_RESPONSES
    return response.strip() in ABSTAIN_RESPONSES


REFERENCES = (None, "veriscore", "verifastscore")
REFERENCE_EVIDENCE = 10
REFERENCE_SEED = 1130
REFERENCE_SPLITTER = "spacy:en_core_web_sm"


@dataclass(frozen=True)
class PipelineConfig:
    """What determines the results (and so is stored with them)."""

    extractor: str = "veriscore"  # or "atomic", or "verifastscore" (the whole method)
    label_mode: str | None = None  # "binary" or "ternary"; None: binary (reference: ternary)
    extraction_model: str | None = None  # None: the LLM client's model
    verification_model: str | None = None
    search_n: int = 10  # results fetched per claim (Serper's top n <= 10)
    # Of those, shown to the verifier. None: 5 (ours: shorter prompts), or in the
    # reference mode 10, the released CLI's --search_res_num.
    evidence_in_prompt: int | None = None
    prompt_dir: str | None = None  # templates read at run time instead of our own prompts
    # "veriscore": every request as the released VeriScore 2.0.3 CLI makes it (its
    # windows, templates from prompt_dir, claim parsing, 10 results, max_tokens 1000,
    # seed 1130 for gpt models, label_n 3 unless label_mode is given); "verifastscore":
    # as the released VeriFastScore 0.1.5. See docs/reference-mode.md.
    reference: str | None = None
    splitter: str | None = None  # None: pysbd, or in the reference mode the released spaCy
    # The API each stage's endpoint speaks (pipeline.llm.APIS): "chat"; in the reference
    # mode also "completions" (the released fine-tuned checkpoints, served) and
    # "anthropic" (the released Claude path). See pipeline/released.py.
    extraction_api: str = "chat"
    verification_api: str = "chat"

    def __post_init__(self) -> None:
        if self.reference not in REFERENCES:
            raise ValueError(
                f"unknown reference {self.reference!r} ({', '.join(map(str, REFERENCES[1:]))})"
            )
        ref = self.reference == "veriscore"
        if self.reference and self.extractor != self.reference:
            raise ValueError(f"--reference {self.reference} needs the {self.reference} method")
        if ref and not self.prompt_dir:
            raise ValueError(
                "--reference veriscore needs --prompt-dir: the released templates' folder "
                "(prompt/*.txt and few_shot_examples.jsonl), read at run time"
            )
        if self.reference == "verifastscore" and not self.prompt_dir:
            raise ValueError(
                "--reference verifastscore needs --prompt-dir: a folder with the released "
                "model's system_message.txt, read at run time"
            )
        defaults = {
            "label_mode": "ternary" if ref else "binary",  # the released CLI: --label_n 3
            "evidence_in_prompt": REFERENCE_EVIDENCE if ref else 5,
            "splitter": REFERENCE_SPLITTER if self.reference else split.PYSBD,
        }
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)
        if self.extractor not in ("veriscore", "atomic", "verifastscore"):
            raise ValueError(f"unknown extractor {self.extractor!r}")
        if self.label_mode not in ("binary", "ternary"):
            raise ValueError(f"unknown label mode {self.label_mode!r}")
        for stage, api in (
            ("extraction", self.extraction_api),
            ("verification", self.verification_api),
        ):
            if api not in released.APIS:
                raise ValueError(f"unknown {stage} API {api!r} ({', '.join(released.APIS)})")
            if api != "chat" and self.reference != "veriscore":
                raise ValueError(
                    f"the {stage} API {api!r} is a path of the released VeriScore: it needs "
                    "--reference veriscore"
                )
        split.splitter(str(self.splitter))  # a bad splitter name fails here
        if self.extractor == "verifastscore":
            verifastscore.system_message(self.prompt_dir)  # a bad --prompt-dir fails here
        elif self.prompt_dir:
            prompts = load_prompt_dir(self.prompt_dir)  # a bad one fails here, before any call
            needed = {
                ("extraction", "completions"): [folder.ALPACA_EXTRACTION],
                ("verification", "completions"): [folder.ALPACA_VERIFICATION, folder.NO_DEMO],
                ("verification", "anthropic"): [folder.CLAUDE[str(self.label_mode)]],
            }
            for stage, api in (
                ("extraction", self.extraction_api), ("verification", self.verification_api)
            ):  # fmt: skip
                for name in needed.get((stage, api), []):
                    prompts.template(name)

    @property
    def prompts(self) -> PromptDir | None:
        return load_prompt_dir(self.prompt_dir) if self.prompt_dir else None

    @property
    def mode(self) -> str:
        """The scoring mode (pipeline.score)."""
        return "reference" if self.reference else "default"

    @property
    def temperature(self) -> float:
        """The released code sends the integer 0 (JSON `0`, not `0.0`)."""
        return 0 if self.reference else 0.0

    def seed(self, model: str) -> int | None:
        """The released code sends seed 1130 to gpt models (get_response.py)."""
        return REFERENCE_SEED if self.reference and "gpt" in model else None

    def split(self, text: str) -> list[str]:
        return split.splitter(str(self.splitter))(text)


@dataclass
class ClientConfig:
    """How to reach the outside world; nothing here changes an answer."""

    base_url: str | None = None
    api_key: str | None = None
    model: str = "gpt-4o-mini"
    retriever: str = "serper"  # or "bm25"
    serper_api_key: str | None = None
    serper_url: str = SERPER_URL
    corpus: str | None = None  # JSONL {title, text, url} for bm25
    cache_path: str | None = ".pipeline-cache.sqlite"
    offline: bool = False
    concurrency: int = 32
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    timeout: float = 120.0
    max_retries: int = 5
    backoff: float = 1.0
    batch: bool = False  # LLM calls through the provider's Batch API
    batch_poll: float = 10.0  # seconds between looks at a batch in progress
    # Verification at another endpoint (a mixed run: e.g. a served checkpoint extracts,
    # Claude verifies); None: the same endpoint as extraction.
    verification_base_url: str | None = None
    verification_api_key: str | None = None

    @classmethod
    def from_env(cls, **overrides: Any) -> ClientConfig:
        """Defaults from OPENAI_BASE_URL, OPENAI_API_KEY, PIPELINE_MODEL, SERPER_API_KEY."""
        values: dict[str, Any] = {
            "base_url": os.environ.get("OPENAI_BASE_URL") or None,
            "api_key": os.environ.get("OPENAI_API_KEY") or None,
            "serper_api_key": os.environ.get("SERPER_API_KEY") or None,
        }
        if os.environ.get("PIPELINE_MODEL"):
            values["model"] = os.environ["PIPELINE_MODEL"]
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


@dataclass
class Clients:
    llm: LLMClient
    searcher: Searcher
    cache: Cache | None = None
    verification_llm: LLMClient | None = None  # None: llm verifies too

    async def aclose(self) -> None:
        await self.llm.aclose()
        if self.verification_llm is not None:
            await self.verification_llm.aclose()
        await self.searcher.aclose()

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


def build_clients(cfg: ClientConfig) -> Clients:
    cache = Cache(cfg.cache_path) if cfg.cache_path else None
    llm = _llm_client(cfg, cache, cfg.base_url, cfg.api_key)
    verification_llm = None
    if cfg.verification_base_url or cfg.verification_api_key:
        verification_llm = _llm_client(
            cfg, cache, cfg.verification_base_url or cfg.base_url,
            cfg.verification_api_key or cfg.api_key,
        )  # fmt: skip
    searcher: Searcher
    if cfg.retriever == "bm25":
        if not cfg.corpus:
            raise ValueError("the bm25 retriever needs a corpus file")
        searcher = BM25Searcher(cfg.corpus)
    elif cfg.retriever == "serper":
        searcher = SerperSearcher(
            api_key=cfg.serper_api_key,
            base_url=cfg.serper_url,
            cache=cache,
            offline=cfg.offline,
            concurrency=cfg.concurrency,
            timeout=min(cfg.timeout, 30.0),
            max_retries=cfg.max_retries,
            backoff=cfg.backoff,
        )
    else:
        raise ValueError(f"unknown retriever {cfg.retriever!r}")
    return Clients(llm=llm, searcher=searcher, cache=cache, verification_llm=verification_llm)


def _llm_client(
    cfg: ClientConfig, cache: Cache | None, base_url: str | None, api_key: str | None
) -> LLMClient:
    return LLMClient(
        base_url=base_url,
        api_key=api_key,
        model=cfg.model,
        cache=cache,
        offline=cfg.offline,
        concurrency=cfg.concurrency,
        requests_per_minute=cfg.requests_per_minute,
        tokens_per_minute=cfg.tokens_per_minute,
        max_retries=cfg.max_retries,
        timeout=cfg.timeout,
        backoff=cfg.backoff,
        batch=cfg.batch,
        batch_poll=cfg.batch_poll,
    )


def templates(config: PipelineConfig) -> str:
    """The prompts' version; a --prompt-dir's names the folder and a hash of its files."""
    if config.extractor == "verifastscore":
        return verifastscore.prompt_version(config.prompt_dir)
    return prompt_version(config.extractor, config.prompt_dir)


def scores_metadata(config: PipelineConfig) -> dict[str, Any]:
    """What every scores file records beside the scores: how they were made."""
    try:
        package = version("factuality-annotation")
    except PackageNotFoundError:
        package = "unknown"
    return {
        "mode": config.reference or "default",
        "splitter": config.splitter,
        "label_mode": config.label_mode,
        "evidence_in_prompt": config.evidence_in_prompt,
        "templates": templates(config),  # names the prompts; a --prompt-dir's has its hash
        "package_version": package,
    }


async def _all[T](coros: list[Coroutine[Any, Any, T]]) -> list[T]:
    """Run concurrently; on a fatal error (an offline cache miss) cancel the rest and
    raise that error itself rather than an ExceptionGroup."""
    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(c) for c in coros]
    except BaseExceptionGroup as group:
        first: BaseException = group
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None
    return [t.result() for t in tasks]


def new_result(
    inp: ResponseInput, config: PipelineConfig, llm: LLMClient, searcher: Searcher
) -> ResponseResult:
    return ResponseResult(
        id=inp.id,
        response=inp.response,
        question=inp.question,
        model=inp.model,
        domain=inp.domain,
        abstained=is_abstained(inp.response, config.reference),
        extractor=config.extractor,
        extraction_model=config.extraction_model or llm.model,
        verification_model=config.verification_model or llm.model,
        prompt_version=templates(config),
        label_mode=str(config.label_mode),
        retriever=searcher.name,
        metadata=dict(inp.metadata),
    )


async def extract_stage(result: ResponseResult, *, config: PipelineConfig, llm: LLMClient) -> None:
    if result.abstained:
        return
    if config.extraction_api != "chat":
        result.sentences = await released.extract(
            result.response,
            result.question,
            api=config.extraction_api,
            llm=llm,
            prompts=load_prompt_dir(str(config.prompt_dir)),
            split=config.split,
            model=config.extraction_model,
            usage=result.usage,
            errors=result.errors,
            name=result.id,
        )
        result.claims = [ClaimResult(claim=c) for c in reference_dedupe(result.sentences)]
        return
    result.sentences = await extract_claims(
        result.response,
        result.question,
        llm=llm,
        extractor=config.extractor,
        model=config.extraction_model,
        usage=result.usage,
        errors=result.errors,
        prompts=config.prompts,
        reference=config.split if config.reference else None,
        seed=config.seed(result.extraction_model),
        temperature=config.temperature,
        splitter=str(config.splitter),
    )
    unique = reference_dedupe if config.reference else dedupe
    result.claims = [ClaimResult(claim=c) for c in unique(result.sentences)]


async def retrieve_claim(
    item: ClaimResult, result: ResponseResult, *, config: PipelineConfig, searcher: Searcher
) -> None:
    try:
        # The released code asks Serper for its default number of results (no "num").
        n = None if config.reference == "veriscore" else config.search_n
        evidence, cached = await searcher.search(item.claim.text, n)
    except SearchError as e:
        item.search_error = str(e)
        result.errors.append(str(e))
        return
    item.evidence = evidence
    item.search_error = None
    if cached:
        result.usage.cached_search_calls += 1
    elif searcher.name != "bm25":
        result.usage.search_calls += 1


async def verify_one_claim(
    item: ClaimResult, result: ResponseResult, *, config: PipelineConfig, llm: LLMClient
) -> None:
    if item.search_error is not None:
        # No evidence is not evidence against the claim: record it as an error.
        item.verdict = Verdict(label=ERROR, raw_output="", parsed=False)
        return
    if config.verification_api != "chat":
        item.verdict = await released.verify(
            item.claim.text,
            item.evidence[: config.evidence_in_prompt],
            api=config.verification_api,
            llm=llm,
            prompts=load_prompt_dir(str(config.prompt_dir)),
            mode=str(config.label_mode),
            model=config.verification_model,
            usage=result.usage,
            errors=result.errors,
            name=f"{result.id}/claim/{result.claims.index(item)}",
        )
        return
    item.verdict = await verify_claim(
        item.claim.text,
        item.evidence[: config.evidence_in_prompt],
        llm=llm,
        mode=str(config.label_mode),
        model=config.verification_model,
        usage=result.usage,
        errors=result.errors,
        prompts=config.prompts,
        seed=config.seed(result.verification_model),
        temperature=config.temperature,
        reference=config.reference == "veriscore",
    )


async def process_response(
    inp: ResponseInput,
    *,
    config: PipelineConfig,
    llm: LLMClient,
    searcher: Searcher,
    verification_llm: LLMClient | None = None,
) -> ResponseResult:
    result = new_result(inp, config, llm, searcher)
    if config.extractor == "verifastscore":
        await verifastscore.process(
            result,
            llm=llm,
            searcher=searcher,
            prompt_dir=config.prompt_dir,
            model=config.verification_model,
            search_n=verifastscore.REFERENCE_SEARCH_N
            if config.reference
            else min(config.search_n, verifastscore.SEARCH_N),
            reference=config.split if config.reference else None,
        )
        return result
    await extract_stage(result, config=config, llm=llm)

    async def claim(item: ClaimResult) -> None:
        # Each claim goes on to verification as soon as its own search is back.
        await retrieve_claim(item, result, config=config, searcher=searcher)
        await verify_one_claim(item, result, config=config, llm=verification_llm or llm)

    await _all([claim(item) for item in result.claims])
    return result


async def _with_progress[T](
    coros: list[Coroutine[Any, Any, T]], progress: Progress | None
) -> list[T]:
    total = len(coros)
    done = 0

    async def tick(c: Coroutine[Any, Any, T]) -> T:
        nonlocal done
        value = await c
        done += 1
        if progress is not None:
            progress(done, total)
        return value

    return await _all([tick(c) for c in coros])


async def run_responses(
    responses: list[ResponseInput],
    *,
    config: PipelineConfig,
    llm: LLMClient,
    searcher: Searcher,
    progress: Progress | None = None,
    verification_llm: LLMClient | None = None,
) -> list[ResponseResult]:
    """The whole pipeline over a chunk of responses, all in flight at once (the clients
    bound the concurrency). Failed calls end up in each result's `errors`; only an offline
    cache miss (OfflineMiss) stops the run. `verification_llm`: another endpoint verifies."""
    return await _with_progress(
        [
            process_response(
                r, config=config, llm=llm, searcher=searcher, verification_llm=verification_llm
            )
            for r in responses
        ],
        progress,
    )


async def run_stage(
    stage: str,
    results: list[ResponseResult],
    *,
    config: PipelineConfig,
    llm: LLMClient,
    searcher: Searcher,
    progress: Progress | None = None,
    verification_llm: LLMClient | None = None,
) -> list[ResponseResult]:
    """One step on results from the previous one (the CLI's extract/retrieve/verify)."""

    async def one(result: ResponseResult) -> ResponseResult:
        if stage == "extract":
            await extract_stage(result, config=config, llm=llm)
        elif stage == "retrieve":
            result.retriever = searcher.name
            await _all(
                [retrieve_claim(c, result, config=config, searcher=searcher) for c in result.claims]
            )
        elif stage == "verify":
            result.label_mode = str(config.label_mode)
            result.verification_model = config.verification_model or llm.model
            verify_version = prompt_version(config.extractor, config.prompt_dir).partition("+")[2]
            result.prompt_version = f"{result.prompt_version.partition('+')[0]}+{verify_version}"
            verifier = verification_llm or llm
            await _all(
                [verify_one_claim(c, result, config=config, llm=verifier) for c in result.claims]
            )
        else:
            raise ValueError(f"unknown stage {stage!r}")
        return result

    return await _with_progress([one(r) for r in results], progress)


def run_responses_sync(
    responses: list[ResponseInput],
    *,
    config: PipelineConfig,
    llm: LLMClient,
    searcher: Searcher,
    progress: Progress | None = None,
    verification_llm: LLMClient | None = None,
) -> list[ResponseResult]:
    """run_responses for synchronous callers (a background task). Safe to call again
    with the same clients: they rebuild their connections for each new event loop."""

    async def main() -> list[ResponseResult]:
        try:
            return await run_responses(
                responses, config=config, llm=llm, searcher=searcher, progress=progress,
                verification_llm=verification_llm,
            )  # fmt: skip
        finally:
            await llm.aclose()
            if verification_llm is not None:
                await verification_llm.aclose()
            await searcher.aclose()

    return asyncio.run(main())
