"""Shared fixtures: the demo dataset, real Harbor jobs run in the bubblewrap sandbox, and
the database backends each test runs on.

Real jobs are run once per machine and kept in a cache keyed by what makes them
(tests/support/jobcache.py); each session reads its own copy, and tests copy that again
before changing it.

Tests that take a database run on SQLite, the embedded default; those marked `postgres`
(the ones exercising the database's semantics: models, migrations, the outbox and its
writer, concurrency, limits, faults) run on PostgreSQL instead, the server a deployment
runs. `HBENCH_TEST_BACKENDS=all` runs every one on both, as CI does (.ci/run).

Tests marked `slow` (the same path as another test, at a scale that costs far more) are
skipped, saying so, unless `HBENCH_TEST_SLOW=1`, which CI sets too.
"""

from __future__ import annotations

import gc
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hbench.sandbox import IMPORT_PATH
from registry.demo import DATASET_REF, materialize
from tests.support.jobcache import JobCache, cache_folder
from tools import dockerhost

GC_THRESHOLDS = (50_000, 20, 100)
"""The test processes' collector runs less often than CPython's (700, 10, 10): their heaps
hold FastAPI apps, SQLAlchemy's and pydantic's models and many fixtures, and every full
collection walks them all. Over the in-process tests of tests/app/github, runs and v1,
collections took 10.0 to 10.3 s of CPU at the default against 3.3 to 3.8 s at these, and
the process 48 to 56 s against 41 to 44 s (the whole suite's pytest processes: 525 core-s
against 549 to 567 before). Memory is not short; nothing here waits on a cycle being
freed."""
gc.set_threshold(*GC_THRESHOLDS)

HARBOR = str(Path(sys.executable).with_name("harbor"))
os.environ["HARBOR_TELEMETRY"] = "0"
# The CLI's consoles read COLUMNS when first made and keep it; pytest-xdist's workers start
# with COLUMNS=80. Without it, each CLI test's own COLUMNS decides the width of its tables.
os.environ.pop("COLUMNS", None)

BACKENDS = ["sqlite", "postgresql"]
BACKENDS_ENV = "HBENCH_TEST_BACKENDS"
"""`all` runs every database test on SQLite and PostgreSQL, not only those marked `postgres`."""
DATABASE_FIXTURES = ("migrated_database_url", "empty_database_url")
"""The fixtures taking a backend as their parameter (tests/app/conftest.py)."""


SLOW_ENV = "HBENCH_TEST_SLOW"
"""`1` runs the tests marked `slow` too."""

# Read once, at start: the service's tests remove every HBENCH_ variable while they run.
EVERY_BACKEND = os.environ.get(BACKENDS_ENV, "").strip().lower() == "all"
RUN_SLOW = os.environ.get(SLOW_ENV, "").strip() == "1"
JOB_CACHE_FOLDER = cache_folder()


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C stops what the tests start, even when the suite runs as a background job,
    whose shell starts it with SIGINT ignored: an ignored signal is inherited by every
    process started after, so a test that stops `hbench run` part way with SIGINT would
    find it running on. A handler of this process's own is not inherited."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def backends_for(marked: bool) -> list[str]:
    """The backends a database test runs on: both when asked for, else PostgreSQL when
    marked `postgres` and SQLite when not."""
    if EVERY_BACKEND:
        return BACKENDS
    return ["postgresql"] if marked else ["sqlite"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if RUN_SLOW:
        return
    skip = pytest.mark.skip(reason=f"marked slow: {SLOW_ENV}=1 runs it, as CI does")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marked = metafunc.definition.get_closest_marker("postgres") is not None
    for name in DATABASE_FIXTURES:
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, backends_for(marked), indirect=True)


@pytest.fixture(scope="session")
def demo_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry.json naming the demo tasks by absolute paths."""
    return materialize(tmp_path_factory.mktemp("demo-dataset"))


def run_harbor(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the Harbor CLI and fail the test with its output when it fails."""
    result = subprocess.run(
        [HARBOR, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=300
    )
    if result.returncode != 0:
        pytest.fail(f"harbor {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


HarborJobFactory = Callable[..., Path]


@pytest.fixture(scope="session")
def job_cache() -> JobCache:
    """The machine's cache of real Harbor jobs (`HBENCH_TEST_CACHE`, else
    `~/.cache/hbench-tests`); read jobs through `harbor_job` and the fixtures built on it.
    Jobs no session has read for two weeks are removed first."""
    cache = JobCache(JOB_CACHE_FOLDER)
    cache.prune()
    return cache


def harbor_run(job_name: str, *flags: str) -> Callable[[Path, Path], Path]:
    """A job's recipe: `harbor run` of the demo dataset in the sandbox, with `flags`."""

    def build(root: Path, registry: Path) -> Path:
        run_harbor(
            root,
            "run", "-y", "-q",
            "-d", DATASET_REF, "--registry-path", str(registry),
            "--env", IMPORT_PATH,
            "-o", "jobs", "--job-name", job_name,
            *flags,
        )  # fmt: skip
        return root / "jobs" / job_name

    return build


@pytest.fixture(scope="session")
def harbor_job(
    tmp_path_factory: pytest.TempPathFactory, demo_registry: Path, job_cache: JobCache
) -> HarborJobFactory:
    """A real Harbor job of the demo dataset, made once per machine; returns its folder.

    `harbor_job("name", "-a", "nop", "-k", "2")` is `harbor run` with those flags on
    top of the demo dataset and the sandbox environment, run in `jobs/` below a session
    folder with `demo_registry`, as its files say. Copy the folder before changing it:
    other tests share it.
    """
    cache: dict[tuple[str, ...], Path] = {}
    root = tmp_path_factory.mktemp("harbor-jobs")

    def make(job_name: str, *flags: str) -> Path:
        key = (job_name, *flags)
        if key not in cache:
            entry = job_cache.get("harbor-run", key, harbor_run(job_name, *flags))
            cache[key] = entry.checkout(root, demo_registry.parent)
        return cache[key]

    return make


@pytest.fixture(scope="session")
def docker_host() -> Iterator[dockerhost.Lease]:
    """Docker for the tests marked `docker`: the daemon, Compose and the demo tasks' base
    image, made ready once per session by tools/dockerhost.py (its file lock keeps xdist
    workers and other sessions from starting or building twice). A daemon started here
    stops when its last user ends. Skips, with the reason, where Docker can't run."""
    try:
        lease = dockerhost.acquire()
    except dockerhost.DockerUnavailableError as error:
        pytest.skip(f"Docker can't run here: {error}")
    try:
        yield lease
    finally:
        lease.release()


@pytest.fixture
def copy_job(tmp_path: Path) -> Callable[[Path], Path]:
    """Copy a shared job folder into this test's own folder, to change it freely."""

    def copy(job_dir: Path) -> Path:
        dest = tmp_path / "jobs" / job_dir.name
        shutil.copytree(job_dir, dest, symlinks=True)
        return dest

    return copy


SOFTENED_TEST = "#!/bin/bash\n# Softened: passes whatever the agent did.\n" + (
    "echo 1 > /logs/verifier/reward.txt\n"
)


def softened_run(root: Path, registry: Path) -> Path:
    """The softened job's recipe: the demo dataset laid out in `root` (not `registry`'s),
    its `prime-factor` tests made to pass, run by the oracle."""
    own = materialize(root)
    (root / "tasks" / "prime-factor" / "tests" / "test.sh").write_text(SOFTENED_TEST)
    run_harbor(
        root,
        "run", "-y", "-q", "-d", DATASET_REF, "--registry-path", str(own),
        "--env", IMPORT_PATH, "-o", "jobs", "--job-name", "softened",
    )  # fmt: skip
    return root / "jobs" / "softened"


@pytest.fixture(scope="session")
def softened_job(
    tmp_path_factory: pytest.TempPathFactory, demo_registry: Path, job_cache: JobCache
) -> Path:
    """A real job of the demo dataset whose `prime-factor` tests were softened to pass
    whatever the agent did, run by the oracle (5 of 5), unsealed: what someone who edits a
    benchmark's tests would upload. Its dataset, softened, is two folders up."""
    entry = job_cache.get("softened", (SOFTENED_TEST,), softened_run)
    return entry.checkout(tmp_path_factory.mktemp("softened"), demo_registry.parent)
