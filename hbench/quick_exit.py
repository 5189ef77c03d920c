"""Leaving without the interpreter's last garbage collections.

A Python process that exits tears its modules down and collects its cyclic garbage as it
goes: for the libraries the commands import (FastAPI, SQLAlchemy, pydantic, Harbor) that
is 40 ms of CPU for `hbench jobs upload` and over half a second for `hbench-app`, spent on
memory the system takes back at once anyway. `gc.freeze()` as an exit handler moves
every object out of the collector's sight: objects still go when their last reference
does, and only garbage in cycles is left to the system. Every exit handler still runs:
those registered after it (the upload workers' shutdown) before the freeze, those the
standard library registered first (log flushing, weak-reference finalizers such as
temporary folders', multiprocessing's children) after it, and none of them needs the
collector.
"""

from __future__ import annotations

import atexit
import gc

_registered = False


def skip_last_collections() -> None:
    """Freeze the collector once every exit handler registered after this one has run.

    Call it first thing in a command's module: handlers run last-registered first, so
    every one registered later runs before the freeze."""
    global _registered  # noqa: PLW0603 - once per process
    if not _registered:
        atexit.register(gc.freeze)
        _registered = True
