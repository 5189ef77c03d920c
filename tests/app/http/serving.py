"""`hbench-app serve` as its own process, for the tests of what only a real server shows:
its own settings, its log, its worker processes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from app.health import wait_until_healthy

HBENCH_APP = str(Path(sys.executable).with_name("hbench-app"))
START_SECONDS = 90.0
ANSWER_SECONDS = 60.0
"""A busy two-core machine can take this long to start the service, or answer it."""


LISTENING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


def bound_port(log: Path, server: subprocess.Popen[str]) -> int:
    """The port the server says it listens on."""
    deadline = time.monotonic() + START_SECONDS
    while (found := LISTENING.search(log.read_text(errors="replace"))) is None:
        assert server.poll() is None, f"the service exited:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"the service did not listen:\n{log.read_text()}"
        time.sleep(0.1)
    return int(found.group(1))


@dataclass
class Served:
    """The running service: a client of it, and once it has stopped, all it printed."""

    url: str
    client: httpx.Client
    log: Path
    process: subprocess.Popen[str]

    @property
    def output(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def serving(folder: Path, **settings: str) -> Iterator[Served]:
    """Serve with its state in `folder`, on a free port, with no `HBENCH_` setting of this
    machine's but `settings` (and no regrading); stopped when the block ends."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBENCH_")}
    env.update({"HBENCH_REGRADE_ENABLED": "false", **settings})
    log = folder / "serve.log"
    with log.open("w") as sink:
        # Port 0: the server binds a free port itself, and says which; a port picked here
        # and bound there could be taken by a service another test started meanwhile.
        server = subprocess.Popen(
            [HBENCH_APP, "serve", "--port", "0", "--state-dir", str(folder / "state")],
            env=env, stdout=sink, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{bound_port(log, server)}"
        started = wait_until_healthy(url, server, START_SECONDS)
        assert started == "up", f"the service is {started}:\n{log.read_text()}"
        with httpx.Client(base_url=url, timeout=ANSWER_SECONDS) as client:
            yield Served(url, client, log, server)
    finally:
        server.terminate()
        server.wait(timeout=30)
