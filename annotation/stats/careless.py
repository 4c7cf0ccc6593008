"""Careless answering (issue 38): the one definition the hiring rules and the annotator
pages read. Plain data, no Django.

An annotator's work is careless when either holds:

- **too fast**: their median active time on the items of a kind is under `fast_share`
  (a third) of the project's median for that kind, or under the policy's minimum time
  per item;
- **the same label**: at least `same_share` (90 %) of `run` (10) or more consecutive items
  (in the order they submitted them) got the same label in the watched field.

The thresholds are the caller's (the project's hiring policy)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

FAST_SHARE = 1 / 3
SAME_SHARE = 0.9
RUN = 10


@dataclass(frozen=True)
class Careless:
    fast_kinds: tuple[str, ...]  # kinds answered in under fast_share of the median time
    same_label: str | None  # the label repeated over a window, if any
    reasons: tuple[str, ...]  # in words, for the hiring page

    @property
    def careless(self) -> bool:
        return bool(self.reasons)


def careless(
    seconds: Mapping[str, Sequence[float]],
    project_median: Mapping[str, float],
    labels: Sequence[str],
    *,
    fast_share: float = FAST_SHARE,
    same_share: float = SAME_SHARE,
    run: int = RUN,
    min_seconds: float = 0,
) -> Careless:
    """`seconds`: kind -> this annotator's active seconds per submitted item; `project_median`:
    kind -> the project's median active seconds; `labels`: their labels of the watched
    field in submission order (None-free); `min_seconds`: the policy's minimum time per
    item (a median under it is too fast whatever the project's)."""
    reasons = []
    fast = []
    for kind, own in sorted(seconds.items()):
        if not own:
            continue
        median = project_median.get(kind) or 0
        mine = statistics.median(own)
        if median > 0 and mine < fast_share * median:
            fast.append(kind)
            reasons.append(
                f"{kind}: a median of {mine:.0f} s per item, under {fast_share:.0%} of the"
                f" project's {median:.0f} s"
            )
        elif mine < min_seconds:
            fast.append(kind)
            reasons.append(f"{kind}: a median of {mine:.0f} s per item, under {min_seconds:.0f} s")
    repeated = None
    if run > 0 and len(labels) >= run:
        need = same_share * run
        for start in range(len(labels) - run + 1):
            label, n = Counter(labels[start : start + run]).most_common(1)[0]
            if n >= need:
                repeated = label
                reasons.append(
                    f"the same label {label!r} on {n} of {run} consecutive items"
                    f" (from item {start + 1})"
                )
                break
    return Careless(tuple(fast), repeated, tuple(reasons))
