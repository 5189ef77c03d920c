"""Through the real data repository: publish, run the writer, read the board's rows."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.settings import Settings
from registry.datarepo import layout

from ..bench.conftest import issue_run, run_token, upload
from ..bench.jobs import SealedJob
from ..conftest import TokenFactory, bearer
from .conftest import (
    FakeClock,
    board_rows,
    publish,
    uploaded,
    variant,
    write_data_repository,
)
from .test_maintenance import maintain
from .test_publish import LONGER_TIMEOUT


def test_an_issued_run_published_reaches_its_boards_rows_counted_right(
    client: TestClient, *, db: Session, settings: Settings, sealed: SealedJob,
    sealed_archive: bytes, make_token: TokenFactory, clock: FakeClock,
) -> None:  # fmt: skip
    published = issue_run(db, sealed.spec, login="alice")
    issue_run(db, sealed.spec, login="alice")  # expires unuploaded
    job_id = upload(client, sealed_archive, **run_token(published.token)).json()["id"]
    token = make_token("alice")
    assert publish(client, job_id, token).status_code == 200
    maintain(settings, clock.now + timedelta(days=2))

    checkout = write_data_repository(settings)

    rows = board_rows(checkout, "hbench-demo")
    (row,) = rows.rows
    assert (row.owner, row.entry) == ("alice", "oracle-a1b2c3")
    assert (row.runs_public, row.runs_issued, row.runs_issued_public) == (1, 2, 1)
    assert row.score == 0.8 and [r.id for r in row.runs] == [job_id]
    audit = "".join(p.read_text() for p in (checkout / "audit").glob("*.jsonl"))
    assert audit.count('"action":"publish"') == 1 and audit.count('"count_issued"') == 2

    client.post(f"/api/bench/jobs/{job_id}/withdraw", headers=bearer(token))
    client.delete(f"/api/bench/jobs/{job_id}", params={"confirm": "oracle-k2"},
                  headers=bearer(token))  # fmt: skip
    write_data_repository(settings)
    rows = board_rows(checkout, "hbench-demo")
    assert rows.rows == [] and rows.runs_withdrawn == 1
    audit = "".join(p.read_text() for p in (checkout / "audit").glob("*.jsonl"))
    assert '"action":"withdraw"' in audit and '"action":"delete_files"' in audit


@pytest.mark.postgres
def test_two_owners_publishing_at_once_both_land_on_a_new_board(
    client: TestClient, *, settings: Settings, sealed: SealedJob, make_token: TokenFactory,
    tmp_path: Path, clock: FakeClock,
) -> None:  # fmt: skip
    owners = {login: make_token(login) for login in ("alice", "bob", "carol")}
    jobs = {
        login: uploaded(
            client,
            variant(sealed, tmp_path, config=LONGER_TIMEOUT, shift=timedelta(minutes=n)),
            token,
        )
        for n, (login, token) in enumerate(owners.items())
    }
    start = threading.Barrier(len(owners))
    answers: dict[str, int] = {}

    def go(login: str) -> None:
        start.wait()
        answers[login] = publish(client, jobs[login], owners[login]).status_code

    threads = [threading.Thread(target=go, args=(login,)) for login in owners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert answers == dict.fromkeys(owners, 200)
    checkout = write_data_repository(settings)
    (board,) = [p.parent.name for p in (checkout / "boards").glob("*/board.json")]
    assert (checkout / layout.open_board_file(board)).is_file()
    rows = board_rows(checkout, board)
    assert sorted(row.owner for row in rows.rows) == sorted(owners)
    assert all(row.runs_public == 1 for row in rows.rows)
