"""`hbench-app regrade` (also `python -m app.regrade`): the regrade worker from the command
line.

`work` runs the worker in the foreground until it is stopped (SIGTERM or Ctrl-C): the
deployment's regrade process, beside the service (`HBENCH_REGRADE_WORKER=separate`), or the
one `hbench-app serve` starts for itself (`embedded`, the default). `work --once` regrades
whatever is queued and exits, for scripts and tests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from app.cli_state import StateDir, settings_for
from app.dependencies import open_resources
from app.regrade.worker import RegradeWorker
from app.settings import Settings

regrade = typer.Typer(help="Regrade uploaded jobs in a sandbox.", no_args_is_help=True)
STOP_SECONDS = 30


@regrade.callback()
def _group() -> None:
    # A group, so `work` is named the same from either entry point.
    pass


@regrade.command("work")
def work(
    once: Annotated[
        bool, typer.Option("--once", help="Regrade what is queued now, then exit.")
    ] = False,
    state_dir: StateDir = None,
    with_parent: Annotated[
        bool,
        typer.Option(
            "--with-parent",
            hidden=True,
            help="Stop when the process that started this one ends (hbench-app serve's own).",
        ),
    ] = False,
) -> None:
    """Claim queued regrades one at a time, run the tasks' verifiers again on each job's
    recorded outputs in the sandbox, and record what they found."""
    settings = settings_for(state_dir)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    if with_parent:
        watch_parent(stop)
    resources = open_resources(settings)
    worker = RegradeWorker(settings, resources.database, resources.blobs)
    try:
        if once:
            done = worker.drain()
            typer.echo(f"Regraded {done} job{'s' if done != 1 else ''}.", err=True)
            return
        worker.run_forever(stop)
    finally:
        resources.close()


def watch_parent(stop: threading.Event, interval: float = 1.0) -> None:
    """Set `stop` once the parent process is gone (this process is then adopted by another),
    so a worker `hbench-app serve` started never outlives it, however the service ended."""
    parent = os.getppid()

    def watch() -> None:
        while not stop.wait(interval):
            if os.getppid() != parent:
                stop.set()

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


@contextmanager
def embedded_worker(settings: Settings) -> Iterator[subprocess.Popen[bytes] | None]:
    """The regrade worker `hbench-app serve` starts beside itself, as a process of its own,
    and stops when the service stops; None when the settings run it elsewhere or not at all."""
    if not settings.regrade_enabled or settings.regrade_worker != "embedded":
        yield None
        return
    argv = [
        sys.executable, "-m", "app.regrade", "work", "--with-parent",
        "--state-dir", str(settings.state_dir),
    ]  # fmt: skip
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
