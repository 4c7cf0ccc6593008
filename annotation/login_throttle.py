"""Login throttling per account and per address; the same counters limit joins through
an invite link (`join_wait`).

Every count is one atomic step, never a read and then a write (two requests at once would
both read 4 and both write 5): a database row raised by one UPDATE (`ThrottleCounter`),
or the cache's own `incr` when the configured cache does it atomically (Redis, memcached,
the in-process memory cache); the database cache's `incr` reads and then writes, so with
it the database row counts.

After LOGIN_FAILURES_PER_ACCOUNT failed logins for one username, or
LOGIN_FAILURES_PER_ADDRESS from one client address, every login attempt for that account
or from that address fails (even with the right password) until LOGIN_LOCKOUT_SECONDS
after the first failure. The backend refuses the attempt, so the admin's login and any
other password login are covered; the login page says why.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.memcached import PyLibMCCache, PyMemcacheCache
from django.core.cache.backends.redis import RedisCache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.dispatch import receiver
from django.http import HttpRequest
from django.utils import timezone

from .models import ThrottleCounter

# caches whose incr() is one atomic step (the database and file caches read, then write)
ATOMIC_INCR = (RedisCache, PyMemcacheCache, PyLibMCCache, LocMemCache)


def client_address(request: HttpRequest | None) -> str:
    if request is None:
        return ""
    header = getattr(settings, "LOGIN_IP_HEADER", "")
    value = (header and request.META.get(header)) or request.META.get("REMOTE_ADDR", "")
    return str(value).split(",")[0].strip()


def _keys(username: str, request: HttpRequest | None) -> list[tuple[str, int]]:
    keys = []
    if username:
        digest = hashlib.sha256(username.casefold().encode()).hexdigest()
        keys.append((f"login-fail:user:{digest}", settings.LOGIN_FAILURES_PER_ACCOUNT))
    address = client_address(request)
    if address:
        keys.append((f"login-fail:addr:{address}", settings.LOGIN_FAILURES_PER_ADDRESS))
    return keys


def _in_cache() -> bool:
    return isinstance(caches["default"], ATOMIC_INCR)


def _count(key: str) -> int:
    """The attempts counted under `key` in its current window."""
    if _in_cache():
        return int(caches["default"].get(key) or 0)
    row = ThrottleCounter.objects.filter(key=key, until__gt=timezone.now()).first()
    return row.count if row else 0


def locked(username: str, request: HttpRequest | None) -> bool:
    return any(_count(key) >= limit for key, limit in _keys(username, request))


def record_failure(username: str, request: HttpRequest | None) -> None:
    for key, limit in _keys(username, request):
        _hit(key, limit, settings.LOGIN_LOCKOUT_SECONDS)


@receiver(user_login_failed)
def _on_failure(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **kwargs: Any
) -> None:
    record_failure(str(credentials.get("username") or ""), request)


class ThrottledModelBackend(ModelBackend):
    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if locked(username or "", request):
            raise PermissionDenied("too many failed logins")  # stops every backend
        return super().authenticate(request, username=username, password=password, **kwargs)


class ThrottledAuthenticationForm(AuthenticationForm):
    """The login form: says so when the account or the address is locked out."""

    def clean(self) -> dict[str, Any]:
        if locked(self.cleaned_data.get("username") or "", self.request):
            minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
            raise ValidationError(
                f"Too many failed logins for this account or from this address; "
                f"try again in {minutes} minutes.",
                code="throttled",
            )
        return super().clean()


def _hit(key: str, limit: int, seconds: int) -> int | None:
    """Count one attempt in a window that starts at the first (a later attempt does not
    extend it); when `limit` attempts were made already, count nothing and return the
    seconds until the window ends."""
    return _hit_cache(key, limit, seconds) if _in_cache() else _hit_row(key, limit, seconds)


def _hit_row(key: str, limit: int, seconds: int) -> int | None:
    """The database's count: each step below is one statement, so requests at once may
    interleave anywhere and each attempt still counts once, up to `limit`."""
    rows = ThrottleCounter.objects
    for _ in range(5):  # a window that ended between two steps: start over
        now = timezone.now()
        live = rows.filter(key=key, until__gt=now)
        if live.filter(count__lt=limit).update(count=F("count") + 1):
            return None
        row = live.values_list("count", "until").first()
        if row is not None:
            if row[0] >= limit:  # the limit was reached in this window
                return max(1, int((row[1] - now).total_seconds() + 0.999))
            continue  # made by another request since the update: count on it
        end = now + dt.timedelta(seconds=seconds)
        # the window ended: the first request to get here starts the next one
        if rows.filter(key=key, until__lte=now).update(count=1, until=end):
            return None
        try:
            with transaction.atomic():
                rows.create(key=key, count=1, until=end)
            rows.filter(until__lt=now - dt.timedelta(days=1)).delete()  # long-ended windows
            return None
        except IntegrityError:  # another request made the row a moment ago: count on it
            continue
    raise RuntimeError(f"throttle counter {key!r} kept changing")  # pragma: no cover


def _hit_cache(key: str, limit: int, seconds: int) -> int | None:
    """The cache's count: `add` (set if absent) starts the window, `incr` counts in one
    step; the window's end is kept beside the count."""
    cache = caches["default"]
    for _ in range(5):
        now = time.time()
        cache.add(f"{key}:until", now + seconds, timeout=seconds)
        cache.add(key, 0, timeout=seconds)
        try:
            count = cache.incr(key)
        except ValueError:  # the window ended between add and incr
            continue
        if count <= limit:
            return None
        until = cache.get(f"{key}:until") or now + seconds
        return max(1, int(until - now + 0.999))
    raise RuntimeError(f"throttle counter {key!r} kept changing")  # pragma: no cover


def _rate(rate: str) -> tuple[int, int]:
    """ "30/minute" -> (30, 60), as DRF reads a rate."""
    number, period = rate.split("/")
    return int(number), {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]]


def join_wait(request: HttpRequest, invite_key: str) -> int | None:
    """Count an attempt to join through an invite; the seconds to wait when the address
    (JOIN_RATE_PER_ADDRESS) or the invite (JOIN_RATE_PER_INVITE) used its rate up."""
    digest = hashlib.sha256(invite_key.encode()).hexdigest()
    keys = [
        (f"join:addr:{client_address(request)}", settings.JOIN_RATE_PER_ADDRESS),
        (f"join:invite:{digest}", settings.JOIN_RATE_PER_INVITE),
    ]
    for key, rate in keys:
        if rate and (wait := _hit(key, *_rate(rate))) is not None:
            return wait
    return None
