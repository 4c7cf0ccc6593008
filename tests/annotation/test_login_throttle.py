"""Login throttling: after the limit of failures for an account, or from an address,
even the right password is refused, on the login page and the admin's alike."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.urls import reverse


@pytest.fixture(autouse=True)
def empty_cache(settings, db: None) -> None:  # type: ignore[no-untyped-def]
    settings.LOGIN_FAILURES_PER_ACCOUNT = 5
    settings.LOGIN_FAILURES_PER_ADDRESS = 8
    cache.clear()


def log_in(username: str, password: str, address: str, url: str = "/login/") -> bool:
    client = Client(REMOTE_ADDR=address)
    client.post(url, {"username": username, "password": password})
    return "_auth_user_id" in client.session


def test_thirty_wrong_passwords_then_the_right_one_is_refused(users: dict[str, User]) -> None:
    assert not log_in("alice", "wrong", "10.0.0.1")
    for n in range(29):
        log_in("alice", f"wrong-{n}", f"10.0.1.{n}")  # from many addresses
    client = Client(REMOTE_ADDR="10.0.2.1")
    page = client.post(reverse("login"), {"username": "alice", "password": "pw-alice"})
    assert "_auth_user_id" not in client.session
    assert "Too many failed logins" in page.content.decode()
    users["alice"].is_staff = True
    users["alice"].save()
    assert not log_in("alice", "pw-alice", "10.0.2.2", url="/admin/login/")
    assert log_in("bob", "pw-bob", "10.0.2.3")  # other accounts are not affected


def test_the_limit_is_per_account_and_per_address(users: dict[str, User]) -> None:
    for _ in range(4):
        assert not log_in("carol", "wrong", "10.0.0.9")
    assert log_in("carol", "pw-carol", "10.0.0.9")  # 4 < 5: still allowed
    for n in range(8):
        log_in(f"nobody-{n}", "guess", "10.9.9.9")  # one address, many usernames
    assert not log_in("bob", "pw-bob", "10.9.9.9")
    assert log_in("bob", "pw-bob", "10.9.9.10")
