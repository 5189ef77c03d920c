"""SQLite's writers in one process take turns (`app.db.session.WriteTurnConnection`): a
transaction that writes holds its process's turn until it ends, reads never take it, and a
waiting writer goes on the moment the one before it commits."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sqlalchemy import text

from app.db.session import Database, write_turn, writes


def database(folder: Path) -> Database:
    db = Database(f"sqlite+pysqlite:///{folder / 'turns.sqlite3'}")
    with db.engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (n INTEGER)"))
    return db


def test_statements_that_write_are_told_from_those_that_only_read() -> None:
    assert writes("INSERT INTO t VALUES (1)")
    assert writes("  update t set n = 2")
    assert writes("DELETE FROM t")
    assert writes("CREATE TABLE u (n INTEGER)")
    assert not writes("SELECT n FROM t")
    assert not writes("PRAGMA journal_mode = WAL")
    assert not writes("SAVEPOINT sa_1")


def test_a_writing_transaction_holds_the_turn_until_it_ends(tmp_path: Path) -> None:
    db = database(tmp_path)
    turn = write_turn(str(tmp_path / "turns.sqlite3"))
    try:
        with db.session() as session:
            session.execute(text("SELECT count(*) FROM t"))
            assert not turn.locked()
            session.execute(text("INSERT INTO t VALUES (1)"))
            assert turn.locked()
            session.commit()
            assert not turn.locked()
            session.execute(text("INSERT INTO t VALUES (2)"))
            assert turn.locked()
            session.rollback()
            assert not turn.locked()
        with db.session() as session:
            session.execute(text("INSERT INTO t VALUES (3)"))
        # Closed without a commit: rolled back, and the turn is free.
        assert not turn.locked()
        with db.session() as session:
            assert session.execute(text("SELECT n FROM t")).scalars().all() == [1]
    finally:
        db.dispose()


def test_a_second_writer_waits_for_the_first_to_commit(tmp_path: Path) -> None:
    db = database(tmp_path)
    order: list[str] = []
    first_wrote = threading.Event()

    def first() -> None:
        with db.session() as session:
            session.execute(text("INSERT INTO t VALUES (1)"))
            first_wrote.set()
            time.sleep(0.2)
            order.append("first commits")
            session.commit()

    def second() -> None:
        first_wrote.wait()
        with db.session() as session:
            session.execute(text("INSERT INTO t VALUES (2)"))
            order.append("second wrote")
            session.commit()

    try:
        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        assert order == ["first commits", "second wrote"]
        with db.session() as session:
            assert sorted(session.execute(text("SELECT n FROM t")).scalars()) == [1, 2]
    finally:
        db.dispose()


def test_many_threads_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    db = database(tmp_path)

    def write(base: int) -> None:
        for n in range(50):
            with db.session() as session:
                session.execute(text("INSERT INTO t VALUES (:n)"), {"n": base + n})
                session.execute(text("SELECT count(*) FROM t"))
                session.commit()

    try:
        threads = [threading.Thread(target=write, args=(1000 * k,)) for k in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        with db.session() as session:
            assert session.execute(text("SELECT count(DISTINCT n) FROM t")).scalar() == 400
    finally:
        db.dispose()
