"""Rate-limit aware concurrency against a fake provider that enforces RPM and TPM limits.

    python bench/rate_limits.py            # 600 RPM, 200,000 TPM, 2 minutes of work
    python bench/rate_limits.py --quick    # a quarter of a minute: a smoke run

The fake OpenAI server keeps a token bucket per limit (one minute's worth, refilled
continuously; a call counts its prompt and max_tokens on arrival), answers 429 with
Retry-After beyond them and sends the x-ratelimit-* headers with every answer. The client
is the pipeline's LLMClient with its default concurrency (32) and no --rpm/--tpm: it has to
find the limits from the headers. 64 workers keep it busy with distinct prompts (a quarter
of them three times longer) for the whole time.

Time runs on a scaled clock (`--scale 4`: a simulated minute lasts 15 s), shared by server
and client, so the minutes are simulated rather than waited for. Prints the calls the limit
allowed in that time (a full bucket at the start plus the refill), the calls answered,
their share of what was allowed, and the share of calls answered 429.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.fakes import FakeOpenAI  # noqa: E402
from pipeline.llm import LLMClient  # noqa: E402
from pipeline.ratelimits import Clock  # noqa: E402

WORDS = "the river flows north through old towns and wide green valleys".split()


def prompt(n: int) -> str:
    size = 1800 if n % 4 == 0 else 600  # characters: ~450 or ~150 tokens
    text = f"Call {n}: " + " ".join(WORDS[(n + i) % len(WORDS)] for i in range(size // 5))
    return text[:size]


async def run(rpm: float, tpm: float, minutes: float, scale: float, latency: float) -> dict:
    clock = Clock(scale)
    with FakeOpenAI(rpm=rpm, tpm=tpm, clock=clock, latency=latency, recorded=None) as server:
        llm = LLMClient(
            base_url=server.base_url, api_key="x", model="gpt-4o-mini", clock=clock, backoff=0.1
        )
        assert server.limits is not None
        deadline = minutes * 60
        counter = iter(range(10**9))
        snapshot: dict[str, int] = {}

        async def worker() -> None:
            while clock.now() < deadline:
                msgs = [{"role": "user", "content": prompt(next(counter))}]
                await llm.chat(msgs, max_tokens=100)

        async def watch() -> None:
            await clock.sleep(deadline)
            snapshot.update(admitted=server.limits.admitted, refused=server.limits.refused)

        started = time.monotonic()
        await asyncio.gather(watch(), *(worker() for _ in range(64)))
        wall = time.monotonic() - started
        await llm.aclose()
    allowed = rpm + rpm * minutes  # the full bucket at the start, then the refill
    sent = snapshot["admitted"] + snapshot["refused"]
    return {
        "allowed": allowed,
        "answered": snapshot["admitted"],
        "share": snapshot["admitted"] / allowed,
        "refused": snapshot["refused"],
        "refused_share": snapshot["refused"] / sent if sent else 0.0,
        "wall": wall,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rpm", type=float, default=600)
    p.add_argument("--tpm", type=float, default=200_000)
    p.add_argument("--minutes", type=float, default=2.0, help="simulated minutes of work")
    p.add_argument("--scale", type=float, default=4.0, help="simulated seconds per real second")
    p.add_argument("--latency", type=float, default=0.05, help="real seconds per call")
    p.add_argument("--quick", action="store_true", help="a quarter of a minute")
    args = p.parse_args(argv)
    if args.quick:
        args.minutes = 0.25
    r = asyncio.run(run(args.rpm, args.tpm, args.minutes, args.scale, args.latency))
    print(f"limits: {args.rpm:g} requests/min, {args.tpm:g} tokens/min, {args.minutes:g} min")
    print(f"allowed by the limits: {r['allowed']:.0f} calls (full bucket + refill)")
    print(f"answered: {r['answered']} calls = {r['share']:.1%} of the request limit")
    print(f"429s: {r['refused']} = {r['refused_share']:.2%} of calls sent")
    print(f"wall time: {r['wall']:.1f} s at scale {args.scale:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
