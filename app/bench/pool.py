"""The upload workers: processes that do an upload's CPU-bound work once its body is
unpacked (the rule table, redaction, packing, storing), so that work never holds the
server's interpreter while other requests wait for it.

One pool per server process and size (`HBENCH_UPLOAD_WORKERS`), made on first use and
shut at exit; the tests' many apps in one process share it. Workers are forked from a
fork server, never from the threaded server itself; the fork server imports the upload
code and compiles the redaction engine once (`app.bench.warm`), so every worker starts
warm. A worker runs at a lower priority than the server, so reads stay quick while it
works, and ends when the server is gone, however the server ended. What a call needs of
the service's parts crosses as their recipe (`app.services.ServicesRecipe`).

A refusal comes back as its problems and is raised here again, codes and all. Any other
error comes back as itself when it survives pickling (a database outage stays an
`OperationalError`, which the service answers 503), else as a `RuntimeError` naming it.
"""

from __future__ import annotations

import asyncio
import atexit
import multiprocessing
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, cast

import anyio
from starlette.concurrency import run_in_threadpool

from hbench.errors import HbenchError, Problem

START_METHOD = "forkserver"
PRELOAD = ["__main__", "app.bench.warm"]
"""What the fork server imports before it forks a worker. `__main__` first, so workers
don't each import the server's own script again."""
NICENESS = 10
"""How much lower a worker's priority is than the server's: Linux then gives a waking
request handler the core about nine times as readily as a busy worker."""
PARENT_CHECK_SECONDS = 1.0
"""How often a worker looks for its server, where it can't be told when it ends."""
# --- The server's side -------------------------------------------------------------------

_pools: dict[int, ProcessPoolExecutor] = {}
_pools_lock = threading.Lock()


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """The process's pool of `workers` upload workers, made on first use."""
    with _pools_lock:
        pool = _pools.get(workers)
        if pool is None:
            if not _pools:
                atexit.register(shutdown)
            context = multiprocessing.get_context(START_METHOD)
            context.set_forkserver_preload(PRELOAD)
            pool = ProcessPoolExecutor(
                workers, mp_context=context, initializer=start_worker, initargs=(os.getpid(),)
            )
            _pools[workers] = pool
        return pool


def shutdown() -> None:
    """Stop every pool: calls not yet started are cancelled, running ones finish."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


def _forget(workers: int, pool: ProcessPoolExecutor) -> None:
    with _pools_lock:
        if _pools.get(workers) is pool:
            del _pools[workers]


async def run_in_worker[T](
    workers: int, function: Callable[..., T], /, *args: Any, **kwargs: Any
) -> T:
    """`function(*args, **kwargs)` in an upload worker; its refusal raised here unchanged.

    `function` must be importable by name, and its arguments and answer must pickle. A
    cancelled caller waits for a call that has started (the files it reads are the
    caller's to remove), and withdraws one that has not."""
    pool = worker_pool(workers)
    try:
        # In a thread: the first call starts the fork server, which takes seconds.
        future = await run_in_threadpool(pool.submit, _carried, function, args, kwargs)
        outcome = await _finished(future)
    except BrokenProcessPool as error:
        _forget(workers, pool)
        raise HbenchError(
            "internal-error",
            "the process checking the upload ended before it answered (it may have run out "
            "of memory); the upload may not be stored: look for it on Your bench (GET "
            "/api/bench/jobs), and upload it again if it is not there",
        ) from error
    return cast(T, outcome.unwrap())


async def _finished[T](future: Future[Outcome[T]]) -> Outcome[T]:
    waiting = asyncio.wrap_future(future)
    try:
        return await asyncio.shield(waiting)
    except asyncio.CancelledError:
        if not future.cancel():
            # Started: wait it out, as `run_in_threadpool` waits for its thread.
            with anyio.CancelScope(shield=True):
                await asyncio.wait([waiting])
        raise


# --- The worker's side -------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome[T]:
    """What a call in a worker gave: its answer, or the problems it was refused with."""

    value: T | None = None
    problems: tuple[Problem, ...] = ()

    def unwrap(self) -> T | None:
        if self.problems:
            raise HbenchError.from_problems(self.problems)
        return self.value


def _carried[T](
    function: Callable[..., T], args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> Outcome[T]:
    """Run the call in the worker, so that whatever it ends with can cross back: an
    `HbenchError` does not unpickle (its arguments are not its constructor's), and an
    answer that fails to unpickle would break the pool for every upload."""
    try:
        return Outcome(function(*args, **kwargs))
    except HbenchError as error:
        return Outcome(problems=error.problems)
    except Exception as error:
        if not survives_pickling(error):
            raise RuntimeError(f"{type(error).__qualname__}: {error}") from error
        raise


def survives_pickling(error: BaseException) -> bool:
    try:
        pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes, in this process
    except Exception:  # any error of any constructor: it can't cross
        return False
    return True


def start_worker(server: int) -> None:
    """A new worker: lower priority, deaf to the terminal's Ctrl-C (the server stops its
    workers itself), and gone once the server is, however it ended."""
    os.nice(NICENESS)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_end_with, args=(server,), name="server-watch", daemon=True).start()


def _end_with(server: int) -> None:
    """Wait for the server process to end, then end this one. Its parent is the fork
    server, which lives as long as any of its children does, so the server is watched by
    its own pid: through a pidfd, readable once it has ended (Linux), else by polling."""
    try:
        handle = os.pidfd_open(server)
    except ProcessLookupError:
        os._exit(0)
    except (AttributeError, OSError):  # no pidfds here
        while _alive(server):
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)
    select.select([handle], [], [])
    os._exit(0)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, as another user: not the server, which is ours
        return False
    return True
