"""Following the provider's rate limits: what its headers say, and a clock to read them by.

OpenAI (and vLLM, Azure, most OpenAI-compatible gateways) answer every call with

    x-ratelimit-limit-requests / -tokens       the per-minute limits
    x-ratelimit-remaining-requests / -tokens   what is left of them now
    x-ratelimit-reset-requests / -tokens       when they are whole again ("6m0s", "20ms")

and a 429 with `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date
(`retry_after`). `ProviderLimits` learns the limits from the first
answer, paces calls with a token bucket per limit at that rate (synced down to what the
provider says is left), waits out a Retry-After for every call rather than only the one
that got it, and adapts the number of calls in flight: halved on a 429, one more per
answer up to the configured concurrency. `--rpm`/`--tpm` are optional caps on top.

`Clock` is the time all of this runs on; `Clock(scale=60)` makes a minute last a second,
so the fake server and the benchmark can simulate minutes of rate-limited work quickly.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import re
import time
from collections.abc import Mapping


class Clock:
    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.origin = time.monotonic()

    def now(self) -> float:
        return (time.monotonic() - self.origin) * self.scale

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.scale)

    def sleep_sync(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds) / self.scale)


REAL_TIME = Clock()

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def parse_duration(text: str | None) -> float | None:
    """'6m0s' -> 360.0, '20ms' -> 0.02, '1.5' -> 1.5; None when unreadable."""
    if not text:
        return None
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    unit = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * unit[u] for n, u in parts)


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait as the answer asks: `retry-after-ms` (OpenAI's), else `Retry-After`
    as seconds or as an HTTP date (RFC 9110), counted from `now` (epoch seconds, default
    the wall clock); None when the answer says nothing readable. `headers`' names in
    lower case."""
    ms = _number(headers, "retry-after-ms")
    if ms is not None and ms >= 0:
        return ms / 1000
    value = headers.get("retry-after")
    seconds = parse_duration(value)
    if seconds is not None or not value:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _number(headers: Mapping[str, str], name: str) -> float | None:
    value = headers.get(name)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class Bucket:
    """A token bucket refilled continuously: `per_minute` units, at most one minute's worth."""

    def __init__(self, per_minute: float, clock: Clock) -> None:
        self.clock = clock
        self.capacity = per_minute
        self.level = per_minute
        self.stamp = clock.now()

    @property
    def rate(self) -> float:
        return self.capacity / 60.0

    def refill(self) -> None:
        now = self.clock.now()
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until `amount` is there (0: take it now, and it is taken)."""
        amount = min(amount, self.capacity)
        self.refill()
        if self.level >= amount:
            self.level -= amount
            return 0.0
        return (amount - self.level) / self.rate


class ProviderLimits:
    def __init__(
        self,
        *,
        concurrency: int,
        rpm: float | None = None,
        tpm: float | None = None,
        clock: Clock = REAL_TIME,
    ) -> None:
        self.clock = clock
        self.max_in_flight = concurrency
        self.allowed = float(concurrency)  # adapted: halved on a 429, +1 per answer
        self.in_flight = 0
        self.cap_rpm, self.cap_tpm = rpm, tpm
        self.requests = Bucket(rpm, clock) if rpm else None
        self.tokens = Bucket(tpm, clock) if tpm else None
        self.blocked_until = 0.0
        self.rate_limited = 0  # 429s seen
        self.lock = asyncio.Lock()
        self.changed = asyncio.Condition(self.lock)

    def _learn(self, which: str, limit: float | None, remaining: float | None) -> None:
        bucket: Bucket | None = getattr(self, which)
        cap = self.cap_rpm if which == "requests" else self.cap_tpm
        if limit:
            limit = min(limit, cap) if cap else limit
            if bucket is None or bucket.capacity != limit:
                old = bucket.level if bucket is not None else limit
                bucket = Bucket(limit, self.clock)
                bucket.level = min(old, limit)
                setattr(self, which, bucket)
        if bucket is not None and remaining is not None:
            bucket.refill()
            bucket.level = min(bucket.level, remaining)

    async def acquire(self, tokens: float) -> None:
        """Wait for a slot in flight, for the provider's say-so and for both budgets."""
        async with self.changed:
            while True:
                if self.in_flight >= max(1, int(self.allowed)):
                    await self.changed.wait()
                    continue
                wait = self.blocked_until - self.clock.now()
                if wait <= 0 and self.requests is not None:
                    wait = self.requests.wait_for(1)
                    if wait <= 0 and self.tokens is not None:
                        wait = self.tokens.wait_for(tokens)
                        if wait > 0:
                            self.requests.level += 1  # give the request back; retry both
                elif wait <= 0 and self.tokens is not None:
                    wait = self.tokens.wait_for(tokens)
                if wait <= 0:
                    self.in_flight += 1
                    return
                # Sleep without the lock: others may finish and answers may bring news.
                self.lock.release()
                try:
                    await self.clock.sleep(wait)
                finally:
                    await self.lock.acquire()

    async def release(
        self, headers: Mapping[str, str] | None, *, rate_limited: bool = False
    ) -> None:
        async with self.changed:
            self.in_flight -= 1
            h = {k.lower(): v for k, v in (headers or {}).items()}
            for kind in ("requests", "tokens"):
                self._learn(
                    kind,
                    _number(h, f"x-ratelimit-limit-{kind}"),
                    _number(h, f"x-ratelimit-remaining-{kind}"),
                )
            if rate_limited:
                self.rate_limited += 1
                self.allowed = max(1.0, self.allowed / 2)
                wait = retry_after(h)
                if wait is None:
                    wait = parse_duration(h.get("x-ratelimit-reset-requests")) or 1.0
                self.blocked_until = max(self.blocked_until, self.clock.now() + wait)
            else:
                self.allowed = min(float(self.max_in_flight), self.allowed + 1)
            self.changed.notify(2)  # the slot freed, and the one an answer may add
