"""A promise of "Withdraw, delete or report a run"
(../shared/spec/hbench-withdraw-delete-report.txt) that no other test drove: a run you
issued, published and then withdrew, still counts toward your limits on its board."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.registry import default_registry
from tests.app.bench.conftest import FakeClock, issue_run, run_token, upload
from tests.app.bench.jobs import SealedJob
from tests.app.conftest import TokenFactory, bearer
from tests.app.publish.conftest import publish
from tests.app.runs.conftest import DEMO
from tests.app.runs.test_limits import LIMITS


def test_a_withdrawn_issued_run_still_counts_toward_the_boards_daily_limit(
    client: TestClient, remote: TestClient, *, db: Session, sealed: SealedJob,
    sealed_archive: bytes, make_token: TokenFactory, clock: FakeClock,
) -> None:  # fmt: skip
    assert default_registry().boards["hbench-demo"].limits == LIMITS
    api = bearer(make_token("alice"))
    issued = issue_run(db, sealed.spec, login="alice")  # an hour before the clock's now
    stored = upload(client, sealed_archive, **run_token(issued.token))
    assert stored.status_code == 201, stored.text
    job_id = stored.json()["id"]
    assert publish(client, job_id, api["authorization"].removeprefix("Bearer ")).status_code == 200
    withdrawn = client.post(f"/api/bench/jobs/{job_id}/withdraw", headers=api)
    assert withdrawn.status_code == 200, withdrawn.text

    # The day's other runs, each abandoned so the waiting limit never binds: one fewer than
    # the board's daily limit, since the withdrawn run still takes its place in the day.
    for _ in range(LIMITS.runs_per_day - 1):
        answer = remote.post("/api/local-runs", json=DEMO, headers=api)
        assert answer.status_code == 201, answer.text
        abandoned = remote.post(f"/api/local-runs/{answer.json()['run_id']}/abandon", headers=api)
        assert abandoned.status_code == 200, abandoned.text

    refused = remote.post("/api/local-runs", json=DEMO, headers=api)
    assert (refused.status_code, refused.json()["code"]) == (429, "run-limit-daily"), refused.text
    # Another account's day on the board is its own: the limit is alice's, not the board's.
    other = remote.post("/api/local-runs", json=DEMO, headers=bearer(make_token("bob")))
    assert other.status_code == 201, other.text
