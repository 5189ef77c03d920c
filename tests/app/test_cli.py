"""`hbench-app`: its help, `tokens create`, `db upgrade`, and `serve` as a real process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from app.auth.service import authenticate_api_token
from app.auth.tokens import is_api_token
from app.cli import app
from app.db.migrate import head_revision

HBENCH_APP = str(Path(sys.executable).with_name("hbench-app"))
runner = CliRunner()


@pytest.mark.parametrize(
    "command", [[], ["serve"], ["tokens"], ["tokens", "create"], ["db"], ["db", "upgrade"]]
)
def test_every_command_has_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_tokens_create_prints_only_a_working_token(
    tmp_path: Path, database_url: str, db: Session
) -> None:
    env = {"HBENCH_DATABASE_URL": database_url}
    create = ["tokens", "create", "--login", "ci-bot", "--name", "nightly"]
    result = runner.invoke(app, [*create, "--state-dir", str(tmp_path)], env=env)
    assert result.exit_code == 0, result.output
    token = result.stdout.strip()
    assert is_api_token(token)
    assert "shown only this once" in result.stderr
    row = authenticate_api_token(db, token)
    assert (row.account.login, row.name) == ("ci-bot", "nightly")

    again = runner.invoke(
        app, ["tokens", "create", "--login", "CI-bot", "--state-dir", str(tmp_path)], env=env
    )
    assert again.exit_code == 0, again.output
    assert authenticate_api_token(db, again.stdout.strip()).account_id == row.account_id


def test_tokens_create_refuses_a_login_github_would(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["tokens", "create", "--login", "no/slashes", "--state-dir", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert not (tmp_path / "hbench.sqlite3").exists()


def test_db_upgrade_creates_the_state_directory_and_migrates(tmp_path: Path) -> None:
    state = tmp_path / "fresh"
    result = runner.invoke(app, ["db", "upgrade", "--state-dir", str(state)])
    assert result.exit_code == 0, result.output
    assert f"revision {head_revision()}" in result.output
    assert (state / "hbench.sqlite3").is_file()


def test_wrong_settings_stop_a_command_with_their_codes(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["db", "upgrade", "--state-dir", str(tmp_path)], env={"HBENCH_MODE": "github"}
    )
    assert result.exit_code == 1
    assert "(settings-missing)" in result.stderr
    assert "HBENCH_GITHUB_WEBHOOK_SECRET" in result.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def served(tmp_path: Path, database_url: str) -> Iterator[tuple[str, Path]]:
    """`hbench-app serve` running as its own process; yields its URL and state directory."""
    state, port = tmp_path / "state", free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBENCH_")}
    env["HBENCH_DATABASE_URL"] = database_url
    server = subprocess.Popen(
        [HBENCH_APP, "serve", "--port", str(port), "--state-dir", str(state)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, server.communicate()[0]
            try:
                if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the service did not start within 30 s"
            time.sleep(0.1)
        yield url, state
    finally:
        server.terminate()
        output = server.communicate(timeout=15)[0]
    # uvicorn shuts down cleanly on SIGTERM; the command then stops its regrade worker and
    # exits with the shell's status for the signal.
    assert server.returncode in {0, 128 + signal.SIGTERM}, output
    assert "Application shutdown complete" in output
    assert workers_of(state) == [], "the regrade worker outlived the service"


def workers_of(state: Path) -> list[int]:
    """The regrade workers still running for a state directory (read from /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"app.regrade" in argv and str(state).encode() in argv:
            found.append(int(proc.name))
    return found


def test_serve_starts_the_service_on_a_loopback_port(served: tuple[str, Path]) -> None:
    url, state = served
    health = httpx.get(f"{url}/api/health")
    assert health.json()["status"] == "ok"
    assert health.json()["mode"] == "local"
    assert (state / "blobs").is_dir()

    me = httpx.get(f"{url}/api/me")  # from this machine: the local user
    assert me.status_code == 200
    assert me.json()["login"] == "local"

    created = httpx.post(f"{url}/api/tokens", json={"name": "live"})
    assert created.status_code == 201
    token = created.json()["token"]
    with_token = httpx.get(f"{url}/api/me", headers={"authorization": f"Bearer {token}"})
    assert with_token.json()["signed_in_with"] == "token"
