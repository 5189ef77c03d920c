"""The writer as the service runs it: built from the settings, in a background thread
that a committed enqueue wakes, polling as a fallback.

A thread rather than an asyncio task: the writer's work is git processes and database
calls that block, and it must not hold up the service's requests.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path

from app.datarepo.checkout import Checkout
from app.datarepo.git import Remote, TokenProvider
from app.datarepo.lock import writer_lock
from app.datarepo.outbox import DOORBELL
from app.datarepo.writer import Writer
from app.db.session import Database
from app.settings import Settings
from app.site.serve import rebuild
from hbench.errors import HbenchError
from sitebuild.config import SiteConfig

log = logging.getLogger(__name__)

MAX_RETRY_SECONDS = 300.0
STOP_TIMEOUT_SECONDS = 60.0


def remote_for(settings: Settings, tokens: TokenProvider | None) -> Remote:
    """The repository the writer pushes to. In local mode, the writer's first round
    creates it (`Checkout.ensure`)."""
    if settings.mode == "local":
        return Remote(
            settings.data_repository_git_url, local_dir=settings.data_repository_remote_dir
        )
    if tokens is None:
        message = (
            "GitHub mode pushes to the data repository with the App's installation token, "
            "and no token provider was given"
        )
        raise HbenchError("datarepo-token-unavailable", message)
    return Remote(settings.data_repository_git_url, tokens)


def prepare_local_data_repository(settings: Settings) -> Path:
    """Local mode's data repository, made now if it doesn't exist yet: the bare
    repository the writer pushes to, and the checkout the site reads. Returns the
    checkout. The service's writer does this on its first round; the site and the
    walkthrough call it to have something to read before then."""
    checkout = Checkout(settings.data_repository_dir, remote_for(settings, None))
    checkout.create()
    return checkout.path


def rebuild_site(settings: Settings) -> None:
    """Bring the site the service serves (`/site`) up to date with the data repository."""
    rebuild(settings.data_repository_dir, settings.site_dir, site_config(settings))


def site_config(settings: Settings) -> SiteConfig:
    """The address and limits of this service, for the site it serves itself."""
    return SiteConfig(
        service_url=settings.public_url,
        run_token_lifetime=settings.run_token_lifetime,
        publish_window=settings.publish_window,
        upload_max_bytes=settings.upload_max_bytes,
        unpacked_max_bytes=settings.unpacked_max_bytes,
    )


def writer_for(
    settings: Settings, database: Database, tokens: TokenProvider | None = None
) -> Writer:
    """The writer the settings describe: their remote, the state directory's checkout."""
    checkout = Checkout(settings.data_repository_dir, remote_for(settings, tokens))
    return Writer(
        database,
        checkout,
        batch_size=settings.writer_batch_size,
        max_attempts=settings.writer_max_attempts,
        backoff=0.05 if settings.mode == "local" else 0.5,
    )


class BackgroundWriter:
    """Runs a writer in a thread until stopped: whenever this process enqueues a change,
    and every `poll_interval` seconds for changes enqueued elsewhere.

    `after_write`, if given, runs in the same thread after a round that committed
    something (the service rebuilds the site it serves), so it never sees the checkout
    in the middle of a batch.

    With `follows` (`HBENCH_SITE_FOLLOW=true`: a replica with a state directory of its
    own), a round whose writer lock another replica holds follows instead: it brings this
    process's checkout to the data repository's head and, when the head moved, runs
    `after_write`, so every replica serves the site of the latest commit whoever wrote
    it. With `writes` off too (`HBENCH_WRITER_ENABLED=false`: a replica beside a writer of
    its own) every round follows, the first one at start, so a replica that restarts
    serves the current site at once. A checkout is only ever synced by its own process:
    several workers of one service share one state directory, so there the service's
    supervisor runs the writer for them all (`hbench-app serve`).
    """

    def __init__(
        self,
        writer: Writer,
        *,
        poll_interval: float,
        after_write: Callable[[], object] | None = None,
        writes: bool = True,
        follows: bool = False,
    ) -> None:
        self.writer = writer
        self.poll_interval = poll_interval
        self.after_write = after_write
        self.writes = writes
        self.follows = follows
        self._followed: str | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hbench-datarepo-writer")

    def start(self) -> None:
        DOORBELL.subscribe(self._wake)
        self._thread.start()

    def stop(self) -> None:
        """Finish the batch in hand and stop."""
        self._stopping.set()
        self._wake.set()
        DOORBELL.unsubscribe(self._wake)
        self._thread.join(STOP_TIMEOUT_SECONDS)

    def _run(self) -> None:
        failures = 0
        built = False
        while not self._stopping.is_set():
            self._wake.clear()
            # The first round that reaches the data repository builds the site even with
            # nothing to commit, so a new service serves its registry and empty boards.
            drained = self._drain(rebuild=not built)
            built = built or drained
            failures = 0 if drained else failures + 1
            backoff = self.poll_interval * 2 ** min(failures, 10)
            delay = min(backoff, max(self.poll_interval, MAX_RETRY_SECONDS))
            self._wake.wait(delay)

    def _drain(self, *, rebuild: bool = False) -> bool:
        """One round; False when it failed (the next round waits longer). `rebuild` runs
        `after_write` even when the round committed nothing."""
        try:
            if not self.writes:
                self._follow()
                return True
            with writer_lock(self.writer.database, wait=0):
                report = self.writer.drain(self._stopping)
            self._followed = None  # this process wrote: the next follow rebuilds if moved
            if (report.commits or rebuild) and self.after_write is not None:
                self.after_write()
        except HbenchError as error:
            if error.code == "datarepo-writer-busy":  # another replica's turn
                return self._follow_quietly() if self.follows else True
            log.warning("data-repo writer: %s", error.detail)
            return False
        except Exception:
            log.exception("data-repo writer failed; it tries again on its next round")
            return False
        return True

    def _follow(self) -> None:
        """Bring the checkout to the data repository's head; rebuild the site if it moved."""
        checkout = self.writer.checkout
        checkout.ensure()
        head = checkout.sync()
        if head != self._followed:
            if self.after_write is not None:
                self.after_write()
            self._followed = head

    def _follow_quietly(self) -> bool:
        try:
            self._follow()
        except HbenchError as error:
            log.warning("data-repo follower: %s", error.detail)
            return False
        return True


def start_background_writer(
    settings: Settings, database: Database, tokens: TokenProvider | None = None
) -> BackgroundWriter | None:
    """Start the service's writer, unless the settings turn it off or, in GitHub mode,
    there is no token provider to push with yet."""
    if not settings.writer_enabled and not settings.site_follow:
        return None
    if settings.mode == "github" and tokens is None:
        log.warning("data-repo writer not started: GitHub mode needs the App's installation tokens")
        return None
    writer = BackgroundWriter(
        writer_for(settings, database, tokens),
        poll_interval=settings.writer_poll_interval.total_seconds(),
        after_write=partial(rebuild_site, settings),
        writes=settings.writer_enabled,
        follows=settings.site_follow,
    )
    writer.start()
    return writer
