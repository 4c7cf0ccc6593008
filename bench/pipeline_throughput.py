"""Throughput of the whole pipeline against the fake servers with a fixed latency per call.

    python bench/pipeline_throughput.py            # 50 responses, 300 ms per call
    python bench/pipeline_throughput.py --quick    # a few responses, 10 ms: a smoke run

Prints responses per minute for (a) one call at a time, as the reference code works, and
(b) our default concurrency, their ratio, the ideal time (calls x latency / concurrency)
and a rerun of (b) from the cache; then (c) the cost of (b) through the Batch API
(`--batch`) and (d) VeriFastScore (`--method verifastscore`): calls per response and
responses per minute. (a) is measured on a sample of the responses (it takes
about 4 s per response at 300 ms) and is per response, so it compares directly. In (a)
responses go one after another and each goes through extraction, retrieval and
verification with one call in flight at a time, as in the reference code.

The fake servers run in their own process so that their threads do not compete with the
pipeline for the GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.formats import read_inputs  # noqa: E402
from pipeline.run import (  # noqa: E402
    ClientConfig,
    PipelineConfig,
    build_clients,
    new_result,
    run_responses,
    run_stage,
)
from pipeline.types import ResponseInput, ResponseResult, Usage  # noqa: E402

INPUT = ROOT / "fixtures" / "pipeline" / "factscore_bios.jsonl"


def start_fakes(latency: float) -> tuple[subprocess.Popen[str], str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline.fakes", "--latency", str(latency)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    urls = json.loads(proc.stdout.readline())
    return proc, urls["openai"], urls["serper"]


async def timed_run(
    inputs: list[ResponseInput],
    *,
    llm_url: str,
    serper_url: str,
    cache: Path,
    concurrency: int,
    one_by_one: bool,
    batch: bool = False,
    method: str = "veriscore",
) -> tuple[float, Usage]:
    clients = build_clients(
        ClientConfig(
            base_url=llm_url,
            api_key="bench",
            model="gpt-4o-mini",
            serper_api_key="bench",
            serper_url=serper_url,
            cache_path=str(cache),
            concurrency=concurrency,
            batch=batch,
            batch_poll=0.05,
        )
    )
    clients.llm.batch_gather = 0.05
    config = PipelineConfig(extractor=method)
    start = time.perf_counter()
    results: list[ResponseResult] = []
    if one_by_one:
        # The reference's order: one response after another, and inside it extraction,
        # then every search, then every verification, one call at a time.
        for inp in inputs:
            done = [new_result(inp, config, clients.llm, clients.searcher)]
            for stage in ("extract", "retrieve", "verify"):
                done = await run_stage(
                    stage, done, config=config, llm=clients.llm, searcher=clients.searcher
                )
            results += done
    else:
        results = await run_responses(
            inputs, config=config, llm=clients.llm, searcher=clients.searcher
        )
    elapsed = time.perf_counter() - start
    await clients.aclose()
    clients.close()
    usage = Usage()
    for r in results:
        usage.add(r.usage)
    errors = sum(len(r.errors) for r in results)
    if errors:
        print(f"  warning: {errors} errors in the run")
    return elapsed, usage


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--responses", type=int, default=50)
    p.add_argument("--latency", type=float, default=0.3, help="seconds per call")
    p.add_argument("--concurrency", type=int, default=ClientConfig().concurrency)
    p.add_argument(
        "--sequential-sample",
        type=int,
        default=5,
        help="responses to measure (a) on; 0 = all of them",
    )
    p.add_argument("--quick", action="store_true", help="6 responses, 10 ms, sample of 2")
    args = p.parse_args(argv)
    if args.quick:
        args.responses, args.latency, args.sequential_sample = 6, 0.01, 2

    inputs = read_inputs(INPUT)[: args.responses]
    sample = inputs[: args.sequential_sample or len(inputs)]
    fakes, llm_url, serper_url = start_fakes(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            seq_time, seq_usage = asyncio.run(
                timed_run(
                    sample,
                    llm_url=llm_url,
                    serper_url=serper_url,
                    cache=Path(tmp) / "a.sqlite",
                    concurrency=1,
                    one_by_one=True,
                )
            )
            par_time, par_usage = asyncio.run(
                timed_run(
                    inputs,
                    llm_url=llm_url,
                    serper_url=serper_url,
                    cache=Path(tmp) / "b.sqlite",
                    concurrency=args.concurrency,
                    one_by_one=False,
                )
            )
            batch_time, batch_usage = asyncio.run(
                timed_run(
                    inputs,
                    llm_url=llm_url,
                    serper_url=serper_url,
                    cache=Path(tmp) / "c.sqlite",
                    concurrency=args.concurrency,
                    one_by_one=False,
                    batch=True,
                )
            )
            fast_time, fast_usage = asyncio.run(
                timed_run(
                    inputs,
                    llm_url=llm_url,
                    serper_url=serper_url,
                    cache=Path(tmp) / "d.sqlite",
                    concurrency=args.concurrency,
                    one_by_one=False,
                    method="verifastscore",
                )
            )
            rerun_time, rerun_usage = asyncio.run(
                timed_run(
                    inputs,
                    llm_url=llm_url,
                    serper_url=serper_url,
                    cache=Path(tmp) / "b.sqlite",
                    concurrency=args.concurrency,
                    one_by_one=False,
                )
            )
    finally:
        fakes.terminate()
        fakes.wait()

    seq_rpm = len(sample) / seq_time * 60
    par_rpm = len(inputs) / par_time * 60
    calls = par_usage.calls + par_usage.search_calls
    ideal = calls * args.latency / args.concurrency
    print(f"pipeline throughput: {len(inputs)} responses, {args.latency * 1000:.0f} ms per call")
    print(
        f"(a) concurrency 1:  {seq_rpm:8.1f} responses/min  "
        f"({len(sample)} responses, {seq_usage.calls + seq_usage.search_calls} calls, "
        f"{seq_time:.1f} s)"
    )
    print(
        f"(b) concurrency {args.concurrency}: {par_rpm:8.1f} responses/min  "
        f"({len(inputs)} responses, {par_usage.calls} LLM + {par_usage.search_calls} search calls, "
        f"{par_time:.1f} s)"
    )
    print(f"speed-up (b)/(a):   {par_rpm / seq_rpm:8.1f}x   (target >= 25x)")
    print(
        f"ideal time:         {ideal:8.1f} s    (calls x latency / concurrency); "
        f"actual/ideal {par_time / ideal:.2f} (target <= 1.5)"
    )
    print(
        f"rerun from cache:   {rerun_time:8.2f} s    "
        f"({rerun_usage.calls + rerun_usage.search_calls} calls; target < 2 s)"
    )
    print(
        f"(c) --batch:        ${batch_usage.cost_usd:.4f} for {batch_usage.calls} LLM calls vs "
        f"${par_usage.cost_usd:.4f} in (b) (gpt-4o-mini prices; {batch_time:.1f} s, "
        "the fake finishes a batch at once)"
    )
    fast_rpm = len(inputs) / fast_time * 60
    print(
        f"(d) VeriFastScore:  {fast_rpm:8.1f} responses/min  "
        f"({fast_usage.calls / len(inputs):.2f} LLM calls per response vs "
        f"{par_usage.calls / len(inputs):.2f} in (b); {fast_usage.search_calls} search calls, "
        f"{fast_time:.1f} s, ${fast_usage.cost_usd:.4f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
