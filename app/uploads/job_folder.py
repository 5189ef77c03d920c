"""The job folder an archive unpacks into: each member's path checked, its folders made and
its file created, every call relative to the folder's descriptor, each file's digest kept.

`app.uploads.tar_reader` parses the stream and hands each member here, before any of its
bytes are written: its path must lie inside one job folder, be plain, not too long or deep,
and name no other member in any spelling; the caps on files, folders and bytes hold.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from dataclasses import dataclass, field

from app.uploads.errors import (
    duplicate_name,
    path_too_long,
    too_many,
    unpacked_too_large,
    unsafe_path,
)
from app.uploads.models import ArchiveLimits, FileDigest
from app.uploads.tar_format import Kind
from hbench.errors import HbenchError

_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_UNSAFE_CHARS = frozenset(
    [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]  # C0 and C1 controls, DEL
    + ["\\", "\u2028", "\u2029"]  # backslash; line and paragraph separators
    + [chr(c) for c in (0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))]
)
"""Characters no job file needs, that make a name misleading where it is shown: a
backslash is a separator on Windows, controls break lines and logs, and direction
marks can make `evil.sh` read as `hs.live` on the site."""


@dataclass
class OpenFile:
    """A member's file as it is written, its bytes hashed as they go."""

    fd: int
    path: str
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)
    size: int = 0

    def write(self, data: memoryview) -> None:
        self.digest.update(data)
        self.size += len(data)
        while data:
            data = data[os.write(self.fd, data) :]


class JobFolder:
    """The folder below the scratch folder that the archive's first member names."""

    def __init__(self, scratch_fd: int, limits: ArchiveLimits) -> None:
        self._scratch_fd = scratch_fd
        self._limits = limits
        self.job: str | None = None
        self._root_fd: int | None = None
        self.files: dict[str, FileDigest] = {}
        self._kinds: dict[str, Kind] = {"": Kind.DIR}  # every name made, by its kind
        self._explicit_dirs: set[str] = set()
        self._normal_forms: dict[str, str] = {}
        self._folders = 0
        self.unpacked = 0

    def close(self) -> None:
        """Close the folder's descriptor; the files stay for the caller to keep or remove."""
        if self._root_fd is not None:
            os.close(self._root_fd)
            self._root_fd = None

    def split(self, name: str) -> list[str]:
        """The member's path components, checked; `.` and empty components dropped."""
        if name.startswith("/"):
            raise unsafe_path(name, "is an absolute path")
        bad = _UNSAFE_CHARS.intersection(name)
        if bad:
            shown = ", ".join(f"U+{ord(c):04X}" for c in sorted(bad))
            raise unsafe_path(name, f"has a backslash, control or direction character ({shown})")
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise unsafe_path(name, "has a `..` component, which would climb out of the job folder")
        limits = self._limits
        if any(len(p.encode()) > limits.max_name_bytes for p in parts):
            raise path_too_long(f"{name!r} has a name over {limits.max_name_bytes} bytes")
        if len(parts) - 1 > limits.max_depth:
            raise HbenchError(
                "upload-too-deep",
                f"{name!r} is {len(parts) - 1} folders deep, over the cap of "
                f"{limits.max_depth}; a job folder is never this deep",
            )
        rel = "/".join(parts[1:])
        if len(rel.encode()) > limits.max_path_bytes:
            raise path_too_long(
                f"{name!r} is over {limits.max_path_bytes} bytes below the job folder"
            )
        return parts

    def _job_path(self, name: str, parts: list[str]) -> str:
        """The member's path below the job folder; the first member makes the folder."""
        if self._root_fd is None:
            self.job = parts[0]
            os.mkdir(parts[0], 0o700, dir_fd=self._scratch_fd)
            # Every later name is opened relative to this descriptor, with O_NOFOLLOW
            # on the last component; the archive can create no link to follow anyway.
            self._root_fd = os.open(parts[0], DIR_FLAGS, dir_fd=self._scratch_fd)
        elif parts[0] != self.job:
            raise HbenchError(
                "archive-several-jobs",
                f"the archive holds {parts[0]!r} beside the job folder {self.job!r}; "
                "upload one job per archive: `tar czf job.tgz -C jobs <job-name>`",
            )
        return "/".join(parts[1:])

    def on_folder(self, name: str, parts: list[str]) -> None:
        if not parts:  # "./": the folder the archive was made from
            return
        rel = self._job_path(name, parts)
        if rel in self._explicit_dirs or self._kinds.get(rel) is Kind.FILE:
            raise duplicate_name(name, "appears twice in the archive")
        self._explicit_dirs.add(rel)
        self._make_folders(name, rel, include_self=True)

    def open_file(self, name: str, parts: list[str], size: int) -> OpenFile:
        """The member's file, created empty once every check passed; `size` bytes to come."""
        if not parts:
            raise unsafe_path(name, "has no name")
        if len(parts) == 1:
            raise HbenchError(
                "archive-outside-job",
                f"{name} lies at the top of the archive, outside a job folder; pack the "
                "job's own folder: `tar czf job.tgz -C jobs <job-name>`",
            )
        rel = self._job_path(name, parts)
        if rel in self._kinds:
            raise duplicate_name(name, "appears twice in the archive")
        limits = self._limits
        if len(self.files) >= limits.max_files:
            raise too_many(f"more than {limits.max_files} files")
        if self.unpacked + size > limits.max_unpacked_bytes:
            raise unpacked_too_large(limits.max_unpacked_bytes, "in its files")
        self._make_folders(name, rel, include_self=False)
        self._claim(name, rel, Kind.FILE)
        try:
            fd = os.open(rel, _FILE_FLAGS, 0o600, dir_fd=self._root_fd)
        except FileExistsError:
            # Only a case- or normalisation-insensitive file system gets here: it sees
            # two of the archive's distinct names as one.
            raise duplicate_name(name, "names the same file as another member here") from None
        self.unpacked += size
        return OpenFile(fd=fd, path=rel)

    def _make_folders(self, name: str, rel: str, *, include_self: bool) -> None:
        parts = rel.split("/")
        stop = len(parts) if include_self else len(parts) - 1
        for i in range(1, stop + 1):
            folder = "/".join(parts[:i])
            kind = self._kinds.get(folder)
            if kind is Kind.DIR:
                continue
            if kind is Kind.FILE:
                raise duplicate_name(name, f"needs {folder!r} to be a folder, but it is a file")
            self._folders += 1
            if self._folders > self._limits.max_folders:
                raise too_many(f"more than {self._limits.max_folders} folders")
            self._claim(name, folder, Kind.DIR)
            try:
                os.mkdir(folder, 0o700, dir_fd=self._root_fd)
            except FileExistsError:
                raise duplicate_name(name, "names the same folder as another member here") from None

    def _claim(self, name: str, rel: str, kind: Kind) -> None:
        # Two spellings of one name in Unicode (é as one code point or as e + accent;
        # the Kelvin sign and K) look the same on every page that shows the job.
        normal = rel if rel.isascii() else unicodedata.normalize("NFC", rel)
        other = self._normal_forms.setdefault(normal, rel)
        if other != rel:
            raise duplicate_name(name, f"is {other!r} in another Unicode spelling")
        self._kinds[rel] = kind

    def close_file(self, file: OpenFile) -> None:
        os.close(file.fd)
        self.files[file.path] = FileDigest(file.size, file.digest.hexdigest())
