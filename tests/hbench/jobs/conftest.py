"""Real Harbor jobs of every shape the reader must handle, all made once per machine.

Runs go through the shared `harbor_job` fixture, several at a time. Jobs with
errors and retries use the crashing agents of `tests/data/agents.py`, which
Harbor imports in its own process, so the runs put the repository on its
PYTHONPATH. Interrupted jobs are stopped here for real, by Ctrl-C or by
killing Harbor.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

from hbench.sandbox import IMPORT_PATH
from registry.demo import DATASET_REF
from tests.conftest import HARBOR, HarborJobFactory, run_harbor
from tests.support.jobcache import JobCache

ROOT = Path(__file__).resolve().parents[3]
FLAKY = "tests.data.agents:FlakyAgent"
BROKEN = "tests.data.agents:BrokenAgent"
SLOW = "tests.data.agents:SlowAgent"
STARTUP_DEADLINE_SEC = 60


@contextmanager
def agents_importable() -> Iterator[None]:
    """Let Harbor's own process import `tests.data.agents` while the block runs."""
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join(paths))
        yield


def resume(job_dir: Path, *flags: str) -> None:
    """Run `harbor job resume` on a job folder, with the test agents importable."""
    with agents_importable():
        run_harbor(job_dir.parent, "job", "resume", "-p", str(job_dir), *flags)


# Every job the tests read, as `harbor run` flags on top of the demo dataset.
RUNS: dict[str, tuple[str, ...]] = {
    # The oracle, two attempts per task: 8 passes and 2 fails (`prime-factor`).
    "oracle": ("oracle-k2", "-k", "2"),
    # `nop` does nothing: every reward is 0.
    "nop": ("nop", "-a", "nop"),
    # `nop` given two models it never calls: one agent entry and evals group per model.
    "models": ("nop-models", "-a", "nop", "-m", "anthropic/claude-sonnet-4-5", "-m", "gpt-5"),
    # Two attempts per task, no retries: one attempt of each task crashes, the other runs.
    "errored": ("flaky-k2", "-a", FLAKY, "-k", "2"),
    # Every trial crashes once and Harbor retries it (`--max-retries 1`); the retry passes.
    "retried": ("flaky-retried", "-a", FLAKY, "-r", "1"),
    # Every attempt crashes, the retry too: five errored trials, five retries.
    "broken": ("broken-retried", "-a", BROKEN, "-r", "1"),
    # One task whose agent times out (60 s x 0.02); Harbor grades it and never retries it.
    "timeout": (
        "slow-timeout", "-a", SLOW, "-i", "hello-file",
        "--agent-timeout-multiplier", "0.02", "-r", "1",
    ),
}  # fmt: skip
PARALLEL_RUNS = 4


@contextmanager
def harbor_env() -> Iterator[None]:
    """Harbor's own process, while the block runs: it imports the test agents, it asks
    LiteLLM about models without LiteLLM fetching its price list (tests run offline),
    and it takes Ctrl-C as a person's, even when pytest itself ignores it (a background job)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with agents_importable(), pytest.MonkeyPatch.context() as patch:
            patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def real_jobs(
    harbor_job: HarborJobFactory,
    tmp_path_factory: pytest.TempPathFactory,
    demo_registry: Path,
    job_cache: JobCache,
) -> dict[str, Path]:
    """Every job, from the machine's cache; those not yet made run at once, so the runs
    share the machine instead of queuing (each is mostly Harbor starting up). The cancelled
    and killed jobs are stopped for real."""

    def interrupted(name: str, how: signal.Signals) -> Path:
        def build(root: Path, registry: Path) -> Path:
            return _interrupted(root, registry, name, how)

        entry = job_cache.get("interrupted", (name, how.name), build)
        return entry.checkout(tmp_path_factory.mktemp(name), demo_registry.parent)

    with harbor_env(), ThreadPoolExecutor(PARALLEL_RUNS) as pool:
        runs = {name: pool.submit(harbor_job, *flags) for name, flags in RUNS.items()}
        for name, how in (("cancelled", signal.SIGINT), ("killed", signal.SIGKILL)):
            runs[name] = pool.submit(interrupted, name, how)
        return {name: run.result() for name, run in runs.items()}


@pytest.fixture(scope="session")
def oracle_job(real_jobs: dict[str, Path]) -> Path:
    return real_jobs["oracle"]


@pytest.fixture(scope="session")
def nop_job(real_jobs: dict[str, Path]) -> Path:
    return real_jobs["nop"]


@pytest.fixture(scope="session")
def models_job(real_jobs: dict[str, Path]) -> Path:
    return real_jobs["models"]


@pytest.fixture(scope="session")
def errored_job(real_jobs: dict[str, Path]) -> Path:
    return real_jobs["errored"]


@pytest.fixture(scope="session")
def retried_job(real_jobs: dict[str, Path]) -> Path:
    return real_jobs["retried"]


@pytest.fixture(scope="session")
def broken_job(real_jobs: dict[str, Path]) -> Path:
    return real_jobs["broken"]


@pytest.fixture(scope="session")
def timeout_job(real_jobs: dict[str, Path]) -> Path:
    return real_jobs["timeout"]


@pytest.fixture(scope="session")
def cancelled_job(real_jobs: dict[str, Path]) -> Path:
    """Stopped by Ctrl-C: two trials end as `CancelledError`, three never start."""
    return real_jobs["cancelled"]


@pytest.fixture(scope="session")
def killed_job(real_jobs: dict[str, Path]) -> Path:
    """Harbor killed: two trial folders without result.json, and no finished_at."""
    return real_jobs["killed"]


def _start_slow_job(root: Path, registry: Path, name: str) -> subprocess.Popen[bytes]:
    argv = [
        HARBOR, "run", "-y", "-q", "-d", DATASET_REF, "--registry-path", str(registry),
        "--env", IMPORT_PATH, "-o", "jobs", "--job-name", name, "-a", SLOW, "-n", "2",
    ]  # fmt: skip
    # Its own process group, so the signal reaches Harbor's children as a terminal's would.
    return subprocess.Popen(
        argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def _wait_for(ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + STARTUP_DEADLINE_SEC
    while not ready():
        if time.monotonic() > deadline:
            pytest.fail("Harbor did not start two trials in time")
        time.sleep(0.05)


def _interrupted(root: Path, registry: Path, name: str, how: signal.Signals) -> Path:
    """Start a job of the slow agent and stop it once two trials are in their agent phase."""
    job = root / "jobs" / name
    process = _start_slow_job(root, registry, name)
    try:
        _wait_for(lambda: len(list(job.glob("*/agent"))) >= 2 and (job / "result.json").is_file())
        time.sleep(0.3)
        os.killpg(process.pid, how)
        process.wait(timeout=STARTUP_DEADLINE_SEC)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return job
