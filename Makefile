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

.PHONY: demo test install install-test serve lint clean

$(BIN)/python:
	@if [ -z "$(PYTHON)" ]; then echo "error: Python 3.12 or newer is needed (tried python3.13, python3.12, python3)" >&2; exit 1; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install -q -e '.[test]'
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

demo: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput -v 0
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py runserver --insecure $(HOST):$(PORT)

test: install-test
	scripts/ensure-chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install-test
	$(BIN)/pip install -q ruff
	$(BIN)/ruff check annotation pipeline tests bench

clean:
	rm -rf $(VENV) var staticfiles
