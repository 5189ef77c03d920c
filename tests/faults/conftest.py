"""The real service in a subprocess (`hbench-app serve`), to be killed and restarted.

Each start runs in a session of its own, so SIGKILL takes the whole process group, as a
crash of its machine or container would. Its output goes to one log file per test, read
by the tests that check what the service logs.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.health import wait_until_healthy
from tests.app.bench.conftest import sealed, sealed_archive
from tests.app.conftest import database_url, db, migrated_database_url, no_service_environment

# The service tests' fixtures: a real database of each backend, the sealed real job.
__all__ = [
    "database_url", "db", "migrated_database_url", "no_service_environment", "sealed",
    "sealed_archive",
]  # fmt: skip

START_SECONDS = 30.0
HBENCH_APP = str(Path(sys.executable).with_name("hbench-app"))
SOURCE = Path(__file__).resolve().parents[2]
"""The checkout under test: the service imports its packages from here, whatever copy
of them the virtual environment holds."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Service:
    """`hbench-app serve` on a loopback port, over one state directory and database."""

    def __init__(self, state_dir: Path, log: Path, env: dict[str, str]) -> None:
        self.state_dir = state_dir
        self.log = log
        self.env = env
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with self.log.open("a") as out:
            self.process = subprocess.Popen(
                [HBENCH_APP, "serve", "--port", str(self.port), "--state-dir", str(self.state_dir)],
                env=self.env, stdout=out, stderr=out, start_new_session=True,
            )  # fmt: skip
        state = wait_until_healthy(self.url, self.process, START_SECONDS)
        if state == "exited":
            raise RuntimeError(f"the service exited:\n{self.log.read_text()[-3000:]}")
        if state == "late":
            raise RuntimeError(f"the service did not start:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL, no warning: nothing of the process runs after this."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None

    def stop(self) -> None:
        """A clean stop (SIGTERM), as an operator's restart."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=START_SECONDS)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None

    def restart(self) -> None:
        self.kill()
        self.start()


def service_env(database_url: str, **settings: str) -> dict[str, str]:
    """The environment of a service on this database, with `HBENCH_<NAME>` settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBENCH_")}
    env["HBENCH_DATABASE_URL"] = database_url
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCE), env.get("PYTHONPATH")]))
    # These services are killed and restarted around publishing, not regrading: a job is
    # published as soon as it is stored (tests/app/regrade/ regrades for real).
    env["HBENCH_REGRADE_ENABLED"] = "false"
    # One process, as on SQLite: each restart then takes a second or so, not four (several
    # workers, each importing the app). Workers are killed and restarted in
    # tests/app/http/test_workers.py; replicas in tests/app/test_replicas.py.
    env["HBENCH_WORKERS"] = "1"
    env.update({f"HBENCH_{name.upper()}": value for name, value in settings.items()})
    return env


@pytest.fixture
def make_service(tmp_path: Path, database_url: str) -> Iterator[type[Service]]:
    """Start services on the test's database; every one is killed when the test ends."""
    started: list[Service] = []

    class TestService(Service):
        def __init__(self, **settings: str) -> None:
            super().__init__(
                tmp_path / "state", tmp_path / "service.log", service_env(database_url, **settings)
            )
            started.append(self)

    yield TestService
    for service in started:
        service.kill()
