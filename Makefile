# The two commands of the README quick start: `make verify` and `make test`.
# Each one creates .venv if it is missing and (re)installs sosl into it, compiling the
# Cython extensions, whenever the build inputs changed. Nothing outside .venv is used.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.sosl-installed
BUILD_INPUTS := setup.py pyproject.toml $(wildcard sosl/_core/*.pyx sosl/_core/*.pxd sosl/_core/*.h)

.PHONY: test lint verify verify-quick bench install clean

test: $(STAMP) lint
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .

verify: $(STAMP)
	$(BIN)/python -m verify

verify-quick: $(STAMP)
	$(BIN)/python -m verify --quick

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_linear.py

install: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "setuptools>=77" wheel "Cython>=3.0" "numpy>=2.0"

$(STAMP): $(BIN)/python $(BUILD_INPUTS)
	$(BIN)/python -m pip install --quiet --no-build-isolation -e ".[test]"
	touch $(STAMP)

clean:
	rm -rf build *.egg-info sosl/_core/*.c sosl/_core/*.so sosl/_core/*.html
