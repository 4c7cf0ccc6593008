"""The API write limit holds across processes: two real server processes share one
count (the database cache), so a user cannot multiply it by the number of workers."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.servers import manage, servers, site_env


def post(url: str, token: str, body: dict[str, str]) -> int:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


@pytest.mark.slow
def test_two_server_processes_share_the_api_write_limit(tmp_path: Path) -> None:
    # per hour, so however slow the machine the window does not roll over mid-test
    env = site_env(tmp_path, API_WRITE_RATE="4/hour")
    manage(env, "migrate", "--noinput", "-v", "0")
    token = (
        manage(
            env,
            "shell",
            "-c",
            (
                "from django.contrib.auth.models import User; from rest_framework.authtoken.models import Token; "  # noqa: E501
                "u = User.objects.create_superuser('root', password='x'); print(Token.objects.create(user=u).key)"  # noqa: E501
            ),
        )
        .strip()
        .splitlines()[-1]
    )
    with servers(env, 2) as (one, two):
        codes = [
            post(f"{url}/api/projects/", token, {"name": f"p{i}"})
            for i, url in enumerate([one, two] * 4)
        ]
    assert codes.count(201) == 4 and codes.count(429) == 4, codes
    assert codes[:4] == [201] * 4
