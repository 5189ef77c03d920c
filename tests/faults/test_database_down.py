"""The database lost in the middle of a request: the service answers 503 with a rule code,
writes nothing half-way, and serves again once the database is back.

PostgreSQL: an upload is held at its insert by a table lock, and its connection is then
cut (`pg_terminate_backend`); afterwards the database refuses new connections for a
while. SQLite: another process holds the file's write lock for longer than the service
waits for it.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from app.db.models import Job
from app.db.session import SQLITE_BUSY_TIMEOUT_MS, Database
from app.dependencies import get_database
from app.errors import install_error_handlers
from app.main import create_app
from app.settings import Settings
from tests.app.conftest import NO_REGRADES

from .conftest import Service

pytestmark = pytest.mark.postgres  # the database's semantics: both backends

GZIP = {"content-type": "application/gzip"}
UNAVAILABLE = "service-unavailable"


def upload(url: str, archive: bytes) -> httpx.Response:
    return httpx.post(f"{url}/api/bench/uploads", content=archive, headers=GZIP, timeout=60)


def assert_unavailable(answer: httpx.Response) -> None:
    """A 503 in the envelope, saying what to do, and nothing of the driver's text."""
    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["code"] == UNAVAILABLE and body["errors"][0]["code"] == UNAVAILABLE
    assert "try again" in body["detail"]
    for leak in ("Traceback", "psycopg", "sqlite", "terminat", "locked", "SELECT", "INSERT"):
        assert leak not in answer.text


def job_count(db: Session) -> int:
    db.rollback()
    return db.scalar(select(func.count()).select_from(Job)) or 0


def stored_blobs(service: Service) -> list[str]:
    jobs = service.state_dir / "blobs" / "jobs"
    return sorted(p.name for p in jobs.rglob("*") if p.is_file()) if jobs.is_dir() else []


def test_a_lost_database_answers_503_writes_nothing_and_recovers(
    make_service: type[Service], *, db: Session, database_url: str, sealed_archive: bytes
) -> None:
    service = make_service(writer_enabled="false")
    service.start()
    cut = cut_postgres if database_url.startswith("postgresql") else lock_sqlite
    answer = cut(service, database_url, sealed_archive)

    assert_unavailable(answer)
    assert job_count(db) == 0
    assert stored_blobs(service) == []  # the archive written before the insert was removed
    log = service.log.read_text()
    assert "Traceback" not in log and "database unavailable during POST" in log

    # The database is back: the same upload is taken, once.
    accepted = upload(service.url, sealed_archive)
    assert accepted.status_code == 201, accepted.text
    assert job_count(db) == 1 and len(stored_blobs(service)) == 1


def cut_postgres(service: Service, database_url: str, archive: bytes) -> httpx.Response:
    """Hold the upload at its insert with a lock (reads go on, writes wait: the archive is
    in the blob store by then), cut its connection, then refuse every
    new connection for one more request; let connections in again before returning."""
    name = make_url(database_url).database
    admin = create_engine(database_url.rsplit("/", 1)[0] + "/postgres",
                          isolation_level="AUTOCOMMIT")  # fmt: skip
    locker = create_engine(database_url)
    answers: list[httpx.Response] = []
    try:
        with locker.connect() as lock:
            lock.execute(text("LOCK TABLE jobs IN EXCLUSIVE MODE"))
            sender = threading.Thread(target=lambda: answers.append(upload(service.url, archive)))
            sender.start()
            with admin.connect() as connection:
                waiting = wait_for_lock_waiter(connection, name)
                connection.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": waiting})
                sender.join(60)
                lock.rollback()
                # Now no connection at all: the pool's next connection is refused.
                connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
                connection.execute(
                    text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE pid <> pg_backend_pid() AND datname = :name"), {"name": name},
                )  # fmt: skip
                try:
                    assert_unavailable(upload(service.url, archive))
                    assert_unavailable(httpx.get(f"{service.url}/api/bench/jobs", timeout=30))
                finally:
                    connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
    finally:
        locker.dispose()
        admin.dispose()
    (answer,) = answers
    return answer


def wait_for_lock_waiter(connection: object, name: str | None) -> int:
    """The pid of the service's backend waiting for the lock on `jobs`."""
    query = text(
        "SELECT pid FROM pg_stat_activity WHERE datname = :name AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        pid = connection.execute(query, {"name": name}).scalar()  # type: ignore[attr-defined]
        if pid is not None:
            return int(pid)
        time.sleep(0.02)
    raise AssertionError("the upload never reached its insert")


def lock_sqlite(service: Service, database_url: str, archive: bytes) -> httpx.Response:
    """Hold SQLite's write lock from another connection for longer than the service waits."""
    path = make_url(database_url).database
    assert path is not None
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        answer = upload(service.url, archive)
        assert time.monotonic() - started >= SQLITE_BUSY_TIMEOUT_MS / 1000 * 0.9
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    return answer


def test_a_request_that_finds_no_free_connection_in_time_is_answered_503(
    tmp_path: Path,
) -> None:
    settings = Settings(state_dir=tmp_path / "state", writer_enabled=False, **NO_REGRADES)
    app = create_app(settings)
    crowded = Database(
        settings.effective_database_url, pool_size=1, max_overflow=0, pool_timeout=0.2
    )
    # The local user, signed in from this machine: listing its jobs needs the database.
    local = {"base_url": "http://127.0.0.1:8000", "client": ("127.0.0.1", 50000)}
    with TestClient(app, raise_server_exceptions=False, **local) as client:  # type: ignore[arg-type]
        app.dependency_overrides[get_database] = lambda: crowded
        with crowded.engine.connect():  # its only connection, held by someone else
            busy = client.get("/api/bench/jobs")
        assert_unavailable(httpx.Response(busy.status_code, content=busy.content))
        assert client.get("/api/bench/jobs").status_code == 200  # free again
    crowded.dispose()


def test_only_an_outage_is_answered_503_a_faulty_query_stays_a_500() -> None:
    app = FastAPI()
    install_error_handlers(app)
    failures = {
        "locked": OperationalError("UPDATE jobs", {}, sqlite3.OperationalError("locked")),
        "duplicate": IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE")),
    }

    @app.get("/api/{kind}")
    def fail(kind: str) -> None:
        raise failures[kind]

    with TestClient(app, raise_server_exceptions=False) as client:
        outage, bug = client.get("/api/locked"), client.get("/api/duplicate")
    assert (outage.status_code, outage.json()["code"]) == (503, UNAVAILABLE)
    assert (bug.status_code, bug.json()["code"]) == (500, "internal-error")
    assert "UNIQUE" not in bug.text and "locked" not in outage.text
