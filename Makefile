# The one task runner, for people and CI alike. `make help` lists the targets.
PYTHON_VERSION := $(shell cat .python-version)
VENV := .venv
PY := $(VENV)/bin/python
export HARBOR_TELEMETRY := 0

.PHONY: help venv demo test lint typecheck check bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

$(PY): pyproject.toml .python-version
	python$(PYTHON_VERSION) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(PY)

venv: $(PY)  ## build the virtual environment from .python-version, Harbor included

demo: $(PY)  ## the README's first command: run the demo dataset end to end
	$(PY) -m hbench.demo.walkthrough

test: $(PY)  ## the README's second command: lint, type-check and run every test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest

lint: $(PY)  ## ruff only
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

typecheck: $(PY)  ## mypy (strict) only
	$(VENV)/bin/mypy

bench: $(PY)  ## run every benchmark under bench/ and print their figures
	@for script in bench/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

clean:  ## remove what the demo and the tests leave behind
	rm -rf demo-run build .pytest_cache .mypy_cache .ruff_cache
