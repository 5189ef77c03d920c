"""The local blob store: whole blobs or none, safe keys, listing by prefix."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.blobs import (
    CHUNK_BYTES,
    BlobNotFoundError,
    BlobStore,
    InvalidBlobKeyError,
    LocalBlobStore,
    validate_key,
)


@pytest.fixture
def store(tmp_path: Path) -> LocalBlobStore:
    return LocalBlobStore(tmp_path / "blobs")


class FailingStream:
    """Gives some bytes, then fails as a broken upload would."""

    def __init__(self, before: int) -> None:
        self.left = before

    def read(self, size: int = -1, /) -> bytes:
        if self.left <= 0:
            raise ConnectionResetError("the client went away")
        chunk = b"x" * min(size, self.left)
        self.left -= len(chunk)
        return chunk


def test_a_blob_is_stored_read_and_replaced(store: LocalBlobStore) -> None:
    interface: BlobStore = store
    data = os.urandom(3 * CHUNK_BYTES + 17)
    assert interface.put("jobs/j1/job.tar.gz", io.BytesIO(data)) == len(data)
    assert interface.exists("jobs/j1/job.tar.gz")
    with interface.open("jobs/j1/job.tar.gz") as blob:
        assert blob.read() == data

    interface.put("jobs/j1/job.tar.gz", io.BytesIO(b"newer"))
    with interface.open("jobs/j1/job.tar.gz") as blob:
        assert blob.read() == b"newer"


def test_an_empty_blob_is_a_blob(store: LocalBlobStore) -> None:
    assert store.put("empty", io.BytesIO(b"")) == 0
    assert store.exists("empty")


def test_a_failed_write_leaves_the_key_as_it_was(store: LocalBlobStore) -> None:
    store.put("jobs/j1/job.tar.gz", io.BytesIO(b"the first upload"))
    with pytest.raises(ConnectionResetError):
        store.put("jobs/j1/job.tar.gz", FailingStream(before=2 * CHUNK_BYTES))
    with pytest.raises(ConnectionResetError):
        store.put("jobs/j2/job.tar.gz", FailingStream(before=10))

    with store.open("jobs/j1/job.tar.gz") as blob:
        assert blob.read() == b"the first upload"
    assert not store.exists("jobs/j2/job.tar.gz")
    assert list(store.temp.iterdir()) == []


KILLED_WRITER = """
import sys
from pathlib import Path
from app.blobs import LocalBlobStore

class Endless:
    def read(self, size=-1, /):
        print("writing", flush=True)
        return b"x" * size

LocalBlobStore(Path(sys.argv[1])).put("jobs/killed/job.tar.gz", Endless())
"""


def test_a_writer_killed_mid_blob_leaves_no_blob(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(root)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    for _ in range(3):  # three chunks written: well into the blob
        assert writer.stdout.readline() == "writing\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=10)

    store = LocalBlobStore(root)
    assert not store.exists("jobs/killed/job.tar.gz")
    assert list(store.list()) == []
    # The dead writer's temporary file is there, out of sight, until it is old enough to sweep.
    assert store.sweep_temporary(older_than=3600) == 0
    assert store.sweep_temporary(older_than=-1) == 1
    assert list(store.temp.iterdir()) == []


def test_old_temporary_files_are_swept_on_start(tmp_path: Path) -> None:
    root = tmp_path / "blobs"
    LocalBlobStore(root)
    leftover = root / ".tmp" / "blob-dead"
    leftover.write_bytes(b"half")
    an_hour_ago = time.time() - 2 * 3600
    os.utime(leftover, (an_hour_ago, an_hour_ago))
    LocalBlobStore(root)
    assert not leftover.exists()


@pytest.mark.parametrize(
    "key",
    [
        "",
        "/etc/passwd",
        "../outside",
        "jobs/../../outside",
        "jobs/./x",
        "jobs//x",
        "jobs/x/",
        ".tmp/blob-1",
        "jobs/.hidden",
        "jobs\\x",
        "jobs/x\x00y",
        "jobs/x y",
        "a" * 513,
    ],
)
def test_unsafe_keys_are_refused_everywhere(store: LocalBlobStore, key: str) -> None:
    with pytest.raises(InvalidBlobKeyError):
        validate_key(key)
    with pytest.raises(InvalidBlobKeyError):
        store.put(key, io.BytesIO(b"x"))
    for method in (store.open, store.exists, store.delete):
        with pytest.raises(InvalidBlobKeyError):
            method(key)


def test_nothing_is_written_outside_the_root(tmp_path: Path, store: LocalBlobStore) -> None:
    with pytest.raises(InvalidBlobKeyError):
        store.put("../escaped", io.BytesIO(b"x"))
    assert not (tmp_path / "escaped").exists()


def test_blobs_are_listed_by_prefix_in_order(store: LocalBlobStore) -> None:
    for key in ("jobs/b/job.tar.gz", "jobs/a/job.tar.gz", "jobs/a/files/x.txt", "other/y"):
        store.put(key, io.BytesIO(b"."))
    assert list(store.list()) == [
        "jobs/a/files/x.txt",
        "jobs/a/job.tar.gz",
        "jobs/b/job.tar.gz",
        "other/y",
    ]
    assert list(store.list("jobs/a/")) == ["jobs/a/files/x.txt", "jobs/a/job.tar.gz"]
    assert list(store.list("jobs/a/j")) == ["jobs/a/job.tar.gz"]
    assert list(store.list("jo")) == list(store.list("jobs/"))
    assert list(store.list("missing/")) == []
    with pytest.raises(InvalidBlobKeyError):
        list(store.list("../"))


def test_delete_says_whether_there_was_a_blob(store: LocalBlobStore) -> None:
    store.put("jobs/a", io.BytesIO(b"."))
    assert store.delete("jobs/a") is True
    assert store.delete("jobs/a") is False
    assert not store.exists("jobs/a")
    with pytest.raises(BlobNotFoundError):
        store.open("jobs/a")
    with pytest.raises(BlobNotFoundError):
        store.open("jobs")  # a folder is not a blob
