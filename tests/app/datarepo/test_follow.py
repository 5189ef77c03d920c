"""Replicas agree on the site: a process that does not write the data repository, or
whose writer lock another replica holds, brings its checkout to the repository's head and
rebuilds its site when the head moves, from its first round."""

from __future__ import annotations

import time
from pathlib import Path

from app.datarepo.lock import writer_lock
from app.datarepo.outbox import enqueue
from app.datarepo.service import BackgroundWriter
from app.db.session import Database
from registry.datarepo import layout

from .conftest import WriterFactory, git, publish


class Rebuilds:
    """The site rebuilds a replica ran: the runs its checkout held at each."""

    def __init__(self, checkout: Path) -> None:
        self.checkout = checkout
        self.heads: list[list[str]] = []

    def __call__(self) -> None:
        runs = sorted(p.name for p in self.checkout.glob("boards/*/runs/*.json"))
        self.heads.append(runs)

    def wait_for(self, count: int) -> None:
        deadline = time.monotonic() + 30
        while len(self.heads) < count:
            assert time.monotonic() < deadline, self.heads
            time.sleep(0.02)


def enqueue_run(database: Database, n: int) -> None:
    with database.session() as session:
        enqueue(session, publish(n))
        session.commit()


def test_a_replica_that_does_not_write_follows_every_commit(
    make_writer: WriterFactory, database: Database, remote: Path, tmp_path: Path
) -> None:
    writer = make_writer("writer")
    rebuilds = Rebuilds(tmp_path / "replica")
    follower = BackgroundWriter(
        make_writer("replica"),
        poll_interval=0.05,
        after_write=rebuilds,
        writes=False,
        follows=True,
    )
    follower.start()
    try:
        rebuilds.wait_for(1)  # at start: the replica serves the current site at once
        enqueue_run(database, 1)
        writer.drain()
        rebuilds.wait_for(2)
        time.sleep(0.3)  # rounds with no new commit rebuild nothing
        assert rebuilds.heads == [[], ["run-0001.json"]]
    finally:
        follower.stop()
    assert (tmp_path / "replica" / layout.run_file("hbench-demo", "run-0001")).is_file()
    # The follower only read: the repository holds its first commit and the writer's.
    assert len(git(remote, "log", "--format=%H", "main").split()) == 2


def test_a_writer_whose_lock_another_replica_holds_follows_that_replica(
    make_writer: WriterFactory, database: Database, tmp_path: Path
) -> None:
    other = make_writer("other")
    rebuilds = Rebuilds(tmp_path / "mine")
    mine = BackgroundWriter(
        make_writer("mine"), poll_interval=0.05, after_write=rebuilds, follows=True
    )
    with writer_lock(database, wait=0):  # the other replica's turn, for as long as it lasts
        enqueue_run(database, 2)
        other.drain()
        mine.start()
        try:
            rebuilds.wait_for(1)
        finally:
            mine.stop()
    assert rebuilds.heads == [["run-0002.json"]]
    assert (tmp_path / "mine" / layout.run_file("hbench-demo", "run-0002")).is_file()
