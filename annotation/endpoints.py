"""Pipeline endpoints belong to the operator.

An endpoint is named in settings (`PIPELINE_ENDPOINTS`, a JSON list in the environment
variable of the same name): base URL, the environment variable that holds its API key,
the models it may be asked for and, optionally, prices. A run names an endpoint; the
worker resolves its URL and key here at run time, so no user can make a worker send the
operator's key to a URL of their choosing. Without configuration there is one endpoint,
`default`, built from OPENAI_BASE_URL and OPENAI_API_KEY.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.core.validators import URLValidator

from pipeline.run import PipelineConfig

DEFAULT = "default"


@dataclass(frozen=True)
class Endpoint:
    name: str
    base_url: str  # empty: the client library's default (OpenAI)
    api_key_env: str = "OPENAI_API_KEY"
    models: tuple[str, ...] = ()  # empty: any model
    # model -> (USD per million input tokens, per million output tokens)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)

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
    unknown = set(entry) - {"name", "base_url", "api_key_env", "models", "prices"}
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
    return Endpoint(
        name=entry["name"],
        base_url=base_url,
        api_key_env=str(entry.get("api_key_env") or "OPENAI_API_KEY"),
        models=tuple(models),
        prices={m: (float(p[0]), float(p[1])) for m, p in prices.items()},
    )


def endpoints() -> dict[str, Endpoint]:
    """The configured endpoints by name, read from settings on every call (so the
    worker sees the operator's current configuration, not what a run was started with)."""
    configured = getattr(settings, "PIPELINE_ENDPOINTS", None) or []
    if not configured:
        return {DEFAULT: Endpoint(DEFAULT, os.environ.get("OPENAI_BASE_URL", ""))}
    parsed = [_parse(e, n) for n, e in enumerate(configured)]
    return {e.name: e for e in parsed}


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
        (e.name, e.name + (f" ({', '.join(e.models)})" if e.models else ""))
        for e in endpoints().values()
    ]


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
    return PipelineConfig(
        extractor=config["extractor"],
        label_mode=config["label_mode"],
        reference=reference,
        prompt_dir=prompt_dir,
        splitter=splitter,
    )
