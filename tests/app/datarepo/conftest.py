"""Fixtures for the data-repo writer: real git repositories (a bare remote and checkouts
in the test's folder), realistic published runs, and readers of what the remote holds."""

from __future__ import annotations

import io
import subprocess
import tarfile
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from app.datarepo.changes import OpenBoardChange, PublishRunChange
from app.datarepo.checkout import Checkout
from app.datarepo.git import Remote, clean_environment, git_executable
from app.datarepo.repo_init import create_data_repository
from app.datarepo.writer import Writer
from app.db.models import OutboxEntry
from app.db.session import Database
from registry.datarepo.models import Provenance, PublishedRun, RunEntry, RunUsage
from registry.datarepo.state import RepoState
from registry.demo import task_names
from registry.loader import load_registry
from registry.placement import EntrySettings, OpenBoard, entry_name, place

from ...registry.helpers import demo_facts

T0 = datetime(2026, 10, 1, 12, 0, tzinfo=UTC)
OWNERS = ["octocat", "hubot", "monalisa", "defunkt"]
AGENTS = [("oracle", {}), ("terminus-2", {"temperature": 0}), ("terminus-2", {"temperature": 1})]


def make_run(n: int, board: str = "hbench-demo", **changes: Any) -> PublishedRun:
    """A published run of the demo dataset, as publishing would write it: one of a few
    owners and agents, rewards that vary by run, token counts, local or Actions provenance."""
    owner = changes.pop("owner", OWNERS[n % len(OWNERS)])
    agent, options = AGENTS[n % len(AGENTS)]
    settings = EntrySettings(agent=agent, options=options)
    tasks = task_names()
    attempts = 3 if n % 5 == 0 else 1
    results: dict[str, list[float | None]] = {
        task: [None if (n + i + k) % 11 == 0 else float((n * 7 + i + k) % 3 != 0)
               for k in range(attempts)]
        for i, task in enumerate(tasks)
    }  # fmt: skip
    provenance = (
        Provenance(kind="actions", repository=f"{owner}/bench", workflow="run.yml",
                   ref="refs/heads/main", commit=f"{n:040x}", runner="github-hosted")
        if n % 2 else Provenance(kind="local")
    )  # fmt: skip
    data: dict[str, Any] = {
        "id": f"run-{n:04d}",
        "board": board,
        "entry": RunEntry(owner=owner, name=entry_name(owner, settings), settings=settings),
        "job_id": f"5d7e4c1a-0000-4000-8000-{n:012d}",
        "issued": n % 3 == 0,
        "model": None,
        "agent_version": "1.0.0",
        "n_attempts": attempts,
        "results": results,
        "usage": RunUsage(input_tokens=10_000 + n, cached_tokens=n, output_tokens=900 + n),
        "harbor_version": "0.25.0",
        "hbench_version": "0.3.0",
        "provenance": provenance,
        "published_at": T0 + timedelta(minutes=n),
    }
    data.update(changes)
    return PublishedRun(**data)


def opened_board() -> OpenBoard:
    """The board a demo job with a longer agent timeout opens (no board has its cell)."""
    opened = place(demo_facts(settings={"agent_timeout_multiplier": 2}), load_registry()).opens
    assert opened is not None
    return opened


def publish(n: int, board: str = "hbench-demo", **changes: Any) -> PublishRunChange:
    return PublishRunChange(run=make_run(n, board, **changes))


def open_change() -> OpenBoardChange:
    return OpenBoardChange(board=opened_board())


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    database = Database(database_url)
    yield database
    database.dispose()


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare data repository holding the default registry: the writer's remote."""
    path = tmp_path / "remote.git"
    create_data_repository(path, bare=True)
    return path


WriterFactory = Callable[..., Writer]


@pytest.fixture
def make_writer(tmp_path: Path, database: Database, remote: Path) -> WriterFactory:
    """A writer with its own checkout (named `name`) of the remote."""

    def make(
        name: str = "checkout",
        *,
        db: Database | None = None,
        checkout_class: type[Checkout] = Checkout,
        **options: Any,
    ) -> Writer:
        checkout = checkout_class(tmp_path / name, Remote(str(remote)))
        return Writer(db or database, checkout, **{"backoff": 0.001, **options})

    return make


def git(repo: Path, *args: str, text: bool = True) -> Any:
    """Run git on a bare repository, in an environment that can't reach any other."""
    return subprocess.run(
        [git_executable(), "--git-dir", str(repo), *args],
        env=clean_environment(repo), capture_output=True, text=text, check=True,
    ).stdout  # fmt: skip


def remote_state(repo: Path) -> RepoState:
    """Every file on the remote's `main`."""
    archive = git(repo, "archive", "--format=tar", "main", text=False)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        files = {
            member.name: tar.extractfile(member).read().decode()  # type: ignore[union-attr]
            for member in tar.getmembers()
            if member.isfile()
        }
    return RepoState(files)


def trailers(repo: Path) -> Counter[str]:
    """How many commits on the remote's `main` name each change id."""
    out = git(repo, "log", "--format=%(trailers:key=Hbench-Change,valueonly)", "main")
    return Counter(line.strip() for line in out.splitlines() if line.strip())


def commit_count(repo: Path) -> int:
    return int(git(repo, "rev-list", "--count", "main").strip())


def outbox_rows(database: Database) -> list[OutboxEntry]:
    with database.session() as session:
        return list(session.scalars(select(OutboxEntry).order_by(OutboxEntry.id)))
