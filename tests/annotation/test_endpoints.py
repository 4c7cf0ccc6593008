"""Endpoints belong to the operator: a run names one and a worker resolves its URL and
key from settings, so no user can make a worker send the operator's key elsewhere."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from annotation import endpoints
from annotation.models import PipelineRun, Project
from annotation.tasks import run_config, start_run
from pipeline.fakes import FakeOpenAI, FakeSerper
from pipeline.types import Usage
from tests.annotation.api_helpers import token_client
from tests.annotation.test_pipeline_runs import bios, drain, servers  # noqa: F401 - fixtures
from tests.conftest import login

CANARY = "sk-canary-OPERATOR-KEY-7f3a"


class Listener(http.server.ThreadingHTTPServer):
    """The attacker's server on loopback: records every request it gets."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        listener = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _record(self) -> None:
                listener.seen.append((self.path, self.headers.get("Authorization", "")))
                self.send_response(500)
                self.end_headers()

            do_GET = do_POST = _record

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def operator(settings, tmp_path, monkeypatch) -> Iterator[FakeOpenAI]:  # type: ignore[no-untyped-def]
    """The operator's endpoint: no PIPELINE_ENDPOINTS, so `default` from the environment."""
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("SERPER_API_KEY", "serper-key")
    monkeypatch.delenv("PIPELINE_MODEL", raising=False)
    settings.PIPELINE_ENDPOINTS = []
    settings.PIPELINE_CACHE_PATH = str(tmp_path / "cache.sqlite")
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    with FakeOpenAI(latency=0.0) as llm, FakeSerper(latency=0.0) as serper:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        settings.PIPELINE_SERPER_URL = serper.url
        yield llm


@pytest.mark.slow
def test_a_user_chosen_url_never_receives_the_operators_key(  # type: ignore[no-untyped-def]
    client,
    operator: FakeOpenAI,
    listener: Listener,
    bios: Project,  # noqa: F811
) -> None:
    alice = User.objects.get(username="alice")
    fields = {
        "extractor": "veriscore",
        "label_mode": "binary",
        "model": "gpt-4o-mini",
        "retriever": "serper",
        "chunk_size": "3",
    }
    # the page: a base_url field is not part of the form; a URL as endpoint is refused
    login(client, alice).post(
        reverse("pipeline_runs", args=[bios.pk]),
        {**fields, "base_url": listener.url, "endpoint": "default"},
    )
    page = client.post(
        reverse("pipeline_runs", args=[bios.pk]), {**fields, "endpoint": listener.url}
    )
    assert page.status_code == 200 and "errorlist" in page.content.decode()
    # the API: base_url (or a key) is an unknown field
    api = token_client(alice).post(
        f"/api/projects/{bios.pk}/pipeline-runs/",
        {**fields, "base_url": listener.url},
        format="json",
    )
    assert api.status_code == 400 and api.json()["field"] == "base_url"
    # a run from before endpoints existed, its config still holding a URL
    start_run(project=bios, user=alice, config={**run_config(), "base_url": listener.url})
    assert PipelineRun.objects.count() == 2
    drain()
    assert listener.seen == []
    assert {r.status for r in PipelineRun.objects.all()} == {PipelineRun.FINISHED}
    assert operator.requests  # the work was done, at the operator's endpoint


def test_a_configured_endpoint_is_named_and_its_models_are_enforced(settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LOCAL_KEY", "k-local")
    settings.PIPELINE_ENDPOINTS = [
        {
            "name": "local-vllm",
            "base_url": "http://127.0.0.1:8001/v1",
            "api_key_env": "LOCAL_KEY",
            "models": ["llama3.1:8b"],
            "prices": {"llama3.1:8b": [1.0, 2.0]},
        },
    ]
    endpoint = endpoints.check("local-vllm", "llama3.1:8b")
    assert endpoint.api_key() == "k-local" and endpoints.first() == "local-vllm"
    assert endpoints.choices() == [("local-vllm", "local-vllm (llama3.1:8b)")]
    with pytest.raises(ValueError, match="does not serve model"):
        run_config(endpoint="local-vllm", model="gpt-4o")
    with pytest.raises(ValueError, match="unknown endpoint 'default'"):
        run_config(model="llama3.1:8b")
    config = run_config(endpoint="local-vllm", model="llama3.1:8b")
    usage = Usage(calls=1, prompt_tokens=1_000_000, completion_tokens=500_000, cost_usd=9.0)
    assert endpoints.run_cost(config, usage) == 2.0  # the operator's prices, not the table's
    settings.PIPELINE_ENDPOINTS = [{"name": "x", "base_url": "file:///etc/passwd"}]
    with pytest.raises(ImproperlyConfigured, match=r"PIPELINE_ENDPOINTS\[0\].base_url"):
        endpoints.endpoints()
    settings.PIPELINE_ENDPOINTS = [{"name": "x", "api_key": "sk-inline"}]
    with pytest.raises(ImproperlyConfigured, match="api_key"):
        endpoints.endpoints()
    assert [e.id for e in endpoints.check_endpoints()] == ["annotation.E001"]


def test_the_migration_keeps_an_old_base_url_unused(bios: Project) -> None:  # noqa: F811
    import importlib

    from django.apps import apps

    migration = importlib.import_module("annotation.migrations.0004_sec_pipeline_endpoint")
    old = PipelineRun.objects.create(project=bios, config={"model": "m", "base_url": "http://x/v1"})
    migration.forwards(apps, None)
    old.refresh_from_db()
    assert old.config == {"model": "m", "endpoint": "default", "unused_base_url": "http://x/v1"}


def test_a_run_body_that_is_not_an_object_is_a_400(bios: Project) -> None:  # noqa: F811
    response = token_client(User.objects.get(username="alice")).post(
        f"/api/projects/{bios.pk}/pipeline-runs/", [{"base_url": "http://x"}], format="json"
    )
    assert response.status_code == 400 and not PipelineRun.objects.exists()


def test_the_demos_fake_comes_first_takes_no_key_and_is_named_as_a_fake(  # type: ignore[no-untyped-def]
    settings,
    monkeypatch,
    listener: Listener,
    bios: Project,  # noqa: F811
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.delenv("PIPELINE_MODEL", raising=False)
    settings.PIPELINE_ENDPOINTS = []
    settings.PIPELINE_DEMO_FAKE = f"127.0.0.1:{listener.server_address[1]}"
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    assert list(endpoints.endpoints()) == ["fake", "default"] and endpoints.first() == "fake"
    assert endpoints.default_model() == "deterministic-fake"
    assert endpoints.choices()[0] == (
        "fake",
        "fake (deterministic-fake): a deterministic fake server for the demo, not a model",
    )
    with pytest.raises(ValueError, match="does not serve model 'gpt-4o-mini'"):
        run_config(endpoint="fake", model="gpt-4o-mini")  # no real model's name on a fake
    # a run on the fake: its calls carry no key, never the operator's (the listener records them)
    settings.PIPELINE_CHUNK_ATTEMPTS = 1
    config = run_config(endpoint="fake", model="deterministic-fake", max_retries=0, backoff=0.0)
    start_run(project=bios, user=None, config=config)
    drain()
    assert listener.seen and all(CANARY not in auth for _, auth in listener.seen)
    settings.PIPELINE_DEMO_FAKE = "not an address/x"
    with pytest.raises(ImproperlyConfigured, match="PIPELINE_DEMO_FAKE: not host:port"):
        endpoints.endpoints()
    settings.PIPELINE_DEMO_FAKE = "127.0.0.1:8010"
    settings.PIPELINE_ENDPOINTS = [{"name": "fake", "base_url": "http://10.0.0.5/v1"}]
    with pytest.raises(ImproperlyConfigured, match="already has 'fake'"):
        endpoints.endpoints()


def test_an_endpoint_declares_its_api_and_serves_reference_runs_on_it(settings) -> None:  # type: ignore[no-untyped-def]
    """An endpoint's `api` (chat, completions, anthropic) picks the released VeriScore's
    path for both stages of a reference run; another API than chat outside the reference
    mode, or an unknown one, is refused naming it."""
    from tests.conftest import peer_file

    prompts = peer_file("veriscore/prompt")
    settings.PIPELINE_REFERENCE_PROMPTS = str(prompts)
    settings.PIPELINE_REFERENCE_SPLITTER = "spacy:sentencizer"
    settings.PIPELINE_ENDPOINTS = [
        {"name": "vllm", "base_url": "http://127.0.0.1:8000/v1", "api": "completions"},
        {"name": "claude", "base_url": "https://api.anthropic.com", "api": "anthropic",
         "api_key_env": "ANTHROPIC_API_KEY"},
        {"name": "openai"},
    ]  # fmt: skip
    assert [e.api for e in endpoints.endpoints().values()] == ["completions", "anthropic", "chat"]
    run = {"extractor": "veriscore", "label_mode": "binary", "reference": "veriscore"}
    for name, api in (("vllm", "completions"), ("claude", "anthropic"), ("openai", "chat")):
        config = endpoints.pipeline_config({**run, "endpoint": name})
        assert (config.extraction_api, config.verification_api) == (api, api)
    with pytest.raises(ValueError, match="needs --reference veriscore"):
        endpoints.pipeline_config({**run, "reference": None, "endpoint": "vllm"})
    settings.PIPELINE_ENDPOINTS = [{"name": "x", "api": "grpc"}]
    with pytest.raises(ImproperlyConfigured, match=r"PIPELINE_ENDPOINTS\[0\]\.api"):
        endpoints.endpoints()


@pytest.mark.slow
@pytest.mark.parametrize("api", ["completions", "anthropic"])
def test_a_reference_run_on_such_an_endpoint_takes_the_released_path(  # type: ignore[no-untyped-def]
    servers,  # noqa: F811
    bios: Project,  # noqa: F811
    settings,
    api: str,
) -> None:
    from tests.annotation.test_pipeline_runs import config_for
    from tests.annotation.test_reference_runs import set_up_reference

    set_up_reference(settings)
    llm, _ = servers
    llm.verdicts = "label-first"  # the released verdict rule reads the label first
    config = config_for(llm, reference="veriscore")
    base_url = llm.base_url if api == "completions" else llm.url
    settings.PIPELINE_ENDPOINTS = [{"name": "fake", "base_url": base_url, "api": api}]
    run = start_run(project=bios, user=None, config=config)
    drain()
    run.refresh_from_db()
    assert run.status == PipelineRun.FINISHED, run.errors
    path = {"completions": "/v1/completions", "anthropic": "/v1/messages"}[api]
    assert llm.requests and {r["path"] for r in llm.requests} == {path}
    assert run.scores["run"]["mode"] == "veriscore"
    # outside the reference mode the endpoint is refused before any call
    with pytest.raises(ValueError, match="needs --reference veriscore"):
        run_config(model="gpt-4o-mini", endpoint="fake")
