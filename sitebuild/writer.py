"""Writing the site's files: each appears whole, and a run's record is a hard link to the
data repository's file where the two folders share a file system (`docs/site.md`, "What
keeps a large build fast")."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

SPARE_SUFFIX = ".next"
"""Added to a file's name for the name its successor is written under."""

File = tuple[str, str | bytes, str | None]
"""A file to write: its path in the site, its text (or bytes), and the data repository's
file that holds the same bytes, if one does."""

_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL


class Writer:
    """Writes files under the output folder, creating each folder once.

    Every file appears whole: it is made under a spare name beside where it goes and
    renamed there, over the file it replaces if there is one (a hard link is whole from the
    start, and made the same way over an older file). A reader of the served site gets no
    page, the old page or the new one, never a page half written or a mix, and a hard link
    (a run's JSON linked from the data repository) is never written through, so the data
    repository's file can never change from the site's side.
    """

    def __init__(self, out: Path, data_repo: Path | None = None) -> None:
        self.out = str(out)
        self.data_repo = str(data_repo) if data_repo is not None else None
        self.made: set[str] = set()
        self.written = 0

    def write_all(self, files: Iterable[File]) -> list[str]:
        """Write or link each file; the paths, in order."""
        paths = []
        for path, text, source in files:
            if source is None or not self.link(path, source):
                self.write(path, text)
            paths.append(path)
        return paths

    def write(self, path: str, text: str | bytes) -> None:
        """Write `text` as the file at `path` in the site, under its spare name first."""
        # Plain strings and a set of made folders: this runs 25,000 times in a full build.
        target = self._target(path)
        data = text.encode() if isinstance(text, str) else text
        spare = f"{target}{SPARE_SUFFIX}"
        try:
            self.put(spare, data)
        except FileExistsError:
            self.put(_spare(target), data)
        os.rename(spare, target)  # noqa: PTH104 - plain strings, 25,000 times a build
        self.written += 1

    def put(self, target: str, data: bytes) -> None:
        """A new file at `target` holding `data`; FileExistsError if something is there."""
        # os.open and bytes: a third cheaper per file than a buffered text file.
        handle = os.open(target, _EXCLUSIVE, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(handle, view) :]
        finally:
            os.close(handle)

    def link(self, path: str, source: str) -> bool:
        """Link the data repository's `source` as `path`; False where links don't work
        (another file system, or none asked for): the caller writes the text instead."""
        if self.data_repo is None:
            return False
        target = self._target(path)
        origin = f"{self.data_repo}/{source}"
        try:
            try:
                os.link(origin, target)
            except FileExistsError:
                # Already that file (renaming a link over another link to the same file
                # would do nothing, and leave the spare name behind).
                if not Path(origin).samefile(target):
                    spare = _spare(target)
                    os.link(origin, spare)
                    Path(spare).replace(target)
        except OSError:
            # A new inode per file costs far more than a link, but it always works.
            self.data_repo = None
            return False
        self.written += 1
        return True

    def _target(self, path: str) -> str:
        target = f"{self.out}/{path}"
        folder = target.rpartition("/")[0]
        if folder not in self.made:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self.made.add(folder)
        return target

    def remove(self, paths: Iterable[str]) -> int:
        """Remove the files, and any successor a build that stopped left beside one."""
        removed = 0
        for path in paths:
            target = Path(self.out) / path
            if target.is_file():
                target.unlink()
                removed += 1
            Path(f"{target}{SPARE_SUFFIX}").unlink(missing_ok=True)
        return removed


def _spare(target: str) -> str:
    """The name beside `target` its successor is made under, cleared of what a build that
    stopped half-way may have left there."""
    spare = f"{target}{SPARE_SUFFIX}"
    Path(spare).unlink(missing_ok=True)
    return spare
