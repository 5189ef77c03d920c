"""Sharing work among forked processes: each child inherits what the parent parsed (the
site's data, millions of objects) instead of receiving it pickled, and sends back only
what it did."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import cast

_task: Callable[[list[str]], object] | None = None
"""What the forked children run: set before the pool forks, so each inherits it (and the
data it reads) instead of receiving it pickled."""


def can_fork() -> bool:
    """Forking is safe only in a process without other threads (the CLI, not the service)."""
    return threading.active_count() == 1


def fork_map[R](
    task: Callable[[list[str]], R],
    chunks: Sequence[list[str]],
    workers: int,
    meanwhile: Callable[[], R],
) -> tuple[R, list[R]]:
    """`meanwhile()` in this process while `workers` forked processes run `task` on each
    chunk; its result and theirs, in the chunks' order."""
    global _task  # noqa: PLW0603 - read by the forked children, see `_task`
    _task = task
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            pending = pool.map(_run, chunks)
            here = meanwhile()
            # Each is what `task` returned, sent back pickled.
            return here, [cast("R", each) for each in pending]
    finally:
        _task = None


def _run(names: list[str]) -> object:
    if _task is None:
        raise RuntimeError("the pool's workers run what the parent set before forking")
    return _task(names)
