"""What the benchmarks measure the same way (imported by the scripts beside it: a
script's own folder is first on sys.path)."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path


def peak_rss_mb() -> float:
    """This process's own peak resident set (VmHWM): getrusage's ru_maxrss of a child
    started by subprocess counts the parent's pages at the fork (measured: a child using
    13 MB of an 800 MB parent reported 813 MB)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def yardstick() -> float:
    """CPU seconds of a fixed pure-Python loop (3,000,000 steps of `total += i * i % 7`),
    best of 3: the machine's speed in the same run as a benchmark's figures. Machines (and
    one machine at different times) differ up to 3x; a figure read against its yardstick
    compares across them."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        total = 0
        for i in range(3_000_000):
            total += i * i % 7
        best = min(best, time.process_time() - start)
    return best


def yardstick_line() -> str:
    """The yardstick and the load average, as a line to print beside the figures."""
    return (
        f"CPU yardstick {yardstick():.3f} s (3M-step Python loop, best of 3; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
