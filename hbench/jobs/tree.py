"""Walking a job folder: its folders and regular files in a fixed order, and anything else in it.

Sealing and packing both start here. A job folder may hold only folders and
regular files with UTF-8 names; links, pipes, sockets and devices are reported,
never followed, so a job can't carry or point at anything outside itself.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class Entry:
    """A folder or regular file below the job folder.

    A file's size, mode and link count are what `lstat` saw. A folder is not
    stat-ed: only its name is archived, so it reads as 0755 with one link.
    """

    path: str
    """The POSIX path relative to the job folder, such as `trial__abc/result.json`."""
    kind: Literal["dir", "file"]
    size: int
    mode: int
    nlink: int

    @property
    def executable(self) -> bool:
        return bool(self.mode & 0o111)


@dataclass(frozen=True)
class Unsafe:
    """Something below the job folder that is not a folder or a regular file."""

    path: str
    what: str
    """What it is, to finish a sentence: "is a symbolic link"."""


@dataclass(frozen=True)
class Scan:
    """A job folder's contents: entries depth-first with each folder's names sorted."""

    entries: list[Entry] = field(default_factory=list)
    unsafe: list[Unsafe] = field(default_factory=list)

    @property
    def files(self) -> list[Entry]:
        return [entry for entry in self.entries if entry.kind == "file"]


def scan(job_dir: Path) -> Scan:
    """List everything below `job_dir` without following links.

    Entries come depth-first with each folder's names sorted by code point (which is
    UTF-8 byte order), so a folder always precedes its contents and the order does
    not depend on the file system or the locale.
    """
    result = Scan()
    stack = _children(job_dir, "")
    while stack:
        rel, dirent = stack.pop()
        problem = _unsafe(rel, dirent)
        if problem is not None:
            result.unsafe.append(problem)
            continue
        if dirent.is_dir(follow_symlinks=False):
            # A folder's own mode and times are not archived, so it needs no stat call.
            result.entries.append(Entry(rel, "dir", 0, stat.S_IFDIR | 0o755, 1))
            stack.extend(_children(dirent, rel))
        else:
            st = dirent.stat(follow_symlinks=False)
            result.entries.append(Entry(rel, "file", st.st_size, st.st_mode, st.st_nlink))
    return result


def _children(folder: Path | os.DirEntry[str], rel: str) -> list[tuple[str, os.DirEntry[str]]]:
    """A folder's entries with their relative paths, in reverse order, ready to pop."""
    with os.scandir(folder) as it:
        children = sorted(it, key=lambda d: d.name, reverse=True)
    return [(f"{rel}/{d.name}" if rel else d.name, d) for d in children]


def _unsafe(rel: str, dirent: os.DirEntry[str]) -> Unsafe | None:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        # os.scandir hands back undecodable bytes as surrogates; a manifest, a tar
        # header and the service all need the name as UTF-8 text.
        shown = os.fsencode(rel).decode("utf-8", "backslashreplace")
        return Unsafe(shown, "has a name that is not valid UTF-8")
    if dirent.is_symlink():
        return Unsafe(rel, "is a symbolic link")
    if dirent.is_dir(follow_symlinks=False) or dirent.is_file(follow_symlinks=False):
        return None
    return Unsafe(rel, _special_kind(dirent.stat(follow_symlinks=False).st_mode))


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    if stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
        return "is a device"
    return "is not a regular file or folder"
