"""Login throttling per account and per address, counted in the shared cache; the
same counters limit joins through an invite link (`join_wait`).

After LOGIN_FAILURES_PER_ACCOUNT failed logins for one username, or
LOGIN_FAILURES_PER_ADDRESS from one client address, every login attempt for that account
or from that address fails (even with the right password) until LOGIN_LOCKOUT_SECONDS
after the first failure. The backend refuses the attempt, so the admin's login and any
other password login are covered; the login page says why.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.dispatch import receiver
from django.http import HttpRequest


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


def _count(key: str) -> int:
    value = cache.get(key)
    return int(value[0]) if value else 0


def locked(username: str, request: HttpRequest | None) -> bool:
    return any(_count(key) >= limit for key, limit in _keys(username, request))


def record_failure(username: str, request: HttpRequest | None) -> None:
    # (count, end of the window): the window starts at the first failure and a later
    # failure does not extend it (the database cache's incr() would reset the timeout).
    now = time.time()
    for key, _limit in _keys(username, request):
        count, until = cache.get(key) or (0, now + settings.LOGIN_LOCKOUT_SECONDS)
        cache.set(key, (count + 1, until), timeout=max(1, int(until - now)))


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
    """Count one attempt in a window that starts at the first; when `limit` attempts
    were made already, count nothing and return the seconds until the window ends."""
    now = time.time()
    count, until = cache.get(key) or (0, now + seconds)
    if count >= limit:
        return max(1, int(until - now + 0.999))
    cache.set(key, (count + 1, until), timeout=max(1, int(until - now)))
    return None


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
