"""Settings, all from environment variables with safe defaults (healthchecks' style)."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.getenv("VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def envbool(name: str, default: str = "False") -> bool:
    return os.getenv(name, default).lower() in {"1", "true", "yes", "on"}


def _local_secret_key() -> str:
    # A key generated once per checkout, so local runs need no configuration.
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
    return path.read_text().strip()


SECRET_KEY = os.getenv("SECRET_KEY") or _local_secret_key()
DEBUG = envbool("DEBUG")
ALLOWED_HOSTS = os.getenv("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in os.getenv("CSRF_TRUSTED_ORIGINS", "").split(",") if o]
# HTTPS hardening (`manage.py check --deploy`); docs/deployment.md lists the production values.
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT")
SECURE_HSTS_SECONDS = int(os.getenv("SECURE_HSTS_SECONDS", "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS")
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD")
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE")
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE")
# Behind a proxy that terminates TLS: "HTTP_X_FORWARDED_PROTO,https".
if os.getenv("SECURE_PROXY_SSL_HEADER"):
    _header, _, _value = os.environ["SECURE_PROXY_SSL_HEADER"].partition(",")
    SECURE_PROXY_SSL_HEADER = (_header.strip(), _value.strip() or "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks_db",
    "annotation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "annotation.middleware.DatabaseBusyMiddleware",
    "annotation.middleware.JsonDepthMiddleware",
]
# JSON bodies and form values nested deeper than this are refused with 400 (the parsers
# recurse: past Python's recursion limit a request would be a 500).
JSON_MAX_DEPTH = int(os.getenv("JSON_MAX_DEPTH", "100"))

# Content-Security-Policy (Django's own): scripts and styles from this site only, no inline
# script anywhere. Report pages (their own <style> element) and the API docs
# (Swagger UI, Redoc) use CSP_INLINE_STYLES, which allows inline styles, never scripts.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
CSP_INLINE_STYLES = {
    **SECURE_CSP,
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "worker-src": [CSP.SELF, "blob:"],
}

ROOT_URLCONF = "annotation.urls"
WSGI_APPLICATION = "annotation.wsgi.application"

# Each item kind keeps its page and scripts in its own folder (annotation/kinds/<name>/
# templates/ and static/): the folders that exist are searched after the shared ones.
KIND_DIRS = sorted(p for p in (BASE_DIR / "annotation" / "kinds").iterdir() if p.is_dir())

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [
            BASE_DIR / "templates",
            *(d / "templates" for d in KIND_DIRS if (d / "templates").is_dir()),
        ],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

if os.getenv("DATABASE_URL"):
    import dj_database_url

    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60)}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Server-side binding with prepared statements: a query a connection has run 5
        # times is planned once. The annotator's assignment lookup joins 8 tables and
        # PostgreSQL spent more time planning it than running it (measured: the server's
        # CPU per next/draft/submit cycle went from 48 ms to 11 ms).
        DATABASES["default"].setdefault("OPTIONS", {}).update(
            server_side_binding=True, prepare_threshold=5
        )
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.getenv("SQLITE_PATH", str(VAR_DIR / "db.sqlite3")),
            "OPTIONS": {
                # WAL lets readers work while a writer commits; IMMEDIATE makes
                # concurrent writers queue instead of failing with "database is locked".
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                # Past this wait a request answers 503 + Retry-After (annotation.middleware);
                # `make serve` sets 5 s, workers keep the longer wait.
                "timeout": float(os.getenv("SQLITE_TIMEOUT", "20")),
            },
            # A file, not shared memory, so tests with threads lock like production;
            # one per process, so parallel test runs do not share it.
            "TEST": {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# One cache shared by every process (the API write throttle and login throttling count
# in it): the database by default (its table is made by migration 0006), Redis with
# REDIS_URL (pip install '.[redis]').
CACHES: dict[str, dict[str, Any]]
if os.getenv("REDIS_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "django_cache",
            # Past MAX_ENTRIES a write deletes the third of the entries whose keys sort first
            # (the API write throttle's counts too). A cached report is an entry per table
            # (reports._store; 81 in bench/report_scale.py's synthetic report): room for some
            # 300 reports, as Django's default of 300 entries gave when a report was one.
            "OPTIONS": {"MAX_ENTRIES": 25_000},
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [
    BASE_DIR / "static",
    *(d / "static" for d in KIND_DIRS if (d / "static").is_dir()),
]
STATIC_ROOT = Path(os.getenv("STATIC_ROOT", BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
FIXTURE_DIRS = [BASE_DIR / "fixtures"]

AUTHENTICATION_BACKENDS = ["annotation.login_throttle.ThrottledModelBackend"]
# Failed logins allowed per username and per client address within LOGIN_LOCKOUT_SECONDS
# (from the first failure); LOGIN_IP_HEADER names a header set by your proxy (e.g.
# HTTP_X_REAL_IP) when REMOTE_ADDR is the proxy's.
LOGIN_FAILURES_PER_ACCOUNT = int(os.getenv("LOGIN_FAILURES_PER_ACCOUNT", "5"))
LOGIN_FAILURES_PER_ADDRESS = int(os.getenv("LOGIN_FAILURES_PER_ADDRESS", "20"))
LOGIN_LOCKOUT_SECONDS = int(os.getenv("LOGIN_LOCKOUT_SECONDS", "900"))
LOGIN_IP_HEADER = os.getenv("LOGIN_IP_HEADER", "")
# Joins through an invite link (page and API) per client address and per invite; "" = no limit.
# Per invite: a market releases a study to thousands at once, and 1,000 joins in the first
# five minutes is a launch, not a flood (bench/crowd_launch.py); the invite's cap bounds
# the places, this bounds the accounts a scripted flood can make through one link.
JOIN_RATE_PER_ADDRESS = os.getenv("JOIN_RATE_PER_ADDRESS", "30/minute")
JOIN_RATE_PER_INVITE = os.getenv("JOIN_RATE_PER_INVITE", "3000/hour")
# Two hires who joined from one client address (LOGIN_IP_HEADER behind a proxy) are flagged
# in the payments export as perhaps one person; 0 turns it off (a lab where everyone joins
# from one address, or a proxy that hides the client's address)
HIRING_FLAG_SAME_ADDRESS = os.getenv("HIRING_FLAG_SAME_ADDRESS", "1") == "1"
# Deleted items and projects stay restorable this many days; then the purge_deleted
# command (run it daily) deletes them for good
DELETED_KEEP_DAYS = int(os.getenv("DELETED_KEEP_DAYS", "30"))
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
# Largest file the upload page and the API import (MB); larger: manage.py import_data.
IMPORT_MAX_MB = int(os.getenv("IMPORT_MAX_MB", "200"))
# An annotator model's fit for a report (reports/gold_models.py) queued or running this
# long (seconds) was left by a killed worker: enqueued again.
GOLD_FIT_SECONDS = int(os.getenv("GOLD_FIT_SECONDS", "3600"))
# Uploads above this size (MB) import as a background task with a progress page.
IMPORT_BACKGROUND_MB = float(os.getenv("IMPORT_BACKGROUND_MB", "20"))
# A background import's task row RUNNING this long (seconds) whose worker never started the
# import, or whose import is over, was left by a killed worker: failed (the job requeued if
# nothing was read). A running import's worker holds its upload: no timeout applies to it.
IMPORT_WORKER_TIMEOUT = int(os.getenv("IMPORT_WORKER_TIMEOUT", "300"))
# A release built by the task worker (release/jobs.py) whose worker reported no progress
# for this long (seconds) was left by a killed worker: failed when the same build is asked
# for again, which then starts anew.
RELEASE_JOB_SECONDS = int(os.getenv("RELEASE_JOB_SECONDS", "1800"))

REST_FRAMEWORK = {
    # Token first: an anonymous request then gets 401 with a WWW-Authenticate header.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotation.api.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["annotation.api.errors.TokenWriteThrottle"],
}
API_PAGE_SIZE = int(os.getenv("API_PAGE_SIZE", "100"))
# Writes (POST/PUT/PATCH/DELETE) made with an API token, per user.
API_WRITE_RATE = os.getenv("API_WRITE_RATE", "300/minute")
SPECTACULAR_SETTINGS = {
    "TITLE": "Factuality annotation API",
    "DESCRIPTION": "Projects, imports, items, annotation queues, answers, gold values, "
    "reports and pipeline runs.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}},
    # Every enum named after its resource (tests/annotation/test_api_schema.py checks).
    "ENUM_NAME_OVERRIDES": {
        "PipelineRunStatusEnum": ["queued", "running", "finished", "failed", "cancelled"],
        "PipelineRunExtractorEnum": "annotation.api.pipeline_runs.EXTRACTORS",
        "PipelineRunLabelModeEnum": ["binary", "ternary"],
        "PipelineRunReferenceEnum": ["veriscore", "verifastscore"],
        "PipelineRunRetrieverEnum": ["serper", "bm25"],
        "DocumentImportFormatEnum": "annotation.api.documents.IMPORT_FORMATS",
        "ItemsCreateStratifyEnum": ["domain", "source_model"],
        "GoldProvenanceEnum": [
            "unanimous",
            "majority",
            "adjudicated",
            "tie-rule",
            "tie",
            "dawid_skene",
            "mace",
            "glad",
        ],
        "GoldMethodEnum": ["majority", "dawid_skene", "mace", "glad", "adjudicated"],
        "QualityActionEnum": ["pause", "resume", "let_through"],
        "QualityItemRoleEnum": "annotation.hiring.models.QualityItem.ROLES",
        "InviteMarketEnum": "annotation.hiring.markets.CHOICES",
        "ProlificActionEnum": "annotation.prolific.services.ACTIONS",
        "ProlificRejectionCategoryEnum": "annotation.prolific.client.REJECTION_CATEGORIES",
        "ProjectReleaseLicenseEnum": "annotation.release.options.LICENCES",
        "ProjectReleaseTaskCategoryEnum": "annotation.release.options.TASK_CATEGORIES",
        "WebhookEventEnum": "annotation.models.Webhook.EVENTS",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
    ],
}

# Background work (django.tasks): a database queue served by `python manage.py db_worker`;
# TASKS_BACKEND=django.tasks.backends.immediate.ImmediateBackend runs tasks in the request.
TASKS = {"default": {"BACKEND": os.getenv("TASKS_BACKEND", "django_tasks_db.DatabaseBackend")}}
# Webhooks (annotation/webhooks.py): the targets a project may notify, comma-separated:
# hosts ("hooks.example.org", "*.example.org"), URL prefixes ("https://ci.example.org/hooks/")
# and addresses or networks ("10.1.2.3", "10.0.0.0/8"). Empty: no webhooks. A private,
# loopback or link-local address is refused unless it is listed itself (its address or
# network, or a host or prefix naming that address literally).
WEBHOOK_ALLOWED_TARGETS = [
    t.strip() for t in os.getenv("WEBHOOK_ALLOWED_TARGETS", "").split(",") if t.strip()
]
WEBHOOK_ATTEMPTS = int(os.getenv("WEBHOOK_ATTEMPTS", "8"))  # then the delivery fails
WEBHOOK_BACKOFF_SECONDS = float(os.getenv("WEBHOOK_BACKOFF_SECONDS", "30"))  # doubled each time
WEBHOOK_TIMEOUT_SECONDS = float(os.getenv("WEBHOOK_TIMEOUT_SECONDS", "10"))
# Pipeline runs from the platform. API keys are read from the environment at run time
# (OPENAI_API_KEY, SERPER_API_KEY) and never stored.
# The endpoints a run may name (annotation/endpoints.py), a JSON list of
# {"name", "base_url", "api_key_env", "models": [...], "prices": {model: [in, out]}};
# empty: one endpoint "default" from OPENAI_BASE_URL and OPENAI_API_KEY.
PIPELINE_ENDPOINTS = json.loads(os.getenv("PIPELINE_ENDPOINTS") or "[]")
# host:port of the demo's fake provider (`python -m pipeline.fakes`, started by `make demo`):
# adds the endpoint "fake", a deterministic fake server, not a model (annotation/endpoints.py).
PIPELINE_DEMO_FAKE = os.getenv("PIPELINE_DEMO_FAKE", "")
# Prolific workspaces a project may use (annotation/prolific/workspaces.py), a JSON list of
# {"name", "token_env", "base_url" (default Prolific's), "max_bonus", "description"}: the
# token is read from the environment variable `token_env` at call time and never stored.
PROLIFIC_WORKSPACES = json.loads(os.getenv("PROLIFIC_WORKSPACES") or "[]")
# host:port of the demo's fake Prolific (`python -m annotation.prolific.fake`): adds the
# workspace "fake"
PROLIFIC_DEMO_FAKE = os.getenv("PROLIFIC_DEMO_FAKE", "")
PIPELINE_CACHE_PATH = os.getenv("PIPELINE_CACHE_PATH", str(VAR_DIR / "pipeline-cache.sqlite"))
PIPELINE_SERPER_URL = os.getenv("PIPELINE_SERPER_URL", "https://google.serper.dev")
PIPELINE_BM25_CORPUS = os.getenv("PIPELINE_BM25_CORPUS", "")
# Reference-mode runs (docs/reference-mode.md): the released VeriScore's prompt/ folder, the
# folder holding VeriFastScore's system_message.txt, and the sentence splitter (the released
# code loads spaCy's en_core_web_sm). Empty folder: that reference mode is not offered.
PIPELINE_REFERENCE_PROMPTS = os.getenv("PIPELINE_REFERENCE_PROMPTS", "")
PIPELINE_VERIFASTSCORE_PROMPTS = os.getenv("PIPELINE_VERIFASTSCORE_PROMPTS", "")
PIPELINE_REFERENCE_SPLITTER = os.getenv("PIPELINE_REFERENCE_SPLITTER", "spacy:en_core_web_sm")
# A chunk whose worker has reported no progress for this long is taken over by another worker.
PIPELINE_CHUNK_TIMEOUT = int(os.getenv("PIPELINE_CHUNK_TIMEOUT", "300"))
# Attempts per chunk (failed calls, or no progress) before the chunk, and so its run, fails.
PIPELINE_CHUNK_ATTEMPTS = int(os.getenv("PIPELINE_CHUNK_ATTEMPTS", "3"))
# While a run is unfinished, workers look for stale chunks this often (a deferred task).
PIPELINE_SWEEP_SECONDS = float(os.getenv("PIPELINE_SWEEP_SECONDS", "30"))

# Where the operator publishes the manual (docs/, built by `make docs-build`); the
# researcher pages link to their guide there, or name its file in the repository.
DOCS_URL = os.getenv("DOCS_URL", "")

# Idle gaps longer than this are not counted as active annotation time.
IDLE_SECONDS = int(os.getenv("IDLE_SECONDS", "60"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "WARNING")},
}
