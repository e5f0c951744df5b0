# Two entry points (see README): `make demo` and `make check`. Both set everything up first.
VENV ?= .venv
BIN := $(VENV)/bin
# The demo runs what a user installs: the runtime alone, no torch (about 300 MB).
DEMO_VENV ?= .venv-demo
PYTHON ?= python3

.PHONY: setup setup-browser demo check lint typecheck test wheel-check bench bench-install

setup: $(VENV)/.installed

# The dev environment also holds the export extra (torch), for the tests that re-export the
# shipped model and run the float32 reference. torch goes in first and pinned: the CPU wheel of
# 2.13.0 is what made the shipped model; letting sentence-transformers pull "torch" on its own
# would fetch a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# The app's real-browser tests drive the Debian chromium package through Playwright (never
# `playwright install`, which downloads a browser). As root it is installed when missing;
# otherwise say what to run. With CI=true the tests fail, never skip, without a browser.
setup-browser:
	@if command -v chromium >/dev/null 2>&1 || [ -x "$${CAIRN_CHROMIUM:-}" ]; then exit 0; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else \
		echo "error: the app's browser tests need Chromium: run 'sudo apt-get install -y chromium' (or set CAIRN_CHROMIUM to a Chromium binary), then make check again." >&2; \
		exit 2; \
	fi

$(DEMO_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/pip install --quiet --upgrade pip
	$(DEMO_VENV)/bin/pip install --quiet -e .
	touch $@

demo: $(DEMO_VENV)/.installed
	CAIRN_HOME=$${CAIRN_HOME:-$(CURDIR)/.cairn-demo} $(DEMO_VENV)/bin/cairn demo

lint: setup
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts

typecheck: setup
	$(BIN)/mypy

test: setup setup-browser
	$(BIN)/pytest

# The wheel builds, installs into a fresh environment without torch, and remembers and recalls.
wheel-check: setup
	$(BIN)/python scripts/bench_install.py --check

check: lint typecheck test wheel-check

bench: setup
	$(BIN)/cairn bench embedder
	$(BIN)/cairn bench scale

# Installed size, first remember, MCP start and recall memory of a fresh install of the wheel.
bench-install: setup
	$(BIN)/python scripts/bench_install.py
