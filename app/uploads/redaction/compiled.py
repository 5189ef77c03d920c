"""Hyperscan databases compiled once per machine: kept in a cache folder, keyed by what
makes them, and read back in a fraction of a millisecond instead of compiled again.

Compiling every rule into one database takes about a second of CPU, and every process
that redacts used to pay it: each service start, each upload workers' fork server, each
replica. A database is kept as `hyperscan.dumpb` writes it, named by the SHA-256 of the
Hyperscan binding's version, the machine's architecture, the flags and the patterns, so
a changed rule set, flag or library compiles anew, and Hyperscan itself refuses a file
made for another version or CPU (it is then compiled again and the file replaced).

The folder is `$XDG_CACHE_HOME/hbench/hyperscan` (`~/.cache/hbench/hyperscan` when that
is unset), made readable by its owner only. A file is read only where it and its folder
belong to this process's user and no one else may write them: a database decides what is
redacted. Where the folder can't be made or written (a read-only home), each process
compiles its own, as before.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import os
import platform
import stat
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import hyperscan

from hbench.atomic import atomic_writer

log = logging.getLogger(__name__)

FOLDER_MODE = 0o700


def cache_folder() -> Path:
    """Where the compiled databases are kept."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hbench" / "hyperscan"


@cache
def _built_by() -> bytes:
    """The Hyperscan binding's version (it holds the library) and the CPU architecture,
    read once: an engine asks for a key per rule it hops with."""
    version = importlib.metadata.version("hyperscan")
    return b"%s\0%s" % (version.encode(), platform.machine().encode())


def cache_key(patterns: Sequence[bytes], flags: int) -> str:
    """What names one database: everything its compiled form depends on."""
    digest = hashlib.sha256()
    for part in (_built_by(), b"%d" % flags):
        digest.update(part + b"\0")
    for pattern in patterns:
        digest.update(b"%d:" % len(pattern) + pattern)
    return digest.hexdigest()


def compiled(
    patterns: Sequence[bytes], flags: int, folder: Path | None = None
) -> hyperscan.Database:
    """The block-mode database of `patterns` (ids are their indexes), each with `flags`:
    read from the cache folder where it is there and safe to trust, else compiled and
    kept there. A pattern Hyperscan can't compile raises `hyperscan.HyperscanError`."""
    folder = cache_folder() if folder is None else folder
    path = folder / f"{cache_key(patterns, flags)}.db"
    kept = _read(path)
    if kept is not None:
        try:
            return hyperscan.loadb(kept, hyperscan.HS_MODE_BLOCK)
        except hyperscan.HyperscanError as error:  # another version or CPU: compile anew
            log.info("compiling the redaction patterns again: %s could not be read (%s)",
                     path.name, error)  # fmt: skip
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    database.compile(
        expressions=list(patterns),
        ids=list(range(len(patterns))),
        elements=len(patterns),
        flags=[flags] * len(patterns),
    )
    _keep(path, database)
    return database


def _read(path: Path) -> bytes | None:
    """The file's bytes, where it and its folder are this user's own and only theirs to
    write; else None."""
    try:
        if not (_owned(path.parent, directory=True) and _owned(path, directory=False)):
            return None
        return path.read_bytes()
    except OSError:
        return None


def _owned(path: Path, *, directory: bool) -> bool:
    found = path.lstat()
    kind = stat.S_ISDIR(found.st_mode) if directory else stat.S_ISREG(found.st_mode)
    others_write = found.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return kind and found.st_uid == os.geteuid() and not others_write


def _keep(path: Path, database: hyperscan.Database) -> None:
    """Write the database for the next process; a folder that can't be written is no
    error, only a second compile next time."""
    try:
        path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
        if not _owned(path.parent, directory=True):
            return
        with atomic_writer(path) as out:
            out.write(hyperscan.dumpb(database))
    except OSError as error:
        log.info("the compiled redaction patterns are not kept: %s", error)
