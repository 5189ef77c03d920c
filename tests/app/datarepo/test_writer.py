"""The writer against real git repositories: commits with trailers, batches, failures,
rejected pushes, crashes, and two writers pushing to one repository at once."""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from app.datarepo.changes import Needs, PublicChange, TakeDownRunChange, WithdrawRunChange
from app.datarepo.checkout import Checkout
from app.datarepo.git import Remote, clean_environment, git_executable
from app.datarepo.lock import writer_lock
from app.datarepo.outbox import enqueue, entry_change_id
from app.datarepo.writer import Writer
from app.db.migrate import upgrade
from app.db.models import OutboxEntry
from app.db.session import Database
from hbench.errors import HbenchError
from registry.datarepo import layout
from registry.datarepo.models import PublishedRun
from registry.datarepo.state import Change, RepoState, publish_run, recompute_all

from .conftest import (
    T0,
    WriterFactory,
    commit_count,
    git,
    make_run,
    outbox_rows,
    publish,
    remote_state,
    trailers,
)

pytestmark = pytest.mark.postgres  # the database's semantics: both backends


def enqueue_all(database: Database, changes: list[PublicChange]) -> list[str]:
    """Enqueue changes in one transaction; returns their change ids."""
    with database.session() as session:
        entries = [enqueue(session, change) for change in changes]
        session.commit()
        return [entry_change_id(e) for e in entries]


def audit_changes(state: RepoState) -> list[str]:
    lines = "".join(state.files[p] for p in state.under("audit")).splitlines()
    return [json.loads(line)["change"] for line in lines]


def run_on_remote(state: RepoState, n: int) -> PublishedRun:
    return PublishedRun.model_validate_json(
        state.files[layout.run_file("hbench-demo", f"run-{n:04d}")]
    )


def test_publish_withdraw_and_take_down_land_as_commits_with_trailers(
    database: Database, remote: Path, make_writer: WriterFactory
) -> None:
    writer = make_writer(batch_size=1)
    published = enqueue_all(database, [publish(1), publish(2)])
    assert writer.drain().commits == 2
    later = enqueue_all(
        database,
        [WithdrawRunChange(board="hbench-demo", run_id="run-0001"),
         TakeDownRunChange(board="hbench-demo", run_id="run-0002", reason="breaks-terms",
                           note="copied from another job")],
    )  # fmt: skip
    assert writer.drain().applied == 2

    changes = published + later
    messages = git(remote, "log", "--reverse", "--format=%B%x00", "main").split("\0")[1:-1]
    assert [m.strip().splitlines()[-1] for m in messages] == [
        f"Hbench-Change: {c}" for c in changes
    ]
    author = git(remote, "log", "-1", "--format=%an <%ae> | %cn <%ce>", "main").strip()
    assert author == "hbench <hbench@localhost> | hbench <hbench@localhost>"
    state = remote_state(remote)
    assert run_on_remote(state, 1).status == "withdrawn"
    taken = run_on_remote(state, 2)
    assert (taken.status, taken.take_down_reason) == ("taken_down", "breaks-terms")
    assert audit_changes(state) == changes
    assert recompute_all(state) == state  # rows.json is what the runs say
    assert all(row.applied_at is not None for row in outbox_rows(database))


def test_a_batch_is_one_commit_carrying_all_its_changes(
    database: Database, remote: Path, make_writer: WriterFactory
) -> None:
    changes = enqueue_all(database, [publish(n) for n in range(25)])
    report = make_writer(batch_size=10).drain()
    assert (report.commits, report.applied) == (3, 25)
    assert commit_count(remote) == 1 + 3
    assert trailers(remote) == dict.fromkeys(changes, 1)
    last = git(remote, "log", "-1", "--format=%B", "main")
    assert last.startswith("Apply 5 public changes: 5 publish_run\n")
    state = remote_state(remote)
    assert len(state.under(layout.runs_dir("hbench-demo"))) == 25
    assert recompute_all(state) == state


def test_a_batch_reads_only_the_files_it_touches(
    database: Database, make_writer: WriterFactory
) -> None:
    enqueue_all(database, [publish(1, board="hbench-demo-quick", results={"hello-file": [1.0]})])
    make_writer().drain()

    read: list[RepoState] = []

    class Watched(Checkout):
        def read(self, needs: Needs) -> RepoState:
            read.append(super().read(needs))
            return read[-1]

    enqueue_all(database, [publish(2)])
    make_writer(checkout_class=Watched).drain()
    [state] = read
    assert layout.run_file("hbench-demo", "run-0002") not in state.files  # not yet applied
    assert not state.under("boards/hbench-demo-quick")  # another board's files stay on disk
    assert state.under("registry")


def test_a_change_that_keeps_failing_is_given_up_without_blocking_the_rest(
    database: Database, remote: Path, make_writer: WriterFactory
) -> None:
    ok = enqueue_all(database, [publish(1)])
    bad = enqueue_all(
        database,
        [publish(1, job_id="another-job"),  # the same run id for another job
         WithdrawRunChange(board="hbench-demo", run_id="run-0404")],
    )  # fmt: skip
    with database.session() as session:  # a row no change model reads
        session.add(OutboxEntry(kind="publish_run", payload={"run": {"id": "r"}}))
        session.commit()
    ok += enqueue_all(database, [publish(2)])

    report = make_writer(batch_size=10, max_attempts=3).drain()
    assert len(report.given_up) == 3
    assert sorted(trailers(remote)) == sorted(ok)
    rows = outbox_rows(database)
    failed = [row for row in rows if row.applied_at is None]
    assert [row.attempts for row in failed] == [3, 3, 3]
    assert [row.last_error.rsplit("(", 1)[1] for row in failed if row.last_error] == [
        "datarepo-conflict)", "datarepo-run-not-found)", "datarepo-change-invalid)"
    ]  # fmt: skip
    assert {entry_change_id(row) for row in rows if row.applied_at} == set(ok)
    assert bad[0] not in audit_changes(remote_state(remote))

    before = commit_count(remote)
    assert make_writer(batch_size=10, max_attempts=3).drain().applied == 0
    assert commit_count(remote) == before  # given up: not tried again


def test_after_a_crash_between_push_and_database_nothing_is_applied_twice(
    database: Database, remote: Path, make_writer: WriterFactory
) -> None:
    changes = enqueue_all(database, [publish(n) for n in range(12)])
    make_writer(batch_size=5).drain()
    commits = commit_count(remote)
    # The pushes landed but the database never heard: as if the writer died right after.
    with database.session() as session:
        session.execute(update(OutboxEntry).values(applied_at=None, attempts=0))
        session.commit()

    report = make_writer("restarted", batch_size=5).drain()
    # Marked from the remote's trailers, not applied again (which would be a no-op besides).
    assert (report.landed, report.applied, report.commits) == (12, 0, 0)
    assert commit_count(remote) == commits
    assert trailers(remote) == dict.fromkeys(changes, 1)
    assert all(row.applied_at is not None for row in outbox_rows(database))


def test_what_a_crash_left_in_the_checkout_is_thrown_away(
    database: Database, remote: Path, make_writer: WriterFactory, tmp_path: Path
) -> None:
    enqueue_all(database, [publish(1)])
    make_writer().drain()
    checkout = tmp_path / "checkout"
    # Half-written files, an unpushed commit, and the lock a killed `git add` leaves.
    (checkout / "boards/hbench-demo/runs/run-9999.json").write_text("{")
    subprocess.run(
        [git_executable(), "--git-dir", str(checkout / ".git"), "--work-tree", str(checkout),
         "commit", "-q", "--allow-empty", "-m", "never pushed"],
        env=clean_environment(checkout), check=True, cwd=checkout,
    )  # fmt: skip
    (checkout / "stray.txt").write_text("left behind")
    (checkout / ".git/index.lock").write_text("")
    (tmp_path / ".checkout.clone-x1y2/checkout/.git").mkdir(parents=True)  # a clone cut short

    changes = enqueue_all(database, [publish(2)])
    make_writer().drain()
    state = remote_state(remote)
    assert "stray.txt" not in state.files
    assert layout.run_file("hbench-demo", "run-9999") not in state.files
    assert "never pushed" not in git(remote, "log", "--format=%s", "main")
    assert trailers(remote)[changes[0]] == 1
    assert not (checkout / "stray.txt").exists()
    assert not (tmp_path / ".checkout.clone-x1y2").exists()


class Interfering(Checkout):
    """A checkout whose first push finds that someone else pushed a run just before."""

    other: Path
    pushed = 0
    rejected = 0

    def push(self) -> bool:
        if not self.pushed:
            _push_from_another_clone(self.remote, self.other)
        self.pushed += 1
        landed = super().push()
        self.rejected += not landed
        return landed


def _push_from_another_clone(remote: Remote, where: Path) -> None:
    other = Checkout(where, remote)
    other.ensure()
    state = other.read(Needs(("registry", "boards/hbench-demo"), (layout.audit_file(T0),)))
    after = publish_run(state, make_run(77, owner="hubot"), Change("elsewhere", T0))
    other.write(after.diff(state))
    other.commit(sorted(after.diff(state)), "Publish a run from elsewhere\n")
    assert other.push()


def test_a_rejected_push_is_fetched_and_applied_again(
    database: Database, remote: Path, make_writer: WriterFactory, tmp_path: Path
) -> None:
    changes = enqueue_all(database, [publish(1), publish(2)])
    Interfering.other = tmp_path / "other"
    writer = make_writer(checkout_class=Interfering)
    assert writer.drain().applied == 2
    checkout = writer.checkout
    assert isinstance(checkout, Interfering)
    assert (checkout.pushed, checkout.rejected) == (2, 1)
    subjects = git(remote, "log", "--format=%s", "main").splitlines()
    assert subjects[:2] == ["Apply 2 public changes: 2 publish_run", "Publish a run from elsewhere"]
    state = remote_state(remote)
    runs = [r["id"] for row in _rows(state) for r in row["runs"]]
    assert sorted(runs) == ["run-0001", "run-0002", "run-0077"]  # no update lost
    assert recompute_all(state) == state
    assert trailers(remote) == dict.fromkeys(changes, 1)


def _rows(state: RepoState) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(state.files[layout.rows_file("hbench-demo")])["rows"]
    return rows


class Racing(Checkout):
    """A checkout that pauses a moment before each push, so two writers' pushes cross."""

    rejected = 0

    def push(self) -> bool:
        time.sleep(random.uniform(0, 0.02))  # noqa: S311 - timing jitter
        landed = super().push()
        Racing.rejected += not landed
        return landed


def test_two_writers_pushing_at_once_to_one_repository_lose_no_update(
    database: Database, remote: Path, make_writer: WriterFactory, tmp_path: Path
) -> None:
    # Two deployments' writers, each with its own outbox and checkout, one data repository.
    second = Database(f"sqlite+pysqlite:///{tmp_path / 'second.sqlite3'}")
    upgrade(second.engine)
    try:
        ours = enqueue_all(database, [publish(n) for n in range(30)])
        theirs = enqueue_all(second, [publish(n) for n in range(100, 130)])
        # A real pause between retries: its jitter is what lets one of two writers
        # that keep crossing get ahead of the other.
        writers = [
            make_writer("a", checkout_class=Racing, batch_size=3, backoff=0.02),
            make_writer("b", db=second, checkout_class=Racing, batch_size=3, backoff=0.02),
        ]
        Racing.rejected = 0
        errors: list[BaseException] = []

        def drain(writer: Writer) -> None:
            # As the service does: a round that gave up on pushing is followed by another.
            for _ in range(20):
                try:
                    writer.drain()
                    return
                except HbenchError as error:
                    if error.code != "datarepo-push-rejected":
                        errors.append(error)
                        return
            errors.append(RuntimeError("the writer never got its changes in"))

        threads = [threading.Thread(target=drain, args=(w,)) for w in writers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert errors == []
    finally:
        second.dispose()
    assert Racing.rejected > 0, "the writers never crossed; the test proved nothing"
    state = remote_state(remote)
    assert len(state.under(layout.runs_dir("hbench-demo"))) == 60
    assert sorted(audit_changes(state)) == sorted(ours + theirs)
    assert trailers(remote) == dict.fromkeys(ours + theirs, 1)
    assert recompute_all(state) == state
    assert sum(row["runsPublic"] for row in _rows(state)) == 60


def test_one_writer_holds_the_outbox_at_a_time(database: Database) -> None:
    with writer_lock(database, wait=0):
        with pytest.raises(HbenchError) as busy, writer_lock(database, wait=0.2):
            pass
        assert busy.value.code == "datarepo-writer-busy"
    with writer_lock(database, wait=0):  # released when its holder finished
        pass


def test_a_checkout_folder_that_is_not_a_checkout_is_refused(
    make_writer: WriterFactory, tmp_path: Path
) -> None:
    (tmp_path / "checkout").mkdir()
    (tmp_path / "checkout" / "notes.txt").write_text("mine")
    with pytest.raises(HbenchError) as refused:
        make_writer().drain()
    assert refused.value.code == "datarepo-checkout-invalid"
    assert (tmp_path / "checkout" / "notes.txt").read_text() == "mine"


def test_the_local_remote_refuses_to_lose_history(remote: Path) -> None:
    config = git(remote, "config", "--list")
    assert "receive.denynonfastforwards=true" in config
    assert "receive.denydeletes=true" in config


def test_a_ref_lock_a_crash_left_in_the_local_repository_is_cleared(
    database: Database, remote: Path, tmp_path: Path
) -> None:
    changes = enqueue_all(database, [publish(1)])
    # The receiving end of a push killed with the machine, holding the branch's lock.
    lock = remote / "refs" / "heads" / "main.lock"
    lock.write_text("0" * 40 + "\n")
    os.utime(lock, (time.time() - 60, time.time() - 60))
    elsewhere = Writer(database, Checkout(tmp_path / "c1", Remote(str(remote))), backoff=0.001)
    with pytest.raises(HbenchError) as refused:  # a remote not ours: its locks are left alone
        elsewhere.drain()
    assert refused.value.code == "datarepo-push-rejected"
    assert "[remote rejected]" in refused.value.detail
    assert lock.exists()

    ours = Remote(str(remote), local_dir=remote)  # local mode's own bare repository
    assert Writer(database, Checkout(tmp_path / "c2", ours)).drain().applied == 1
    assert not lock.exists()
    assert trailers(remote) == dict.fromkeys(changes, 1)
