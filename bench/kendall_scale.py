"""Benchmark: Kendall's tau-b over bootstrap resamples (`stats.correlation._kendall`, the
example level's weighted form) at a number of distinct (x, y) points.

    .venv/bin/python bench/kendall_scale.py                   # 500, 1,500, 3,000, 10,000
    .venv/bin/python bench/kendall_scale.py --points 70 --repeat 15

SYNTHETIC points (x: 60 values, y: 80 values, so both have ties), 1,000 resamples of as
many draws as points (multinomial counts, one BLAS thread, as the report runs). Prints
per size the CPU time (the fastest of --repeat runs), the tracemalloc peak of one run and
the load average; and the sum of the taus, which any other implementation must give
exactly (the counts are whole numbers).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from measure import yardstick_line  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, action="append")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    import numpy as np
    from threadpoolctl import threadpool_limits

    from annotation.stats import correlation

    print(yardstick_line())
    for k in args.points or [500, 1_500, 3_000, 10_000]:
        rng = np.random.default_rng(k)
        a = rng.integers(0, 60, k) / 59
        b = rng.integers(0, 80, k) / 79
        w = rng.multinomial(k, np.ones(k) / k, size=args.resamples).astype(np.float64)
        known = (correlation._per_value(w, a), correlation._per_value(w, b))
        with threadpool_limits(limits=1, user_api="blas"):
            tracemalloc.start()
            taus = correlation._kendall(w, a, b, known)
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            cpu = []
            for _ in range(args.repeat):
                start = time.process_time()
                correlation._kendall(w, a, b, known)
                cpu.append(time.process_time() - start)
        print(
            f"{k:>6} points x {args.resamples} resamples: CPU {min(cpu):.3f} s, "
            f"tracemalloc peak {peak:.0f} MB, sum of taus {float(np.nansum(taus))!r}, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
    print(yardstick_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
