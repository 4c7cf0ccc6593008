"""Two CLI runs of the same input on one cache at the same time: calls paid twice.

    python bench/cache_two_processes.py            # 20 responses, 300 ms per call
    python bench/cache_two_processes.py --quick    # 3 responses, 20 ms: a smoke run
    python bench/cache_two_processes.py --code ../old-checkout     # another version

Both runs start together against the fake servers and share one SQLite cache (the runs
are processes of their own, so the fakes' threads here do not slow them). Prints the LLM
and search calls the servers received, how many distinct calls that was, so how many were
paid twice, and the wall time of the pair. `--code` runs the pipeline of another checkout
(e.g. one from before the lease on calls in flight).
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.fakes import FakeOpenAI, FakeSerper  # noqa: E402

INPUT = ROOT / "fixtures" / "pipeline" / "factscore_bios.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose pipeline runs")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.responses, args.latency = 3, 0.02

    with (
        FakeOpenAI(latency=args.latency) as llm,
        FakeSerper(latency=args.latency) as serper,
        tempfile.TemporaryDirectory() as tmp,
    ):
        src = Path(tmp) / "bios.jsonl"
        src.write_text("".join(INPUT.open().readlines()[: args.responses]))
        started = time.monotonic()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "pipeline", "run", str(src)]
                + ["--out", f"{tmp}/out{n}", "--cache", f"{tmp}/cache.sqlite"]
                + ["--base-url", llm.base_url, "--api-key", "k", "--model", "gpt-4o-mini"]
                + ["--serper-url", serper.url, "--serper-key", "k", "--no-progress"],
                cwd=args.code,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in range(args.processes)
        ]
        for p in procs:
            _, err = p.communicate()
            if p.returncode != 0:
                sys.exit(f"a run failed: {err[-2000:]}")
        seconds = time.monotonic() - started
        log = {
            service: [json.dumps(r["body"], sort_keys=True) for r in fake.requests]
            for service, fake in (("openai", llm), ("serper", serper))
        }
    for service in ("openai", "serper"):
        bodies = collections.Counter(log[service])
        total, distinct = sum(bodies.values()), len(bodies)
        print(
            f"{service}: {total} calls received, {distinct} distinct, {total - distinct} paid twice"
        )
    print(f"{args.processes} runs of {args.responses} responses at once: {seconds:.1f} s")


if __name__ == "__main__":
    main()
