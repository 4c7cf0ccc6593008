"""Pipeline endpoints belong to the operator.

An endpoint is named in settings (`PIPELINE_ENDPOINTS`, a JSON list in the environment
variable of the same name): base URL, the environment variable that holds its API key,
the models it may be asked for and, optionally, prices. A run names an endpoint; the
worker resolves its URL and key here at run time, so no user can make a worker send the
operator's key to a URL of their choosing. Without configuration there is one endpoint,
`default`, built from OPENAI_BASE_URL and OPENAI_API_KEY.

The demo adds one more (`PIPELINE_DEMO_FAKE`, set by `make demo`): `fake`, the project's
deterministic fake OpenAI server (pipeline/fakes.py), so a newcomer can watch a run finish
without a key. It answers from recorded outputs and word overlap; it is not a model, and its
one model name, `deterministic-fake`, says so in every run and system it makes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.validators import URLValidator

from pipeline.llm import APIS
from pipeline.run import PipelineConfig

DEFAULT = "default"
FAKE = "fake"
FAKE_MODEL = "deterministic-fake"


@dataclass(frozen=True)
class Endpoint:
    name: str
    base_url: str  # empty: the client library's default (OpenAI)
    api_key_env: str = "OPENAI_API_KEY"
    models: tuple[str, ...] = ()  # empty: any model
    # model -> (USD per million input tokens, per million output tokens)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    description: str = ""  # shown beside the name in forms
    # The API it speaks (pipeline.llm.APIS): "chat" (OpenAI chat completions), "completions"
    # (/v1/completions of vLLM, llama.cpp's server, TGI, Ollama: the released VeriScore's
    # fine-tuned checkpoints) or "anthropic" (the Messages API; base_url without /v1, e.g.
    # https://api.anthropic.com). The last two serve only `--reference veriscore` runs.
    api: str = "chat"

    def allows(self, model: str) -> bool:
        return not self.models or model in self.models

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) or None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        """The cost at this endpoint's own prices, or None when it sets none for `model`."""
        if model not in self.prices:
            return None
        p_in, p_out = self.prices[model]
        return (prompt_tokens * p_in + completion_tokens * p_out) / 1_000_000


def _parse(entry: Any, n: int) -> Endpoint:
    where = f"PIPELINE_ENDPOINTS[{n}]"
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
        raise ImproperlyConfigured(f"{where}: an object with a 'name' string is needed")
    unknown = set(entry) - {"name", "base_url", "api_key_env", "models", "prices", "api"}
    if unknown:
        raise ImproperlyConfigured(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    base_url = str(entry.get("base_url") or "")
    try:
        if base_url:
            URLValidator(schemes=["http", "https"])(base_url)
    except ValidationError:
        raise ImproperlyConfigured(f"{where}.base_url: not an http(s) URL: {base_url!r}") from None
    models = entry.get("models") or []
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise ImproperlyConfigured(f"{where}.models: a list of model names is needed")
    prices = entry.get("prices") or {}
    if not isinstance(prices, dict) or not all(
        isinstance(v, list | tuple) and len(v) == 2 for v in prices.values()
    ):
        raise ImproperlyConfigured(f"{where}.prices: {{model: [input, output]}} is needed")
    api = entry.get("api") or "chat"
    if api not in APIS:
        raise ImproperlyConfigured(f"{where}.api: one of {', '.join(APIS)}, not {api!r}")
    return Endpoint(
        api=api,
        name=entry["name"],
        base_url=base_url,
        api_key_env=str(entry.get("api_key_env") or "OPENAI_API_KEY"),
        models=tuple(models),
        prices={m: (float(p[0]), float(p[1])) for m, p in prices.items()},
    )


def fake(address: str) -> Endpoint:
    """The demo's fake provider at `address` (host:port of `python -m pipeline.fakes`).
    No key goes to it (api_key_env is empty): the operator's OpenAI key never leaves for it."""
    base_url = f"http://{address}/v1"
    try:
        URLValidator(schemes=["http"])(base_url)
    except ValidationError:
        raise ImproperlyConfigured(f"PIPELINE_DEMO_FAKE: not host:port: {address!r}") from None
    return Endpoint(
        FAKE,
        base_url,
        api_key_env="",
        models=(FAKE_MODEL,),
        prices={FAKE_MODEL: (0.0, 0.0)},
        description="a deterministic fake server for the demo, not a model",
    )


def endpoints() -> dict[str, Endpoint]:
    """The configured endpoints by name, read from settings on every call (so the
    worker sees the operator's current configuration, not what a run was started with).
    The demo's fake, when configured, comes first: the form offers it by default."""
    configured = getattr(settings, "PIPELINE_ENDPOINTS", None) or []
    if configured:
        found = {e.name: e for e in (_parse(e, n) for n, e in enumerate(configured))}
    else:
        found = {DEFAULT: Endpoint(DEFAULT, os.environ.get("OPENAI_BASE_URL", ""))}
    address = getattr(settings, "PIPELINE_DEMO_FAKE", "")
    if not address:
        return found
    if FAKE in found:
        raise ImproperlyConfigured(f"PIPELINE_DEMO_FAKE: PIPELINE_ENDPOINTS already has {FAKE!r}")
    return {FAKE: fake(address), **found}


def get(name: str) -> Endpoint:
    """The endpoint called `name`; ValueError names the ones that exist."""
    known = endpoints()
    if name not in known:
        raise ValueError(f"unknown endpoint {name!r}; configured: {', '.join(known)}")
    return known[name]


def check(name: str, model: str) -> Endpoint:
    """The endpoint, when it may be asked for `model`; ValueError otherwise."""
    endpoint = get(name)
    if not endpoint.allows(model):
        raise ValueError(
            f"endpoint {name!r} does not serve model {model!r}; "
            f"allowed: {', '.join(endpoint.models)}"
        )
    return endpoint


def first() -> str:
    """The name of the first endpoint: what a form or the API offers by default."""
    return next(iter(endpoints()))


def choices() -> list[tuple[str, str]]:
    """(name, label) for forms: names only, never a URL or a key."""
    return [
        (
            e.name,
            e.name
            + (f" ({', '.join(e.models)})" if e.models else "")
            + (f": {e.description}" if e.description else ""),
        )
        for e in endpoints().values()
    ]


def default_model() -> str:
    """The model a form offers first: PIPELINE_MODEL, else the first endpoint's first
    model when it names its models, else gpt-4o-mini."""
    first_models = next(iter(endpoints().values())).models
    return os.environ.get("PIPELINE_MODEL") or (first_models[0] if first_models else "gpt-4o-mini")


def run_cost(config: dict[str, Any], usage: Any) -> float:
    """A run's cost for `usage` (pipeline.types.Usage): at the endpoint's own prices when
    the operator set them for the run's model, else the pipeline's price table."""
    try:
        endpoint = get(config.get("endpoint") or DEFAULT)
    except ValueError:
        return float(usage.cost_usd)
    cost = endpoint.cost(config.get("model", ""), usage.prompt_tokens, usage.completion_tokens)
    return float(usage.cost_usd) if cost is None else cost


@checks.register()
def check_endpoints(**kwargs: Any) -> list[checks.CheckMessage]:
    """`manage.py check` (and every server start) names a malformed PIPELINE_ENDPOINTS."""
    try:
        endpoints()
    except ImproperlyConfigured as e:
        return [checks.Error(str(e), id="annotation.E001")]
    return []


def pipeline_config(config: dict[str, Any]) -> PipelineConfig:
    """The pipeline's config of a run. A reference run's templates and splitter are the
    operator's settings, never the researcher's input; unset, it is an error."""
    reference = config.get("reference") or None
    prompt_dir, splitter = None, None
    if reference:
        prompt_dir = {
            "veriscore": settings.PIPELINE_REFERENCE_PROMPTS,
            "verifastscore": settings.PIPELINE_VERIFASTSCORE_PROMPTS,
        }.get(reference)
        if not prompt_dir:
            raise ValueError(
                f"The reference mode {reference!r} is not set up on this server (the operator "
                "sets PIPELINE_REFERENCE_PROMPTS / PIPELINE_VERIFASTSCORE_PROMPTS)."
            )
        splitter = settings.PIPELINE_REFERENCE_SPLITTER
    try:
        api = get(config.get("endpoint") or DEFAULT).api
    except ValueError:
        api = "chat"  # an unknown endpoint is refused by check()
    return PipelineConfig(
        extractor=config["extractor"],
        label_mode=config["label_mode"],
        reference=reference,
        prompt_dir=prompt_dir,
        splitter=splitter,
        extraction_api=api,
        verification_api=api,
    )


_URL = re.compile(r"https?://[^\s'\"<>]+")


def redact(text: str) -> str:
    """`text` as researchers may read it (a run's error): a configured endpoint's URL
    becomes its name, the search service's "the search service", any other URL "(a
    URL)": the operator's internal addresses are not shown."""
    bases = sorted(
        ((e.base_url.rstrip("/"), e.name) for e in endpoints().values() if e.base_url),
        key=lambda pair: -len(pair[0]),
    )
    search = str(getattr(settings, "PIPELINE_SERPER_URL", "")).rstrip("/")

    def named(match: re.Match[str]) -> str:
        url = match[0]
        for base, name in bases:
            if url.startswith(base):
                return f"the endpoint {name!r}"
        if search and url.startswith(search):
            return "the search service"
        return "(a URL)"

    return _URL.sub(named, text)
