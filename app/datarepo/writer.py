"""The data-repo writer: pending outbox entries, in batches, to commits on the data
repository, each change exactly once.

One batch: fetch the remote and reset the checkout to its head; mark applied the entries
whose change ids the remote's trailers already name (a crash after a push, before the
database heard of it); read only the files the batch touches; apply its changes
(`changes.apply_batch`); commit once, with a trailer per change; push. A rejected push
means someone else pushed: fetch, drop the changes that landed meanwhile, apply the rest
again on the new head, and retry after a jittered, growing pause, a bounded number of
times. Only after a push succeeds are its entries marked applied. A change that fails is
counted, with its error, and after `max_attempts` the writer gives up on it; the rest of
the batch goes on.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from app.datarepo import outbox
from app.datarepo.changes import (
    BatchResult,
    Pending,
    apply_batch,
    commit_message,
    describe,
    from_outbox,
    needs,
)
from app.datarepo.checkout import Checkout
from app.db.models import OutboxEntry, utcnow
from app.db.session import Database
from app.observe import metrics
from hbench.errors import HbenchError
from registry.datarepo.state import Change

log = logging.getLogger(__name__)

CLOCK_SKEW = timedelta(days=1)
"""How far the writer's clock may trail the database's: a commit that carries an entry
was made after the entry was created, give or take this much."""


@dataclass
class DrainReport:
    """What a run of the writer did."""

    applied: int = 0
    landed: int = 0  # found in the repository already (a crash after their push)
    failed: int = 0
    commits: int = 0
    given_up: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Outcome:
    applied: tuple[str, ...]  # change ids now in the repository, landed earlier or now
    failed: dict[str, str]
    commit: str | None
    parent: str


class Writer:
    """Drains one database's outbox into one checkout of the data repository.

    Run it holding the writer lock (`lock.writer_lock`); the service and the
    `hbench-app data-repo write` command do.
    """

    def __init__(
        self,
        database: Database,
        checkout: Checkout,
        *,
        batch_size: int = 100,
        max_attempts: int = 5,
        push_attempts: int = 6,
        backoff: float = 0.05,
        clock: Callable[[], datetime] = utcnow,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.database = database
        self.checkout = checkout
        self.batch_size = batch_size
        self.max_attempts = max_attempts
        self.push_attempts = push_attempts
        self.backoff = backoff
        self.clock = clock
        self.sleep = sleep
        self.rng = rng or random.Random()  # noqa: S311 - jitter, not a secret
        # The remote head whose history this writer has read trailers from; None until
        # the first batch, which reads back as far as the oldest pending entry.
        self._scanned: str | None = None
        self._ready = False

    def prepare(self) -> None:
        """Make the checkout (and, in local mode, the repository) if they don't exist yet,
        and clear what a killed git left in it."""
        self.checkout.ensure()
        self._ready = True

    def drain(self, stop: threading.Event | None = None) -> DrainReport:
        """Write batches until the outbox has nothing left to try (or `stop` is set)."""
        report = DrainReport()
        try:
            if not self._ready:
                self.prepare()
            while stop is None or not stop.is_set():
                if not self.write_batch(report):
                    break
        except BaseException:
            # A git killed by its timeout, say, may have left a lock: the next round
            # checks the checkout again before using it.
            self._ready = False
            raise
        return report

    def write_batch(self, report: DrainReport | None = None) -> bool:
        """Write one batch; False when nothing was pending."""
        report = report if report is not None else DrainReport()
        # An idle writer looks at the database only: no fetch while nothing waits.
        if not self._pending():
            return False
        head = self.checkout.sync()
        report.landed += self._mark_landed(head)
        entries = self._pending()
        if not entries:
            return False
        batch, invalid = _parse(entries)
        outcome = self._commit_and_push(batch, head)
        failed = {**invalid, **outcome.failed}
        self._record(entries, outcome.applied, failed, report)
        metrics.writer_batch(
            committed=outcome.commit is not None, applied=len(outcome.applied), failed=len(failed)
        )
        if outcome.commit is not None:
            log.info(
                "pushed %s to the data repository: %s change(s) applied, %s failed",
                outcome.commit[:12], len(outcome.applied), len(failed),
            )  # fmt: skip
            report.commits += 1
            # Pushed straight onto the head whose history was read: the next batch need
            # not read this commit's trailers, they are the changes just recorded.
            if outcome.parent == self._scanned:
                self._scanned = outcome.commit
        return True

    def _pending(self) -> list[OutboxEntry]:
        with self.database.session() as session:
            return outbox.pending_entries(
                session, limit=self.batch_size, max_attempts=self.max_attempts
            )

    def _mark_landed(self, head: str) -> int:
        """Mark applied the entries whose changes the remote already holds."""
        if self._scanned == head:
            return 0
        with self.database.session() as session:
            if self._scanned is None:
                oldest = outbox.oldest_pending_time(session, max_attempts=self.max_attempts)
                landed = (
                    set() if oldest is None else self.checkout.landed(since=oldest - CLOCK_SKEW)
                )
            else:
                landed = self.checkout.landed(after=self._scanned)
            marked = outbox.mark_landed(session, landed, at=self.clock())
            session.commit()
        self._scanned = head
        if marked:
            log.info("data repository already held outbox entries %s; marked applied", marked)
        return len(marked)

    def _commit_and_push(self, batch: Sequence[Pending], head: str) -> _Outcome:
        landed: set[str] = set()
        base = head
        for attempt in range(self.push_attempts):
            todo = [p for p in batch if p.change.id not in landed]
            before = self.checkout.read(needs(todo))
            result = apply_batch(before, todo)
            diff = result.state.diff(before)
            if not diff:
                return _outcome(result, landed, commit=None, parent=base)
            self.checkout.write(diff)
            sha = self.checkout.commit(sorted(diff), commit_message(result.applied))
            if self.checkout.push():
                return _outcome(result, landed, commit=sha, parent=base)
            delay = self.backoff * 2**attempt * self.rng.uniform(0.5, 1.5)
            log.info("data repository moved during a push; retrying in %.2f s", delay)
            self.sleep(delay)
            # What landed meanwhile is dropped from the batch now; `_scanned` stays put,
            # so the next batch reads these commits' trailers for every other entry too.
            head = self.checkout.sync()
            landed |= self.checkout.landed(after=base) & {p.change.id for p in batch}
            base = head
        message = (
            f"the data repository refused each of {self.push_attempts} pushes in a row, "
            f"the last with {self.checkout.last_refusal!r}; the writer tries again on its "
            "next round"
        )
        raise HbenchError("datarepo-push-rejected", message)

    def _record(
        self,
        entries: Sequence[OutboxEntry],
        applied: Sequence[str],
        failed: dict[str, str],
        report: DrainReport,
    ) -> None:
        by_change = {outbox.entry_change_id(e): e for e in entries}
        attempts = {e.id: e.attempts + 1 for e in entries}
        applied_ids = [by_change[c].id for c in applied if c in by_change]
        errors = {by_change[c].id: error for c, error in failed.items()}
        with self.database.session() as session:
            outbox.mark_applied(session, applied_ids, at=self.clock())
            outbox.record_failures(session, errors)
            session.commit()
        report.applied += len(applied_ids)
        report.failed += len(errors)
        for entry_id, error in errors.items():
            if attempts[entry_id] >= self.max_attempts:
                report.given_up.append(entry_id)
                log.warning(
                    "gave up on outbox entry %s after %s attempts: %s",
                    entry_id, attempts[entry_id], error,
                )  # fmt: skip
            else:
                log.info(
                    "outbox entry %s failed (attempt %s): %s", entry_id, attempts[entry_id], error
                )


def _parse(entries: Sequence[OutboxEntry]) -> tuple[list[Pending], dict[str, str]]:
    batch: list[Pending] = []
    invalid: dict[str, str] = {}
    for entry in entries:
        change = Change(outbox.entry_change_id(entry), entry.created_at)
        try:
            batch.append(Pending(change, from_outbox(entry.kind, entry.payload)))
        except HbenchError as error:
            invalid[change.id] = describe(error)
    return batch, invalid


def _outcome(result: BatchResult, landed: set[str], *, commit: str | None, parent: str) -> _Outcome:
    applied = (*sorted(landed), *(p.change.id for p in result.applied))
    return _Outcome(applied, result.failed, commit, parent)
