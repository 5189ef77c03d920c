"""The load test of `bench/load.py`, small: 20 clients for 3 seconds against `hbench-app
serve` on loopback, on PostgreSQL (on SQLite too where every test runs on both, as in CI:
tests/conftest.py). Every request must succeed, and afterwards every accepted upload,
issued run and publish must be found exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from load import WEIGHTS, WRITER_POLL, check_afterwards, prepare, run_load
from service import running_service

from tests.app.bench.jobs import SealedJob, sealed_job
from tests.app.conftest import scratch_database
from tests.conftest import HarborJobFactory, backends_for

pytestmark = [pytest.mark.harbor, pytest.mark.timeout(600)]

CLIENTS = 20
SECONDS = 3.0


@pytest.fixture(scope="module")
def sealed(
    harbor_job: HarborJobFactory, demo_registry: Path, tmp_path_factory: pytest.TempPathFactory
) -> SealedJob:
    """The session's real oracle job, sealed."""
    return sealed_job(harbor_job, demo_registry, tmp_path_factory.mktemp("load-sealed"))


@pytest.fixture(params=backends_for(marked=True))
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str | None]:
    """None for the service's own SQLite database, or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield None
        return
    with scratch_database(request.param, tmp_path) as url:
        yield url


def test_twenty_clients_get_no_error_and_everything_accepted_is_there_once(
    sealed: SealedJob, database_url: str | None, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    with running_service(state, database_url=database_url, env={WRITER_POLL: "1"}) as service:
        work, ledger = prepare(tmp_path, service, accounts=CLIENTS, publishes=20, job=sealed.path)
        asyncio.run(run_load(service.url, work, ledger, clients=CLIENTS, seconds=SECONDS))
        problems = check_afterwards(service.url, service, ledger)

    assert ledger.errors == []
    assert problems == []
    assert set(ledger.latencies) == set(WEIGHTS), "every operation ran"
    uploaded = sum(len(jobs) for jobs in ledger.uploaded.values())
    published = sum(len(jobs) for jobs in ledger.published.values())
    issued = sum(len(runs) for runs in ledger.issued.values())
    assert uploaded > published >= 2 and issued >= 1
