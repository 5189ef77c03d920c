"""The writer inside the service (started with it, woken by a committed enqueue) and as
`hbench-app data-repo write`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import app as cli
from app.datarepo.lock import writer_lock
from app.datarepo.outbox import enqueue, entry_change_id
from app.datarepo.service import prepare_local_data_repository
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from registry.datarepo import layout

from .conftest import outbox_rows, publish, remote_state, trailers

pytestmark = pytest.mark.postgres  # the database's semantics: both backends

runner = CliRunner()


def wait_for(condition: Callable[[], bool], seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def local_client(settings: Settings) -> TestClient:
    """The app started on `settings`, called from this machine."""
    return TestClient(
        create_app(settings), base_url="http://127.0.0.1:8000", client=("127.0.0.1", 50000)
    )


def writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "hbench-datarepo-writer"]


def test_the_service_starts_a_local_data_repository_and_writes_it_in_the_background(
    tmp_path: Path, database_url: str, database: Database
) -> None:
    # An hour between polls: only the enqueue's own wake-up can explain a prompt commit.
    settings = Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_poll_interval=3600
    )
    remote = settings.data_repository_remote_dir
    with local_client(settings) as client:
        # Made on first start, in the writer's thread so that start-up doesn't wait.
        checkout = settings.data_repository_dir
        assert wait_for((checkout / "registry").is_dir)  # the writer's clone
        assert "registry/boards/hbench-demo.json" in remote_state(remote).files
        with database.session() as session:
            change = entry_change_id(enqueue(session, publish(1)))
            session.commit()
        assert wait_for(lambda: trailers(remote)[change] == 1)
        assert wait_for(lambda: all(row.applied_at for row in outbox_rows(database)))
        assert (checkout / layout.run_file("hbench-demo", "run-0001")).is_file()
        assert len(writer_threads()) == 1
        # After its commit the writer rebuilt the site the service serves.
        assert wait_for(lambda: "run-0001" in client.get("/site/boards/hbench-demo/").text)
    assert writer_threads() == []  # stopped with the service


def test_a_new_service_serves_the_site_of_its_empty_data_repository_at_once(
    tmp_path: Path, database_url: str
) -> None:
    settings = Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_poll_interval=3600
    )
    with local_client(settings) as client:
        # Nothing published: the writer's first round builds the site all the same.
        pages = ("/site/", "/site/registry/", "/site/boards/hbench-demo/", "/site/leaderboard/")
        assert wait_for(lambda: all(client.get(page).status_code == 200 for page in pages))
        assert "hbench demo" in client.get("/site/boards/hbench-demo/").text


def test_a_service_with_the_writer_off_leaves_the_outbox_alone(
    tmp_path: Path, database_url: str, database: Database
) -> None:
    settings = Settings(state_dir=tmp_path / "state", database_url=database_url,
                        writer_enabled=False)  # fmt: skip
    with local_client(settings):
        assert writer_threads() == []
    assert not settings.data_repository_remote_dir.exists()


def test_data_repo_write_once_drains_the_outbox(
    tmp_path: Path, database_url: str, database: Database
) -> None:
    with database.session() as session:
        changes = [entry_change_id(enqueue(session, publish(n))) for n in range(3)]
        session.commit()
    state_dir = tmp_path / "state"
    env = {"HBENCH_DATABASE_URL": database_url, "HBENCH_WRITER_BATCH_SIZE": "2"}
    command = ["data-repo", "write", "--once", "--state-dir", str(state_dir)]
    result = runner.invoke(cli, command, env=env)
    assert result.exit_code == 0, result.output
    assert "Applied 3 changes in 2 commits; 0 pending, 0 given up." in result.stderr
    assert trailers(state_dir / "data.git") == dict.fromkeys(changes, 1)

    with writer_lock(database, wait=0):  # the service's writer, say, is at work
        busy = runner.invoke(cli, [*command, "--wait", "0"], env=env)
    assert busy.exit_code == 1
    assert "(datarepo-writer-busy)" in busy.stderr


def test_data_repo_write_has_help() -> None:
    for command in (["data-repo"], ["data-repo", "write"]):
        result = runner.invoke(cli, [*command, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output


def test_the_local_data_repository_can_be_made_before_the_writer_runs(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path / "state")
    checkout = prepare_local_data_repository(settings)
    assert checkout == settings.data_repository_dir
    assert (checkout / "registry" / "boards" / "hbench-demo.json").is_file()
    assert prepare_local_data_repository(settings) == checkout  # made once
    assert trailers(settings.data_repository_remote_dir) == {}
