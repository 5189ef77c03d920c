"""Engines and sessions: one `Database` per running app, SQLite by default, PostgreSQL by URL."""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

SQLITE_BUSY_TIMEOUT_MS = 10_000

POOL_SIZE = 10
POOL_OVERFLOW = 40
"""Connections kept open, and opened beyond them at a busy moment: 50 in all, more than the
40 threads that run the app's handlers (AnyIO's default) plus the data-repo writer's, so
that no request waits for a connection another request holds."""

POOL_TIMEOUT = 30.0
"""Seconds a request waits for a free connection before it is answered 503."""


class Database:
    """An engine and its session factory. Sessions don't expire rows on commit, so a
    handler can still read what it just wrote while it builds its answer."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = POOL_SIZE,
        max_overflow: int = POOL_OVERFLOW,
        pool_timeout: float = POOL_TIMEOUT,
    ) -> None:
        self.engine = make_engine(
            url, pool_size=pool_size, max_overflow=max_overflow, pool_timeout=pool_timeout
        )
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    def session(self) -> Session:
        return self.sessions()

    def ping(self) -> None:
        """Raise if the database can't answer a trivial query."""
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    def dispose(self) -> None:
        self.engine.dispose()


def make_engine(url: str, **pool: Any) -> Engine:
    """An engine for a database URL, set up the same way wherever the URL comes from;
    `pool` holds the connection pool's sizes and timeout (`Database` gives them)."""
    if url.startswith("sqlite"):
        engine = create_engine(url, **pool)
        event.listen(engine, "connect", _configure_sqlite)
        return engine
    # Replicas outlive database restarts and idle timeouts: test each connection on checkout.
    return create_engine(url, pool_pre_ping=True, **pool)


def _configure_sqlite(connection: sqlite3.Connection, _record: Any) -> None:
    # SQLite leaves foreign keys off unless asked, per connection. WAL lets readers go on
    # while one request writes, and the busy timeout makes a second writer wait its turn
    # instead of failing at once.
    cursor = connection.cursor()
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
    cursor.close()
