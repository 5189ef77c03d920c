"""The upload workers: calls run in other processes, at a lower priority; refusals and
database outages come back as they were raised; a worker that dies is answered and
replaced; one pool serves every app of a process; and no worker outlives its server."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from app.bench.pool import run_in_worker, worker_pool
from app.errors import is_database_unavailable
from app.main import create_app
from app.services import sent, shared_url
from app.settings import Settings
from hbench.errors import HbenchError, Problem

from ..conftest import LOCAL, NO_REGRADES
from .conftest import upload

ONE = 1
"""A pool of its own for these calls: a size no app's settings ask for here."""
PROBLEMS = (
    Problem("manifest-missing", "the job has no manifest.json", "manifest.json"),
    Problem("job-unfinished", "the job has not finished", "result.json"),
)


def refuse() -> None:
    raise HbenchError.from_problems(PROBLEMS)


def lose_the_database() -> None:
    raise OperationalError("INSERT INTO jobs", {}, sqlite3.OperationalError("locked"))


class PickyError(Exception):
    """An error whose constructor its pickled arguments don't fit."""

    def __init__(self, *, why: str) -> None:
        super().__init__(f"picky: {why}")


def fail_picky() -> None:
    raise PickyError(why="keyword only")


def in_worker(function: object, *args: object) -> object:
    return asyncio.run(run_in_worker(ONE, function, *args))  # type: ignore[arg-type]


def test_a_call_runs_in_another_process_at_a_lower_priority() -> None:
    pid = in_worker(os.getpid)

    assert isinstance(pid, int) and pid != os.getpid()
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, ours + 10)


def test_a_refusal_comes_back_with_every_problem_and_code() -> None:
    with pytest.raises(HbenchError) as refused:
        in_worker(refuse)

    assert refused.value.problems == PROBLEMS


def test_a_database_outage_comes_back_as_itself() -> None:
    with pytest.raises(OperationalError) as lost:
        in_worker(lose_the_database)

    assert is_database_unavailable(lost.value)


def test_an_error_that_cant_cross_comes_back_named() -> None:
    with pytest.raises(RuntimeError, match="PickyError: picky: keyword only"):
        in_worker(fail_picky)


def test_a_worker_that_dies_is_answered_and_replaced() -> None:
    before = in_worker(os.getpid)

    with pytest.raises(HbenchError) as lost:
        in_worker(os._exit, 3)

    assert lost.value.code == "internal-error"
    assert "Your bench" in lost.value.problems[0].message
    after = in_worker(os.getpid)
    assert after != before


def test_every_app_of_a_process_shares_one_pool(
    *, database_url: str, sealed_archive: bytes, tmp_path: Path
) -> None:
    workers: set[int] = set()
    for n in range(2):
        settings = Settings(
            state_dir=tmp_path / f"state-{n}", database_url=database_url, **NO_REGRADES
        )
        with TestClient(create_app(settings), **LOCAL) as client:  # type: ignore[arg-type]
            assert upload(client, sealed_archive).status_code == 201
        pool = worker_pool(settings.upload_workers)
        workers |= set(pool._processes)

    assert 1 <= len(workers) <= settings.upload_workers


def test_a_sqlite_file_is_shared_by_its_absolute_path() -> None:
    relative = make_url("sqlite+pysqlite:///.state/hbench.sqlite3")

    assert shared_url(relative) == f"sqlite+pysqlite:///{Path.cwd() / '.state/hbench.sqlite3'}"
    with pytest.raises(ValueError, match="in-memory SQLite"):
        shared_url(make_url("sqlite://"))
    assert shared_url(make_url("postgresql+psycopg://u:pw@db/x")).endswith("u:pw@db/x")


SERVER = """
import asyncio, os, signal, sys
from app.bench.pool import run_in_worker
worker = asyncio.run(run_in_worker(1, os.getpid))
fork_server = asyncio.run(run_in_worker(1, os.getppid))
print(worker, fork_server, flush=True)
if sys.argv[1] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("ending", ["exits", "killed"])
def test_no_worker_outlives_its_server(ending: str, tmp_path: Path) -> None:
    # Its output to a file: a pipe would stay open as long as any process left behind.
    out = tmp_path / "server.out"
    with out.open("w") as sink:
        server = subprocess.run(
            [sys.executable, "-c", SERVER, ending], stdout=sink, stderr=subprocess.STDOUT,
            timeout=120, check=False,
        )  # fmt: skip
    assert server.returncode == (0 if ending == "exits" else -signal.SIGKILL), out.read_text()
    left = [int(pid) for pid in out.read_text().split()[:2]]
    deadline = time.monotonic() + 10
    while any(map(running, left)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(running, left)), f"still running: {left}"


def running(pid: int) -> bool:
    """Whether the process is alive: an ended one whose parent never reaped it counts not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_an_argument_sent_alike_is_pickled_once_and_kept_once() -> None:
    registry = {"benchmarks": list(range(1000))}
    first = sent(registry)
    assert sent(registry) is first  # pickled once for every call with the same object
    assert sent(dict(registry)).key != first.key  # an equal object of its own is another
    received = first.value()
    assert received == registry and received is not registry
    assert first.value() is received  # unpickled once, then kept
