"""Engines and sessions: one `Database` per running app, SQLite by default, PostgreSQL by URL."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session, sessionmaker

SQLITE_BUSY_TIMEOUT_MS = 10_000
READ_ONLY_STATEMENTS = frozenset({"SELECT", "PRAGMA", "EXPLAIN", "SAVEPOINT", "RELEASE"})
"""Statements that take no write lock of SQLite's (a `SAVEPOINT` outside a transaction
starts a deferred one, which takes the lock at its first write)."""

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
        engine = create_engine(url, connect_args={"factory": WriteTurnConnection}, **pool)
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


# --- SQLite's one writer, in turn -------------------------------------------------------
#
# SQLite lets one transaction write at a time. A second writer that finds the lock taken
# is put off by SQLite's busy handler, which sleeps and tries again, ever longer (1, 2, 5,
# … 100 ms), and may miss many a free moment meanwhile: under 20 concurrent issues, a few
# waited a second for a lock held a millisecond at a time. The threads of one process
# therefore take a lock of their own, per database file, before their transaction's first
# write, and give it back when it ends: a waiting writer starts the moment the one before
# it commits. Other processes (the upload workers, a regrade worker) still meet SQLite's
# lock and its busy handler, as before.

_write_turns: dict[str, threading.Lock] = {}
_write_turns_lock = threading.Lock()


def write_turn(database: str) -> threading.Lock:
    """The lock this process's writers to a SQLite file take turns with."""
    key = database if database in ("", ":memory:") else str(Path(database).resolve())
    with _write_turns_lock:
        return _write_turns.setdefault(key, threading.Lock())


def writes(statement: str) -> bool:
    """Whether a statement may write, and so take SQLite's write lock."""
    words = statement.lstrip().split(None, 1)
    return bool(words) and words[0].upper() not in READ_ONLY_STATEMENTS


class WriteTurnConnection(sqlite3.Connection):
    """A SQLite connection that takes its process's turn to write (`write_turn`) before
    its transaction's first write and gives it back once the transaction has ended."""

    def __init__(self, database: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(database, *args, **kwargs)
        self.turn = write_turn(str(database))
        self.holds_turn = False

    # sqlite3's overloads of `cursor` can't be restated for a default factory of our own.
    def cursor(self, factory: Any = None) -> sqlite3.Cursor:  # type: ignore[override]
        return super().cursor(factory or WriteTurnCursor)

    def take_turn(self, statement: str) -> None:
        if self.holds_turn or not writes(statement):
            return
        if not self.turn.acquire(timeout=SQLITE_BUSY_TIMEOUT_MS / 1000):
            raise sqlite3.OperationalError("database is locked")
        self.holds_turn = True

    def end_turn(self) -> None:
        """Give the turn back unless a transaction is still open (after a statement that
        wrote outside one, or failed, none is)."""
        if self.holds_turn and not self.in_transaction:
            self.holds_turn = False
            self.turn.release()

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self.end_turn()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self.end_turn()

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.holds_turn:
                self.holds_turn = False
                self.turn.release()


class WriteTurnCursor(sqlite3.Cursor):
    """A cursor of a `WriteTurnConnection`: each statement that writes waits its turn."""

    connection: WriteTurnConnection

    def execute(self, sql: str, parameters: Any = (), /) -> Self:
        self.connection.take_turn(sql)
        try:
            super().execute(sql, parameters)
        finally:
            self.connection.end_turn()
        return self

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> Self:
        self.connection.take_turn(sql)
        try:
            super().executemany(sql, seq_of_parameters)
        finally:
            self.connection.end_turn()
        return self

    def executescript(self, sql_script: str, /) -> sqlite3.Cursor:
        self.connection.take_turn("SCRIPT")
        try:
            return super().executescript(sql_script)
        finally:
            self.connection.end_turn()
