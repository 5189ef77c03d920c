"""The data repository refuses the writer's pushes (a pre-receive hook says no): the changes
stay in the outbox, each try is refused with a rule code, and once the repository takes
pushes again every change lands exactly once. (A push refused because the branch moved
is `tests/app/datarepo/test_writer.py`'s.)"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from app.datarepo.changes import WithdrawRunChange
from app.datarepo.outbox import enqueue, entry_change_id
from app.db.session import Database
from hbench.errors import HbenchError
from registry.datarepo.state import recompute_all
from tests.app.datarepo.conftest import (
    WriterFactory,
    commit_count,
    database,
    git,
    make_writer,
    outbox_rows,
    publish,
    remote,
    remote_state,
    trailers,
)

pytestmark = pytest.mark.postgres  # the database's semantics: both backends

__all__ = ["database", "make_writer", "remote"]

HOOK = """#!/bin/sh
if [ -e "$GIT_DIR/refuse-pushes" ]; then
  echo "pushes are closed for maintenance" >&2
  exit 1
fi
"""


def refuse_pushes(remote: Path) -> Path:
    hook = remote / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(HOOK)
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    flag = remote / "refuse-pushes"
    flag.touch()
    return flag


def test_refused_pushes_keep_the_changes_and_land_them_once_when_accepted(
    database: Database, remote: Path, make_writer: WriterFactory
) -> None:
    with database.session() as session:
        entries = [enqueue(session, change) for change in (publish(1), publish(2))]
        entries.append(enqueue(session, WithdrawRunChange(board="hbench-demo", run_id="run-0001")))
        session.commit()
        ids = [entry_change_id(entry) for entry in entries]
    before = commit_count(remote)
    flag = refuse_pushes(remote)
    writer = make_writer(push_attempts=2)

    for _ in range(2):  # the writer's next rounds are refused the same way
        with pytest.raises(HbenchError) as refused:
            writer.drain()
        assert refused.value.code == "datarepo-push-rejected"
        assert "pre-receive hook declined" in refused.value.detail
        assert commit_count(remote) == before and trailers(remote) == {}
        rows = outbox_rows(database)
        assert [row.applied_at for row in rows] == [None] * 3  # kept, not given up
        assert all(row.last_error is None for row in rows)

    flag.unlink()
    report = writer.drain()

    assert report.applied == 3
    assert trailers(remote) == dict.fromkeys(ids, 1)
    assert commit_count(remote) == before + 1  # one commit; the refused ones never landed
    assert all(row.applied_at is not None for row in outbox_rows(database))
    state = remote_state(remote)
    assert recompute_all(state) == state
    assert "pushes are closed" not in git(remote, "log", "--format=%B", "main")
