"""`hbench jobs pack`: a deterministic `.tar.gz` of one job folder, the same bytes every time.

The archive holds `<job-name>/` and everything below it, in sorted order, with
every time, owner and group fixed and modes reduced to 0644 or 0755, so two packs
of the same files are byte-identical wherever and whenever they are made. Links
and special files are refused, never archived. The archive is streamed: memory
stays flat whatever the job's size.
"""

from __future__ import annotations

import gzip
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from hbench.atomic import atomic_writer
from hbench.digest import CHUNK_SIZE, HashingWriter
from hbench.errors import HbenchError, Problem
from hbench.jobs.tree import Entry, scan
from hbench.limits import UNPACKED_MAX_BYTES, UPLOAD_MAX_BYTES

GZIP_LEVEL = 6
"""gzip's own default: level 9 is several times slower for about 1% smaller jobs."""

DIR_MODE = 0o755
FILE_MODE = 0o644
EXECUTABLE_MODE = 0o755


@dataclass(frozen=True)
class PackResult:
    """What was packed: the archive's size and sha256, and the files it holds."""

    size: int
    """Bytes of the `.tar.gz`, as it would be sent."""
    sha256: str
    files: int
    unpacked_size: int
    """The sum of the files' sizes, which the service caps once unpacked."""

    @property
    def over_upload_cap(self) -> bool:
        return self.size > UPLOAD_MAX_BYTES

    @property
    def over_unpacked_cap(self) -> bool:
        return self.unpacked_size > UNPACKED_MAX_BYTES


def pack(job_dir: Path, out: BinaryIO, *, compresslevel: int = GZIP_LEVEL) -> PackResult:
    """Write a deterministic `.tar.gz` of `job_dir` to `out`, whose top entry is the folder's name.

    The folder is checked before a byte is written: any link or special file raises
    `pack-unsafe-file`, naming every one. The same files at the same `compresslevel` give
    the same bytes.
    """
    if not job_dir.is_dir():
        raise HbenchError("job-not-found", f"{job_dir} is not a folder")
    name = job_dir.resolve().name
    tree = scan(job_dir)
    problems = [_unsafe(u.path, u.what) for u in tree.unsafe]
    problems += [
        _unsafe(e.path, f"is a hard link ({e.nlink} names for one file)")
        for e in tree.files
        if e.nlink > 1
    ]
    if problems:
        raise HbenchError.from_problems(problems)
    sink = HashingWriter(out)
    # mtime=0 and no file name keep the gzip header free of when and where it was made.
    with (
        gzip.GzipFile(
            fileobj=sink, mode="wb", mtime=0, filename="", compresslevel=compresslevel
        ) as zipped,
        tarfile.TarFile(
            fileobj=zipped,
            mode="w",
            format=tarfile.PAX_FORMAT,
            encoding="utf-8",
            copybufsize=CHUNK_SIZE,
        ) as tar,
    ):
        tar.addfile(_header(name, tarfile.DIRTYPE, DIR_MODE))
        for entry in tree.entries:
            _add(tar, job_dir, name, entry)
    files = tree.files
    return PackResult(
        size=sink.size,
        sha256=sink.hexdigest(),
        files=len(files),
        unpacked_size=sum(e.size for e in files),
    )


def pack_to_path(job_dir: Path, dest: Path) -> PackResult:
    """Pack `job_dir` into the file `dest`, which appears only once it is complete."""
    if dest.resolve().is_relative_to(job_dir.resolve()):
        raise HbenchError(
            "pack-output-inside-job",
            f"{dest} is inside the job folder {job_dir}; write the archive outside it",
        )
    with atomic_writer(dest) as stream:
        return pack(job_dir, stream)


def _add(tar: tarfile.TarFile, job_dir: Path, name: str, entry: Entry) -> None:
    arcname = f"{name}/{entry.path}"
    if entry.kind == "dir":
        tar.addfile(_header(arcname, tarfile.DIRTYPE, DIR_MODE))
        return
    mode = EXECUTABLE_MODE if entry.executable else FILE_MODE
    # O_NOFOLLOW: a file swapped for a link since the scan fails here instead of
    # archiving whatever the link points at.
    fd = os.open(job_dir / entry.path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as stream:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise HbenchError.from_problems([_unsafe(entry.path, "is not a regular file")])
        tar.addfile(_header(arcname, tarfile.REGTYPE, mode, st.st_size), stream)


def _header(arcname: str, kind: bytes, mode: int, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(arcname)
    info.type = kind
    info.mode = mode
    info.size = size
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _unsafe(path: str, what: str) -> Problem:
    return Problem(
        "pack-unsafe-file",
        f"{path} {what}; an archive of a job may hold only folders and regular files",
        path,
    )
