"""python -m pipeline run|extract|retrieve|verify|score

run INPUT        the whole pipeline: claims_*, evidence_*, verification_*, scores_*
extract INPUT    claims_<name>.jsonl from VeriScore input
                 {question?, response, model, prompt_source}
retrieve FILE    evidence_<name>.jsonl from a claims_ file
verify FILE      verification_<name>.jsonl from an evidence_ file
score FILE...    the scores table from verification_ files (ours or VeriScore's)
cache check|repair PATH   check the answer cache, or rebuild it keeping every readable answer

Exit status: 0 done; 2 bad input, an offline cache miss or an unusable cache; 3 some calls
failed after their retries (their responses are marked incomplete and left out of the
scores; --allow-failures exits 0 anyway), or not one verifier answer could be parsed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

from tqdm import tqdm

from pipeline import verifastscore
from pipeline.cache import CacheError, OfflineMiss, check, repair
from pipeline.dataformats import ImportFailed, LineError
from pipeline.estimate import EstimateRow, estimate_run, format_estimate
from pipeline.formats import (
    load_results,
    read_inputs,
    scores_json,
    write_atomic,
    write_veriscore,
)
from pipeline.run import (
    ClientConfig,
    Clients,
    PipelineConfig,
    build_clients,
    new_result,
    run_responses,
    run_stage,
    scores_metadata,
)
from pipeline.score import format_table, no_verdict_parsed, score_results
from pipeline.types import ResponseInput, ResponseResult

FAILED_CALLS = 3  # the exit status when calls failed after their retries


def _name(path: str) -> str:
    stem = Path(path).stem
    for prefix in ("claims_", "evidence_", "verification_"):
        if stem.startswith(prefix):
            return stem[len(prefix) :]
    return stem


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("endpoints")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint (env OPENAI_BASE_URL)")
    g.add_argument("--api-key", help="env OPENAI_API_KEY")
    g.add_argument("--model", help="default model (env PIPELINE_MODEL, else gpt-4o-mini)")
    g.add_argument("--extraction-model", help="model for extraction (default: --model)")
    g.add_argument("--verification-model", help="model for verification (default: --model)")
    for stage in ("extraction", "verification"):
        g.add_argument(
            f"--{stage}-api",
            choices=["chat", "completions", "anthropic"],
            default="chat",
            help=f"the API the {stage} endpoint speaks (default chat); completions and "
            "anthropic are the released VeriScore's checkpoint and Claude paths "
            "(--reference veriscore; see docs/pipeline/reference-mode.md)",
        )
    g.add_argument(
        "--verification-base-url", help="another endpoint for verification (default: --base-url)"
    )
    g.add_argument("--verification-api-key", help="its key (default: --api-key)")
    g.add_argument("--serper-key", help="env SERPER_API_KEY")
    g.add_argument("--serper-url", help="Serper endpoint (default https://google.serper.dev)")
    g.add_argument("--retriever", choices=["serper", "bm25"], default="serper")
    g.add_argument("--corpus", help="JSONL {title, text, url} for --retriever bm25")
    g = common.add_argument_group("run")
    g.add_argument("--out", default="pipeline_out", help="output directory")
    g.add_argument("--cache", default=".pipeline-cache.sqlite", help="SQLite answer cache")
    g.add_argument(
        "--offline", action="store_true", help="answer from the cache only; fail on a miss"
    )
    g.add_argument(
        "--estimate", action="store_true", help="print calls, tokens and cost, call nothing"
    )
    g.add_argument("--concurrency", type=int, default=32, help="calls in flight per service")
    g.add_argument("--rpm", type=float, help="cap on LLM requests per minute")
    g.add_argument("--tpm", type=float, help="cap on LLM tokens per minute")
    g.add_argument(
        "--batch", action="store_true", help="LLM calls through the Batch API (half price)"
    )
    g.add_argument("--batch-poll", type=float, default=10.0, help="seconds between polls")
    g.add_argument("--timeout", type=float, default=120.0, help="seconds per call")
    g.add_argument("--max-retries", type=int, default=5)
    g.add_argument("--backoff", type=float, default=1.0, help="first retry wait, doubled each time")
    g.add_argument("--extractor", choices=["veriscore", "atomic"], default="veriscore")
    g.add_argument(
        "--method",
        choices=["veriscore", "verifastscore"],
        default="veriscore",
        help="verifastscore: one call per response on per-sentence evidence (`run` only)",
    )
    g.add_argument(
        "--label-mode",
        choices=["binary", "ternary"],
        help="default binary (--reference veriscore: ternary, the released --label_n 3)",
    )
    g.add_argument("--search-n", type=int, default=10)
    g.add_argument(
        "--evidence-in-prompt",
        type=int,
        help="search results shown to the verifier; default 5 (--reference veriscore: 10)",
    )
    g.add_argument(
        "--reference",
        choices=["veriscore", "verifastscore"],
        help="every request as the released VeriScore 2.0.3 CLI (or VeriFastScore 0.1.5) "
        "makes it (needs --prompt-dir; see docs/reference-mode.md); scores as the paper "
        "defines them",
    )
    g.add_argument(
        "--splitter",
        help="sentence splitter: pysbd (default) or spacy:<pipeline> (--reference veriscore: "
        "spacy:en_core_web_sm; spacy:sentencizer is spaCy's rule-based splitter, no model)",
    )
    g.add_argument(
        "--prompt-dir",
        help="prompt templates read from this folder, in the reference VeriScore layout "
        "(its prompt/ folder gives what the reference code sends); default: our own prompts",
    )
    g.add_argument("--fixed-k", type=float, help="use this K instead of the per-domain median")
    g.add_argument(
        "--k-rule",
        choices=["upper", "lower", "mean"],
        default="upper",
        help="median of claim counts for K (VeriScore: upper)",
    )
    g.add_argument("--no-progress", action="store_true")
    g.add_argument(
        "--allow-failures",
        action="store_true",
        help="exit 0 even when calls failed (they are still reported and left out of scores)",
    )

    p = argparse.ArgumentParser(
        prog="python -m pipeline",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("run", "extract", "retrieve", "verify"):
        sub.add_parser(name, parents=[common]).add_argument("input")
    sub.add_parser("score", parents=[common]).add_argument("input", nargs="+")
    cache = sub.add_parser("cache", help="check or repair an answer cache file")
    cache.add_argument("action", choices=["check", "repair"])
    cache.add_argument("path")
    return p


def cache_command(args: argparse.Namespace) -> int:
    if args.action == "check":
        report = check(args.path)
        print(report)
        return 0 if report.ok else 1
    report, aside = repair(args.path)
    if aside is None:
        print(f"{report}; nothing to repair")
    else:
        print(f"{report} after repair; the damaged file is kept as {aside}")
    return 0 if report.ok else 1


def configs(args: argparse.Namespace) -> tuple[ClientConfig, PipelineConfig]:
    client = ClientConfig.from_env(
        base_url=args.base_url,
        api_key=args.api_key,
        model=args.model,
        serper_api_key=args.serper_key,
        serper_url=args.serper_url,
        retriever=args.retriever,
        corpus=args.corpus,
        offline=args.offline,
        concurrency=args.concurrency,
        requests_per_minute=args.rpm,
        tokens_per_minute=args.tpm,
        timeout=args.timeout,
        max_retries=args.max_retries,
        backoff=args.backoff,
        batch=args.batch,
        batch_poll=args.batch_poll,
        verification_base_url=args.verification_base_url,
        verification_api_key=args.verification_api_key,
    )
    client.cache_path = args.cache
    config = PipelineConfig(
        extractor="verifastscore"
        if "verifastscore" in (args.method, args.reference)
        else args.extractor,
        label_mode=args.label_mode,
        extraction_model=args.extraction_model,
        verification_model=args.verification_model,
        search_n=args.search_n,
        evidence_in_prompt=args.evidence_in_prompt,
        prompt_dir=args.prompt_dir,
        reference=args.reference,
        splitter=args.splitter,
        extraction_api=args.extraction_api,
        verification_api=args.verification_api,
    )
    if client.batch and "chat" not in {config.extraction_api} | {config.verification_api}:
        raise ValueError("--batch sends chat completions only: no stage here speaks chat")
    return client, config


def _bar(total: int, label: str, off: bool) -> tuple[tqdm, Callable[[int, int], None]]:
    bar = tqdm(total=total, desc=label, unit="resp", disable=True if off else None, file=sys.stderr)

    def progress(done: int, _total: int) -> None:
        bar.update(done - bar.n)

    return bar, progress


def write_scores(
    results: list[ResponseResult], args: argparse.Namespace, name: str, config: PipelineConfig
) -> None:
    table = score_results(results, fixed_k=args.fixed_k, k_rule=args.k_rule, mode=config.mode)
    out = Path(args.out) / f"scores_{name}.json"
    scores = {"run": scores_metadata(config), **scores_json(table)}
    if config.extractor == "verifastscore":
        # The released code's own score beside ours: K fixed at 17, recall = claims / K.
        scores["verifastscore_k17"] = verifastscore.released_scores(results)
    write_atomic(out, [json.dumps(scores, indent=2)])
    print(format_table(table))
    print(f"scores written to {out}")


def failure_summary(results: list[ResponseResult]) -> str:
    """'' when every call succeeded; else what failed, by step, and where."""
    extraction = sum(s.failed for r in results for s in r.sentences)
    search = sum(c.search_error is not None for r in results for c in r.claims)
    verification = sum(r.failed_units for r in results) - extraction - search
    incomplete = [r for r in results if r.incomplete]
    if not incomplete:
        return ""
    lines = [
        f"FAILED: {extraction + search + verification} call(s) failed after their retries "
        f"(extraction {extraction}, search {search}, verification {verification}) in "
        f"{len(incomplete)} of {len(results)} responses; those responses are marked "
        "incomplete and left out of the scores. Run again to retry them (answers already "
        "received come from the cache)."
    ]
    for r in incomplete[:5]:
        lines += [f"  {r.id}: {e}" for e in r.errors[:2]]
    if len(incomplete) > 5:
        lines.append(f"  ... and {len(incomplete) - 5} more response(s)")
    return "\n".join(lines)


def _unparsed(results: list[ResponseResult]) -> int:
    """FAILED_CALLS when not one verifier answer could be parsed: that is a broken verifier
    or prompt, never a VERIScore of 0 (--allow-failures does not cover it)."""
    why = no_verdict_parsed(results)
    if why:
        print(why, file=sys.stderr)
    return FAILED_CALLS if why else 0


def summary(results: list[ResponseResult], clients: Clients) -> str:
    calls = sum(r.usage.calls for r in results)
    cached = sum(r.usage.cached_calls for r in results)
    searches = sum(r.usage.search_calls for r in results)
    cached_s = sum(r.usage.cached_search_calls for r in results)
    tokens = sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in results)
    cost = sum(r.usage.cost_usd for r in results)
    errors = sum(len(r.errors) for r in results)
    unparsed = sum(r.count("unparsed") for r in results)
    retries = clients.llm.retries + getattr(clients.searcher, "retries", 0)
    return (
        f"LLM calls {calls} (+{cached} from cache), searches {searches} (+{cached_s} from cache), "
        f"tokens {tokens}, cost ${cost:.4f}, retries {retries}, errors {errors}, "
        f"unparsed verdicts {unparsed}"
    )


def cost_line(results: list[ResponseResult], estimated: float, *, batch: bool) -> str:
    actual = sum(r.usage.cost_usd for r in results)
    prompt = sum(r.usage.prompt_tokens for r in results)
    cached = sum(r.usage.cached_prompt_tokens for r in results)
    share = f"{cached / prompt:.0%}" if prompt else "0%"
    return (
        f"cost: estimate ${estimated:.4f}, actual ${actual:.4f} "
        f"({cached} of {prompt} input tokens from the provider's prompt cache ({share})"
        f"{', Batch API at half price' if batch else ''})"
    )


async def execute(args: argparse.Namespace) -> int:
    client_cfg, config = configs(args)
    name = _name(args.input[0] if isinstance(args.input, list) else args.input)
    out = Path(args.out)

    if config.extractor == "verifastscore" and (args.command != "run" or args.estimate):
        raise ValueError("--method verifastscore works with `run` only (without --estimate)")
    if args.command == "score":
        results = [r for path in args.input for r in load_results(path)]
        write_scores(results, args, name, config)
        return _unparsed(results)

    inputs: list[ResponseInput] = []
    if args.command in ("run", "extract"):
        warnings: list[LineError] = []
        inputs = read_inputs(args.input, warnings)  # ImportFailed: exit 2, naming lines
        for warning in warnings:
            print(f"warning: {warning}", file=sys.stderr)
    if args.estimate:
        client_cfg.offline = True  # belt and braces: an estimate never calls anything
    if args.estimate or args.offline:
        client_cfg.serper_api_key = client_cfg.serper_api_key or "offline"
    clients = build_clients(client_cfg)
    try:

        def estimate(
            inputs: list[ResponseInput], stages: tuple[str, ...], claims: int | None = None
        ) -> list[EstimateRow]:
            return estimate_run(
                inputs,
                claims=claims,
                llm=clients.llm,
                extractor=config.extractor,
                label_mode=str(config.label_mode),
                extraction_model=config.extraction_model,
                verification_model=config.verification_model,
                evidence_in_prompt=int(config.evidence_in_prompt or 0),
                stages=stages,
                prompts=config.prompts,
                batch=client_cfg.batch,
                reference=config.split if config.reference else None,
                splitter=str(config.splitter),
                seed=config.seed(config.extraction_model or clients.llm.model),
                temperature=config.temperature,
            )

        if args.estimate:
            if args.command in ("run", "extract"):
                stages = ("extract", "verify") if args.command == "run" else ("extract",)
                rows = estimate(inputs, stages)
            else:
                known_claims = sum(r.n_claims for r in load_results(args.input))
                rows = estimate([], ("verify",), known_claims)
            print(format_estimate(rows))
            return 0

        estimated = None
        if args.command == "run" and config.extractor != "verifastscore":
            estimated = sum(r.cost_usd for r in estimate(inputs, ("extract", "verify")))

        off = args.no_progress
        if args.command in ("run", "extract"):
            bar, progress = _bar(len(inputs), args.command, off)
            with bar:
                if args.command == "run":
                    results = await run_responses(
                        inputs,
                        config=config,
                        llm=clients.llm,
                        searcher=clients.searcher,
                        progress=progress,
                        verification_llm=clients.verification_llm,
                    )
                else:
                    results = [new_result(i, config, clients.llm, clients.searcher) for i in inputs]
                    results = await run_stage(
                        "extract",
                        results,
                        config=config,
                        llm=clients.llm,
                        searcher=clients.searcher,
                        progress=progress,
                    )
            write_veriscore(out, name, "claims", results)
            if args.command == "run":
                write_veriscore(out, name, "evidence", results)
                write_veriscore(
                    out, name, "verification", results, int(config.evidence_in_prompt or 0)
                )
        else:
            stage = args.command
            results = load_results(args.input)
            bar, progress = _bar(len(results), stage, off)
            with bar:
                results = await run_stage(
                    stage,
                    results,
                    config=config,
                    llm=clients.llm,
                    searcher=clients.searcher,
                    progress=progress,
                    verification_llm=clients.verification_llm,
                )
            if stage == "retrieve":
                write_veriscore(out, name, "evidence", results)
            else:
                write_veriscore(
                    out, name, "verification", results, int(config.evidence_in_prompt or 0)
                )
        print(summary(results, clients))
        if estimated is not None:
            print(cost_line(results, estimated, batch=client_cfg.batch))
        if args.command in ("run", "verify"):
            write_scores(results, args, name, config)
        print(f"outputs in {out}/")
        failed = failure_summary(results)
        if failed:
            print(failed, file=sys.stderr)
            if not args.allow_failures:
                return FAILED_CALLS
        return _unparsed(results) if args.command in ("run", "verify") else 0
    finally:
        await clients.aclose()
        clients.close()


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "cache":
        return cache_command(args)
    try:
        return asyncio.run(execute(args))
    except (OfflineMiss, CacheError, ValueError, OSError, ImportFailed) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
