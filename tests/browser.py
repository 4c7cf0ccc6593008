"""Headless Chromium for browser tests: Debian's package driven by Playwright.

`playwright install` cannot download browsers here, so we launch /usr/bin/chromium
with flags that stop it reaching for hosts that do not exist.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from tests.requires import unavailable

CHROMIUM = os.getenv("CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture
def page(live_server) -> Iterator[object]:  # type: ignore[no-untyped-def]
    executable = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    if executable is None:
        unavailable(f"Chromium is not installed at {CHROMIUM} (make test installs it as root)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls the test
    # makes between browser steps are still plain synchronous code.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=FLAGS)
        context = browser.new_context(base_url=live_server.url)
        pg = context.new_page()
        pg.set_default_timeout(60000)  # a limit for states that never come, not a wait
        yield pg
        browser.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


def autofocused(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until the page's `autofocus` element has the focus. Chromium moves the focus
    there when it next renders, which on a busy machine can come after the load event,
    so a key pressed at load can reach nothing."""
    page.wait_for_function(
        "() => { const el = document.querySelector('[autofocus]');"
        " return !!el && document.activeElement === el; }"
    )


def login(page, username: str, password: str = "") -> None:  # type: ignore[no-untyped-def]
    """Log in from the keyboard as a fixture user (password `pw-<name>` unless given)."""
    page.goto("/login/")
    autofocused(page)
    page.keyboard.type(username)
    page.keyboard.press("Tab")
    page.keyboard.type(password or "pw-" + username)
    page.keyboard.press("Enter")
    page.wait_for_selector("text=Your projects")
