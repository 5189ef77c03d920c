"""CPU seconds used so far by a process and everything under it, and by the PostgreSQL
backends serving one database, read from `/proc` (Linux): what `bench/request_cost.py` and
`bench/capacity_sim.py` divide by the requests they send.

A process's figure is its user and system time, its threads' included, plus that of the
children it has waited for (`utime + stime + cutime + cstime`, proc(5)); summed over the
living tree, a child that ended between two readings is counted in its parent's.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command's name, or None once it has ended."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text[text.rindex(")") + 2 :].split()


def _parents() -> dict[int, int]:
    """Each living process's parent."""
    parents = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))):
            parents[int(entry.name)] = int(fields[1])
    return parents


def tree(root: int) -> list[int]:
    """`root` and every living process under it."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def process_cpu(pid: int) -> float:
    """CPU seconds of one process, its threads and its waited-for children; 0 once ended."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    return sum(int(fields[n]) for n in (11, 12, 13, 14)) / TICKS


def tree_cpu(root: int) -> float:
    """CPU seconds of `root` and every living process under it."""
    return sum(process_cpu(pid) for pid in tree(root))


def pids_cpu(pids: Iterable[int]) -> float:
    return sum(process_cpu(pid) for pid in pids)


def settle(
    read: Callable[[], float], *, window: float = 0.4, quiet: float = 0.004, timeout: float = 90
) -> None:
    """Wait until `read()` (CPU seconds) grows by less than `quiet` over a `window`: the
    work a request left behind (a worker's, the writer's, the site's rebuild) is done."""
    deadline = time.monotonic() + timeout
    last = read()
    while time.monotonic() < deadline:
        time.sleep(window)
        now = read()
        if now - last < quiet:
            return
        last = now
    raise RuntimeError(f"the service was still busy after {timeout:.0f} s")


class Backends:
    """CPU of the PostgreSQL backends serving one database, sampled every `interval` by a
    thread, so a backend that closes between two readings still counts its last sample."""

    def __init__(self, server: str, database: str, interval: float = 0.2) -> None:
        import psycopg  # noqa: PLC0415 - only with PostgreSQL

        dsn = server.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
        self.connection = psycopg.connect(dsn, autocommit=True)
        self.database, self.interval = database, interval
        self.seen: dict[int, float] = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    def _sample(self) -> None:
        with self.lock:
            rows = self.connection.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s", (self.database,)
            ).fetchall()
            for (pid,) in rows:
                self.seen[pid] = max(self.seen.get(pid, 0.0), pids_cpu([pid]))

    def _watch(self) -> None:
        while not self.stopped.wait(self.interval):
            self._sample()

    def cpu(self) -> float:
        """CPU seconds of every backend seen so far."""
        self._sample()
        return sum(self.seen.values())

    def close(self) -> None:
        self.stopped.set()
        with self.lock:
            self.connection.close()
