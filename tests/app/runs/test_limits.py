"""A board's limits, counted in the database: runs per 24 hours, and runs waiting at once."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.clock import get_clock
from app.main import create_app
from app.registry import default_registry
from app.settings import Settings

from ..conftest import LOCAL, REMOTE, TokenFactory, bearer
from .conftest import DEMO, START, FakeClock, count_runs, issue

pytestmark = pytest.mark.postgres  # the database's semantics: both backends

LIMITS = default_registry().boards["hbench-demo"].limits
QUICK = {"arena": "hbench-demo-quick", "declarative": {"agent": "oracle"}}


def issue_ok(client: TestClient, body: dict[str, Any] = DEMO, **headers: str) -> str:
    answer = issue(client, body, **headers)
    assert answer.status_code == 201, answer.text
    run_id: str = answer.json()["run_id"]
    return run_id


def abandon(client: TestClient, run_id: str) -> int:
    return client.post(f"/api/local-runs/{run_id}/abandon").status_code


def test_the_waiting_limit_holds_and_abandoning_frees_a_slot_at_once(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    waiting = []
    for _ in range(LIMITS.runs_waiting):
        waiting.append(issue_ok(client))
        clock.advance(minutes=10)

    refused = issue(client)

    assert refused.status_code == 429
    assert refused.json()["code"] == "run-limit-waiting"
    detail = refused.json()["detail"]
    # The first run expires 48 hours after it was issued, 10 minutes a run ago.
    wait = 48 * 60 - 10 * LIMITS.runs_waiting
    assert f"at 2026-11-01 12:00 UTC (in {wait // 60} h {wait % 60} min)" in detail
    assert "hbench runs abandon RUN_ID" in detail
    assert count_runs(db) == LIMITS.runs_waiting

    assert abandon(client, waiting[2]) == 200
    issue_ok(client)
    assert issue(client).json()["code"] == "run-limit-waiting"
    assert count_runs(db) == LIMITS.runs_waiting + 1


def test_an_expired_run_frees_its_waiting_slot(client: TestClient, clock: FakeClock) -> None:
    for _ in range(LIMITS.runs_waiting):
        issue_ok(client)
    assert issue(client).status_code == 429

    clock.advance(hours=48)

    statuses = {run["status"] for run in client.get("/api/local-runs").json()["runs"]}
    assert statuses == {"expired"}
    issue_ok(client)


def test_the_daily_limit_counts_abandoned_runs(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    for _ in range(LIMITS.runs_per_day):
        assert abandon(client, issue_ok(client)) == 200
        clock.advance(minutes=1)

    refused = issue(client)

    assert refused.status_code == 429
    assert refused.json()["code"] == "run-limit-daily"
    wait = 24 * 60 - LIMITS.runs_per_day
    assert (
        f"at 2026-10-31 12:00 UTC (in {wait // 60} h {wait % 60} min)" in (refused.json()["detail"])
    )
    assert count_runs(db) == LIMITS.runs_per_day
    # When the first run leaves the 24-hour window, one more may be issued, and no more.
    clock.now = START + timedelta(hours=24)
    issue_ok(client)
    assert issue(client).json()["code"] == "run-limit-daily"


@pytest.fixture
def short_lived(settings: Settings) -> Iterator[tuple[TestClient, FakeClock]]:
    """An app whose run tokens live an hour, so runs expire within a day."""
    app = create_app(settings.model_copy(update={"run_token_lifetime": timedelta(hours=1)}))
    clock = FakeClock(START)
    app.dependency_overrides[get_clock] = lambda: clock
    with TestClient(app, **LOCAL) as client:
        yield client, clock


def test_the_daily_limit_counts_expired_runs(short_lived: tuple[TestClient, FakeClock]) -> None:
    client, clock = short_lived
    for _ in range(LIMITS.runs_per_day):
        issue_ok(client)
        clock.advance(minutes=61)  # each run has expired before the next is issued

    refused = issue(client)

    assert refused.json()["code"] == "run-limit-daily"
    assert {run["status"] for run in client.get("/api/local-runs").json()["runs"]} == {"expired"}


def test_limits_are_per_board_and_per_account(
    client: TestClient, clock: FakeClock, make_token: TokenFactory
) -> None:
    for _ in range(LIMITS.runs_waiting):
        issue_ok(client)
    assert issue(client).json()["code"] == "run-limit-waiting"

    issue_ok(client, QUICK)
    issue_ok(TestClient(client.app, **REMOTE), DEMO, **bearer(make_token("alice")))


def test_racing_requests_never_pass_the_limit(client: TestClient, db: Session) -> None:
    attempts = LIMITS.runs_waiting + 3
    with ThreadPoolExecutor(max_workers=attempts) as pool:
        statuses = list(pool.map(lambda _: issue(client).status_code, range(attempts)))

    assert sorted(statuses) == [201] * LIMITS.runs_waiting + [429] * 3
    assert count_runs(db) == LIMITS.runs_waiting
