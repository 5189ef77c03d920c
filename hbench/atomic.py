"""Writing a file all at once or not at all: a temporary file beside it, then `os.replace`.

A reader (or a crash) never sees half a manifest or half an archive: the name
points at the old file until the new one is complete and on disk.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

FILE_MODE = 0o644
"""mkstemp creates files readable by their owner only; what we write is as readable
as the job folder it belongs to."""


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """Yield a binary stream; once the block ends without error, it becomes `path`.

    On any error the temporary file is removed and `path` is left as it was.
    """
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        tmp.chmod(FILE_MODE)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
