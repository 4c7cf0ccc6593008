"""Deployment hardening: `check --deploy` is clean with the production settings (docs/deployment.md)
(and warns without them); every page carries the CSP and has no inline script, event
handler attribute or style attribute that the policy would block."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import Assignment, Item, Project
from tests.servers import ROOT

# docs/deployment.md, "Roles and security", lists these values.
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "a-production-secret-key-of-more-than-fifty-characters-0123456789-xyz",
    "ALLOWED_HOSTS": "annotate.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://annotate.example.org",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SESSION_COOKIE_SECURE": "1",
    "CSRF_COOKIE_SECURE": "1",
    "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
}


def check_deploy(tmp_path: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    env = {k: v for k, v in os.environ.items() if k not in PRODUCTION and k != "DATABASE_URL"}
    env.update({"VAR_DIR": str(tmp_path), **extra})
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_check_deploy_is_clean_with_the_production_settings(tmp_path: Path) -> None:
    done = check_deploy(tmp_path, PRODUCTION)
    assert done.returncode == 0, done.stdout + done.stderr
    bare = check_deploy(tmp_path, {})
    assert bare.returncode != 0
    for code in ("W004", "W008", "W012", "W016"):
        assert f"security.{code}" in bare.stdout + bare.stderr


INLINE = [
    re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I),  # an inline script
    re.compile(r"<[^>]+\son[a-z]+\s*=", re.I),  # onclick=...
    re.compile(r"<[^>]+\sstyle\s*=", re.I),  # a style attribute
    re.compile(r"<style", re.I),
    re.compile(r"javascript:", re.I),
]


@pytest.mark.parametrize("who", ["alice", "bob"])
def test_every_page_carries_the_csp_and_nothing_it_blocks(  # type: ignore[no-untyped-def]
    client: Client,
    users: dict[str, User],
    alpha: Project,
    alpha_items: list[Item],
    alpha_verification: list[Item],
    alpha_segments: list[Item],
    who: str,
) -> None:
    client.force_login(users[who])
    pk = alpha.pk
    if who == "alice":
        urls = [
            "/",
            f"/p/{pk}/",
            f"/p/{pk}/import/",
            f"/p/{pk}/runs/",
            f"/p/{pk}/adjudication/",
            "/settings/tokens/",
            "/projects/new/",
        ]
    else:
        urls = ["/", f"/p/{pk}/queue/", f"/p/{pk}/instructions/", "/settings/tokens/"]
        urls += [f"/a/{a.pk}/" for a in Assignment.objects.filter(annotator=users["bob"])]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert "script-src 'self'" in response["Content-Security-Policy"], url
        assert "unsafe-inline" not in response["Content-Security-Policy"], url
        html = response.content.decode()
        for pattern in INLINE:
            assert not pattern.search(html), (url, pattern.pattern, pattern.search(html))
    login = Client().get("/login/")  # the login page too
    assert "script-src 'self'" in login["Content-Security-Policy"]
    assert not any(p.search(login.content.decode()) for p in INLINE)
