"""What the benchmarks measure the same way (imported by the scripts beside it: a
script's own folder is first on sys.path)."""

from __future__ import annotations

import resource
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
