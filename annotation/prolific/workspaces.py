"""Prolific workspaces belong to the operator, as LLM endpoints do (endpoints.py).

A workspace is named in settings (`PROLIFIC_WORKSPACES`, a JSON list in the environment
variable of the same name): the API's base URL (Prolific's unless set), the environment
variable holding its API token, and the largest bonus one worker may get in one payment.
A project picks a workspace by name (`HiringPolicy.prolific_workspace`); the token is read
here at call time, so no researcher can make the server send the operator's token to a
URL of their choosing, and no token is stored in the database.

The demo adds one more (`PROLIFIC_DEMO_FAKE`, host:port of `python -m
annotation.prolific.fake`): `fake`, the fake Prolific server, with the fake's own token.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.validators import URLValidator

from .client import BASE_URL, Client
from .fake import TOKEN as FAKE_TOKEN  # the demo fake's: not a secret, not Prolific's

FAKE = "fake"
DEFAULT_MAX_BONUS = Decimal("20.00")


@dataclass(frozen=True)
class Workspace:
    name: str
    token_env: str
    base_url: str = BASE_URL
    max_bonus: Decimal = DEFAULT_MAX_BONUS  # per worker and payment, in the account currency
    description: str = ""
    fixed_token: str = ""  # the demo fake only

    def token(self) -> str:
        return self.fixed_token or os.environ.get(self.token_env, "")

    def client(self, **kwargs: Any) -> Client:
        """A client for this workspace; ValueError when its token is not set."""
        token = self.token()
        if not token:
            raise ValueError(
                f"The Prolific workspace {self.name!r} has no token: the operator sets "
                f"the environment variable {self.token_env}."
            )
        return Client(self.base_url, token, **kwargs)


def _parse(entry: Any, n: int) -> Workspace:
    where = f"PROLIFIC_WORKSPACES[{n}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
        raise ImproperlyConfigured(f"{where}: an object with a 'name' string is needed")
    unknown = set(entry) - {"name", "token_env", "base_url", "max_bonus", "description"}
    if unknown:
        raise ImproperlyConfigured(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    token_env = entry.get("token_env")
    if not isinstance(token_env, str) or not token_env:
        raise ImproperlyConfigured(f"{where}.token_env: the environment variable's name")
    base_url = str(entry.get("base_url") or BASE_URL)
    try:
        URLValidator(schemes=["http", "https"])(base_url)
    except ValidationError:
        raise ImproperlyConfigured(f"{where}.base_url: not an http(s) URL: {base_url!r}") from None
    try:
        max_bonus = Decimal(str(entry.get("max_bonus", DEFAULT_MAX_BONUS)))
    except InvalidOperation:
        raise ImproperlyConfigured(f"{where}.max_bonus: a number") from None
    if not max_bonus.is_finite() or max_bonus <= 0:
        raise ImproperlyConfigured(f"{where}.max_bonus: a positive number")
    return Workspace(
        entry["name"],
        token_env,
        base_url if base_url.endswith("/") else base_url + "/",
        max_bonus,
        str(entry.get("description") or ""),
    )


def fake(address: str) -> Workspace:
    """The demo's fake Prolific at `address` (host:port of `python -m
    annotation.prolific.fake`), with the fake's token: no operator token goes to it."""
    base_url = f"http://{address}/api/v1/"
    try:
        URLValidator(schemes=["http"])(base_url)
    except ValidationError:
        raise ImproperlyConfigured(f"PROLIFIC_DEMO_FAKE: not host:port: {address!r}") from None
    return Workspace(
        FAKE,
        "",
        base_url,
        DEFAULT_MAX_BONUS,
        "a fake Prolific server for the demo: nobody is recruited or paid",
        fixed_token=FAKE_TOKEN,
    )


def workspaces() -> dict[str, Workspace]:
    """The configured workspaces by name, read from settings on every call."""
    found = {
        w.name: w
        for w in (
            _parse(e, n) for n, e in enumerate(getattr(settings, "PROLIFIC_WORKSPACES", []) or [])
        )
    }
    address = getattr(settings, "PROLIFIC_DEMO_FAKE", "")
    if not address:
        return found
    if FAKE in found:
        raise ImproperlyConfigured(f"PROLIFIC_DEMO_FAKE: PROLIFIC_WORKSPACES already has {FAKE!r}")
    return {FAKE: fake(address), **found}


def get(name: str) -> Workspace:
    """The workspace called `name`; ValueError names the ones that exist."""
    known = workspaces()
    if not name:
        raise ValueError("This project uses no Prolific workspace (the hiring page picks one).")
    if name not in known:
        raise ValueError(
            f"unknown Prolific workspace {name!r}; configured: {', '.join(known) or 'none'}"
        )
    return known[name]


def choices() -> list[tuple[str, str]]:
    """(name, label) for forms: names only, never a URL or a token."""
    return [("", "none (the manual path)")] + [
        (w.name, w.name + (f": {w.description}" if w.description else ""))
        for w in workspaces().values()
    ]


@checks.register()
def check_workspaces(**kwargs: Any) -> list[checks.CheckMessage]:
    """`manage.py check` names a malformed PROLIFIC_WORKSPACES."""
    try:
        workspaces()
    except ImproperlyConfigured as e:
        return [checks.Error(str(e), id="annotation.E002")]
    return []
