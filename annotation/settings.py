"""Settings, all from environment variables with safe defaults (healthchecks' style)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

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
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "annotation.urls"
WSGI_APPLICATION = "annotation.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
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
                "timeout": 20,
            },
            # A file, not shared memory, so tests with threads lock like production;
            # one per process, so parallel test runs do not share it.
            "TEST": {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.getenv("STATIC_ROOT", BASE_DIR / "staticfiles"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
FIXTURE_DIRS = [BASE_DIR / "fixtures"]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
DATA_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 50 * 1024 * 1024
# Largest file the upload page and the API import (MB); larger: manage.py import_data.
IMPORT_MAX_MB = int(os.getenv("IMPORT_MAX_MB", "200"))
# Uploads above this size (MB) import as a background task with a progress page.
IMPORT_BACKGROUND_MB = float(os.getenv("IMPORT_BACKGROUND_MB", "20"))

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
    "ENUM_NAME_OVERRIDES": {
        "PipelineRunStatusEnum": ["queued", "running", "finished", "failed"],
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
    ],
}

# Background work (django.tasks): a database queue served by `python manage.py db_worker`;
# TASKS_BACKEND=django.tasks.backends.immediate.ImmediateBackend runs tasks in the request.
TASKS = {"default": {"BACKEND": os.getenv("TASKS_BACKEND", "django_tasks_db.DatabaseBackend")}}
# Pipeline runs from the platform. API keys are read from the environment at run time
# (OPENAI_API_KEY, SERPER_API_KEY) and never stored.
PIPELINE_CACHE_PATH = os.getenv("PIPELINE_CACHE_PATH", str(VAR_DIR / "pipeline-cache.sqlite"))
PIPELINE_SERPER_URL = os.getenv("PIPELINE_SERPER_URL", "https://google.serper.dev")
PIPELINE_BM25_CORPUS = os.getenv("PIPELINE_BM25_CORPUS", "")
# A chunk whose worker has not reported for this long is taken over by another worker.
PIPELINE_CHUNK_TIMEOUT = int(os.getenv("PIPELINE_CHUNK_TIMEOUT", "300"))

# Idle gaps longer than this are not counted as active annotation time.
IDLE_SECONDS = int(os.getenv("IDLE_SECONDS", "60"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.getenv("LOG_LEVEL", "WARNING")},
}
