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
# gunicorn's web workers: two per core unless WEB_CONCURRENCY says otherwise.
WEB_CONCURRENCY ?= $(shell echo $$((2 * $$(nproc 2>/dev/null || echo 1))))

.PHONY: demo test test-fast install install-test serve worker lint lock clean

$(BIN)/python:
	@if [ -z "$(PYTHON)" ]; then echo "error: Python 3.12 or newer is needed (tried python3.13, python3.12, python3)" >&2; exit 1; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Versions come from requirements.lock (`make lock` rewrites it from the ranges in
# pyproject.toml); the lock is a constraints file, so each target installs only what it needs.
$(VENV)/.installed: $(BIN)/python pyproject.toml requirements.lock
	$(BIN)/pip install -q -c requirements.lock -e '.[postgres]'
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install -q -c requirements.lock -e '.[test,postgres]'
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

demo: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	$(BIN)/python manage.py load_demo --host $(HOST) --port $(PORT)
	$(BIN)/python manage.py runserver --insecure $(HOST):$(PORT)

# The production server: gunicorn against the configured database (DATABASE_URL, or the
# SQLite file in var/), static files from WhiteNoise. Settings: README, "Deploying for a lab".
serve: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	SQLITE_TIMEOUT=$${SQLITE_TIMEOUT:-5} $(BIN)/gunicorn annotation.wsgi --preload --bind $(HOST):$(PORT) --workers $(WEB_CONCURRENCY) \
		--access-logfile - $(GUNICORN_ARGS)

# A pipeline worker; start as many as you like, on any machine sharing the database.
worker: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py db_worker $(WORKER_ARGS)

test: install-test
	scripts/ensure-chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Everything but the browser tests and the tests marked slow (a real Label Studio server,
# schema fuzzing, benchmark smoke runs), on several processes: under a minute.
test-fast: install-test
	$(BIN)/python -m pytest -q -m 'not slow and not browser and not scale' -n $${TEST_PROCESSES:-auto} $(PYTEST_ARGS)

lint: install-test
	$(BIN)/ruff format --check annotation pipeline tests bench manage.py scripts/import_contracts.py
	$(BIN)/ruff check annotation pipeline tests bench manage.py scripts/import_contracts.py
	$(BIN)/mypy annotation pipeline scripts/import_contracts.py
	$(BIN)/lint-imports  # layers and no import cycle (pyproject.toml [tool.importlinter])

lock: $(BIN)/python
	$(BIN)/pip install -q uv
	$(BIN)/uv pip compile pyproject.toml --extra test --extra postgres --extra redis \
		--python-version 3.12 -o requirements.lock

clean:
	rm -rf $(VENV) var staticfiles
