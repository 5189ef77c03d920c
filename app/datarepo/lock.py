"""One writer at a time per outbox: a lock held while a writer drains it.

Two writers of one outbox would both apply its oldest entries; the trailers and the
changes' idempotence would still keep the repository right, but a writer applying
entries on a checkout the other just moved could count failures that are not real. So
replicas take turns: on PostgreSQL through a session advisory lock, on SQLite (one
machine by construction) through `flock` on a file beside the database. Both are
released by the operating system when their holder dies, so a killed writer never
leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, text

from app.db.session import Database
from hbench.errors import HbenchError

LOCK_KEY = int.from_bytes(hashlib.sha256(b"hbench-datarepo-writer").digest()[:8], signed=True)
RETRY_SECONDS = 0.1
# In-memory SQLite databases live in one process; a process-wide lock is all they need.
_IN_PROCESS: dict[str, threading.Lock] = {}


@contextmanager
def writer_lock(database: Database, *, wait: float) -> Iterator[None]:
    """Hold the outbox's writer lock, waiting up to `wait` seconds for it.

    Refused with `datarepo-writer-busy` when another writer still holds it then.
    """
    url = database.engine.url
    if url.get_backend_name() == "postgresql":
        with _advisory_lock(database, wait):
            yield
    elif url.database and url.database != ":memory:":
        with _file_lock(Path(f"{url.database}.writer-lock"), wait):
            yield
    else:
        lock = _IN_PROCESS.setdefault(str(url), threading.Lock())
        _retry(lambda: lock.acquire(blocking=False), wait)
        try:
            yield
        finally:
            lock.release()


@contextmanager
def _advisory_lock(database: Database, wait: float) -> Iterator[None]:
    # A session-level lock belongs to the connection: keep this one out of the pool's
    # hands until the lock is released, and end its transaction so it is not left idle
    # in one.
    connection = database.engine.connect()
    try:
        _retry(lambda: _try_advisory(connection), wait)
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": LOCK_KEY})
            connection.commit()
    finally:
        connection.close()


def _try_advisory(connection: Connection) -> bool:
    query = text("SELECT pg_try_advisory_lock(:key)")
    held = bool(connection.execute(query, {"key": LOCK_KEY}).scalar())
    connection.commit()
    return held


@contextmanager
def _file_lock(path: Path, wait: float) -> Iterator[None]:
    with path.open("a") as handle:

        def try_lock() -> bool:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

        _retry(try_lock, wait)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _retry(attempt: Callable[[], bool], wait: float) -> None:
    deadline = time.monotonic() + wait
    while not attempt():
        if time.monotonic() >= deadline:
            raise _busy(wait)
        time.sleep(RETRY_SECONDS)


def _busy(wait: float) -> HbenchError:
    message = (
        f"another data-repo writer has held the outbox for {wait:.0f} s; the service runs "
        "one itself unless HBENCH_WRITER_ENABLED=false"
    )
    return HbenchError("datarepo-writer-busy", message)
