# Two entry points (see README): `make demo` and `make check`. Both set everything up first.
VENV ?= .venv
BIN := $(VENV)/bin
PYTHON ?= python3

.PHONY: setup demo check lint typecheck test bench

setup: $(VENV)/.installed

# torch goes in first and pinned: the CPU wheel of 2.13.0 is what this project runs on; letting
# sentence-transformers pull "torch" on its own would fetch a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

demo: setup
	CAIRN_HOME=$${CAIRN_HOME:-$(CURDIR)/.cairn-demo} $(BIN)/cairn demo

lint: setup
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

typecheck: setup
	$(BIN)/mypy

test: setup
	$(BIN)/pytest

check: lint typecheck test

bench: setup
	$(BIN)/cairn bench embedder
	$(BIN)/cairn bench scale
