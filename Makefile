# `make demo` and `make test` do all of the set-up on a fresh machine.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
# The first interpreter that is 3.12 or newer (Django 6 needs it).
PYTHON ?= $(shell for p in python3.13 python3.12 python3; do \
	if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; \
	then echo $$p; break; fi; done)
HOST ?= 127.0.0.1
PORT ?= 8000
FAKE_PORT ?= 8010
# gunicorn's web workers: two per core unless WEB_CONCURRENCY says otherwise.
WEB_CONCURRENCY ?= $(shell echo $$((2 * $$(nproc 2>/dev/null || echo 1))))

.PHONY: demo test test-fast install install-test install-docs docs docs-build serve worker lint lock clean

$(BIN)/python:
	@if [ -z "$(PYTHON)" ]; then echo "error: Python 3.12 or newer is needed (tried python3.13, python3.12, python3)" >&2; exit 1; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Versions come from requirements.lock (`make lock` rewrites it from the ranges in
# pyproject.toml); the lock is a constraints file, so each target installs only what it needs.
# The `crowd` extra (crowd-kit: Dawid-Skene, MACE, GLAD; it pulls pandas, pyarrow and
# transformers, about 330 MB) is installed by every target here, demo and test included;
# an install without it runs everything but the annotator models.
$(VENV)/.installed: $(BIN)/python pyproject.toml requirements.lock
	$(BIN)/pip install -q -c requirements.lock -e '.[postgres,crowd]'
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install -q -c requirements.lock -e '.[test,postgres,crowd]'
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

$(VENV)/.installed-docs: $(VENV)/.installed
	$(BIN)/pip install -q -c requirements.lock -e '.[docs,postgres,crowd]'
	touch $@

install-docs: $(VENV)/.installed-docs

# Beside the server, `make demo` runs a pipeline worker and the project's fake provider
# (pipeline/fakes.py: a deterministic fake OpenAI server on FAKE_PORT and a fake Serper on
# FAKE_PORT+1, not a model), so a run on the endpoint "fake" finishes without any key.
# Without SERPER_API_KEY the demo's searches go to the fake Serper too. A fake Prolific on
# FAKE_PORT+2 is the workspace "fake" (annotation/prolific/fake.py). All stop with the server.
demo: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	PIPELINE_DEMO_FAKE=127.0.0.1:$(FAKE_PORT) $(BIN)/python manage.py load_demo --host $(HOST) --port $(PORT)
	export PIPELINE_DEMO_FAKE=127.0.0.1:$(FAKE_PORT); \
	if [ -z "$${SERPER_API_KEY:-}" ]; then \
		export PIPELINE_SERPER_URL=http://127.0.0.1:$$(($(FAKE_PORT) + 1)) SERPER_API_KEY=none-for-the-fake; fi; \
	export PROLIFIC_DEMO_FAKE=127.0.0.1:$$(($(FAKE_PORT) + 2)); \
	$(BIN)/python -m pipeline.fakes --port $(FAKE_PORT) --serper-port $$(($(FAKE_PORT) + 1)) & fakes=$$!; \
	$(BIN)/python -m annotation.prolific.fake --port $$(($(FAKE_PORT) + 2)) & prolific=$$!; \
	$(BIN)/python manage.py db_worker --no-reload --no-startup-delay --worker-id demo & worker=$$!; \
	trap 'kill $$fakes $$prolific $$worker 2>/dev/null' EXIT; \
	$(BIN)/python manage.py runserver --insecure $(HOST):$(PORT)

# The production server: gunicorn against the configured database (DATABASE_URL, or the
# SQLite file in var/), static files from WhiteNoise. Settings: docs/deployment.md.
serve: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	SQLITE_TIMEOUT=$${SQLITE_TIMEOUT:-5} $(BIN)/gunicorn annotation.wsgi --preload --bind $(HOST):$(PORT) --workers $(WEB_CONCURRENCY) \
		--access-logfile - $(GUNICORN_ARGS)

# A pipeline worker; start as many as you like, on any machine sharing the database.
worker: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py db_worker $(WORKER_ARGS)

test: install-test install-docs
	scripts/ensure-chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Everything but the browser tests and the tests marked slow (a real Label Studio server,
# fuzzing, benchmark smoke runs, tests that start several processes, the demo's pipeline
# run), on several processes. Not under a minute: measured 146 s wall (824 tests, pytest
# 132 s) on 2 cores under load average 6-7 from other jobs, 24 Nov 2026; since then two
# tests (17 s of that) are marked slow.
test-fast: install-test install-docs
	$(BIN)/python -m pytest -q -m 'not slow and not browser and not scale' -n $${TEST_PROCESSES:-auto} $(PYTEST_ARGS)

# The manual (docs/, mkdocs.yml): served with live reload on 127.0.0.1:8001, or built
# strictly into site/ (a broken link, a missing anchor or a page outside the nav fails).
docs: install-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:8001

docs-build: install-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

lint: install-test
	$(BIN)/ruff format --check annotation pipeline tests bench manage.py scripts/import_contracts.py
	$(BIN)/ruff check annotation pipeline tests bench manage.py scripts/import_contracts.py
	$(BIN)/mypy annotation pipeline scripts/import_contracts.py
	$(BIN)/lint-imports  # layers and no import cycle (pyproject.toml [tool.importlinter])

lock: $(BIN)/python
	$(BIN)/pip install -q uv
	$(BIN)/uv pip compile pyproject.toml --extra test --extra postgres --extra redis --extra docs --extra crowd \
		--python-version 3.12 -o requirements.lock

clean:
	rm -rf $(VENV) var staticfiles site
