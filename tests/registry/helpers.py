"""Shared builders for registry tests: job facts of the demo dataset and registry copies."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from hbench.sandbox import IMPORT_PATH
from registry.demo import DATASET_REF, task_names
from registry.loader import DEFAULT_DIR, load_registry
from registry.placement import JobFacts, TrialFacts

DEMO_PINS = load_registry().benchmarks["hbench-demo"].harbor.task_digests or {}


def demo_facts(**changes: Any) -> JobFacts:
    """A demo job run by the oracle in the sandbox, one attempt, default settings."""
    tasks = task_names()
    base: dict[str, Any] = {
        "job_id": "5d7e4c1a-0000-4000-8000-000000000001",
        "dataset": DATASET_REF,
        "task_names": tasks,
        "model": None,
        "n_attempts": 1,
        "agent": "oracle",
        "agent_version": "1.0.0",
        "environment": IMPORT_PATH,
        "trials": [TrialFacts(task=t, reward=0.0 if t == "prime-factor" else 1.0) for t in tasks],
        # The demo's own task files, as the registry pins them.
        "task_digests": DEMO_PINS,
    }
    base.update(changes)
    return JobFacts(**base)


def copy_default_registry(dest: Path) -> Path:
    """A writable copy of the default registry folder."""
    shutil.copytree(DEFAULT_DIR, dest)
    return dest
