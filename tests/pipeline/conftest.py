from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.run import ClientConfig, Clients, build_clients

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
# The peer projects' released data, beside the repository as in CI (../shared/peer-data).
# PEER_DATA overrides it (a git worktree elsewhere).
PEER_DATA = Path(os.environ.get("PEER_DATA") or REPO.parent / "shared" / "peer-data")


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def fake_serper() -> Iterator[FakeSerper]:
    with FakeSerper() as server:
        yield server


@pytest.fixture
def client_config(fake_llm: FakeOpenAI, fake_serper: FakeSerper, tmp_path: Path) -> ClientConfig:
    return ClientConfig(
        base_url=fake_llm.base_url,
        api_key="test-key",
        model="gpt-4o-mini",
        serper_api_key="test-key",
        serper_url=fake_serper.url,
        cache_path=str(tmp_path / "cache.sqlite"),
        concurrency=8,
        backoff=0.0,
        timeout=60.0,  # a guard against a hung call, far from any answer's time
    )


@pytest.fixture
def clients(client_config: ClientConfig) -> Iterator[Clients]:
    c = build_clients(client_config)
    yield c
    c.close()
