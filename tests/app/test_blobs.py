"""The blob stores' contract, held by both: the local folder and the S3-compatible bucket
(moto's server, on loopback). Whole blobs or none, safe keys, listing by prefix, and what a
writer that died leaves behind."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from app.bench.retention import Policy
from app.blobs import (
    CHUNK_BYTES,
    BlobNotFoundError,
    BlobStore,
    InvalidBlobKeyError,
    LocalBlobStore,
    S3BlobStore,
    S3Config,
    location_of,
    open_blob_store,
    store_at,
    validate_key,
)
from app.db.session import Database
from app.publish.maintenance import run_maintenance
from app.settings import Settings, load_settings
from hbench.errors import HbenchError
from tests.s3_server import s3_config, s3_server

__all__ = ["s3_config", "s3_server"]

STORES = ["local", pytest.param("s3", marks=pytest.mark.s3)]


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    if request.param == "local":
        return LocalBlobStore(tmp_path / "blobs")
    config: S3Config = request.getfixturevalue("s3_config")
    return S3BlobStore(config)


def leftovers(store: BlobStore) -> list[str]:
    """What unfinished writes left: temporary files, or incomplete multipart uploads."""
    if isinstance(store, LocalBlobStore):
        return sorted(path.name for path in store.temp.iterdir())
    assert isinstance(store, S3BlobStore)
    uploads = store.client.list_multipart_uploads(Bucket=store.bucket).get("Uploads", [])
    return sorted(upload["Key"] for upload in uploads)


def part_size(store: BlobStore) -> int:
    return store.config.part_bytes if isinstance(store, S3BlobStore) else CHUNK_BYTES


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


class Trickle:
    """Answers every read with at most 1000 bytes, as a slow socket may."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)

    def read(self, size: int = -1, /) -> bytes:
        return self.data.read(min(size, 1000) if size > 0 else 1000)


def test_a_blob_is_stored_read_and_replaced(store: BlobStore) -> None:
    data = os.urandom(3 * CHUNK_BYTES + 17)
    assert store.put("jobs/j1/job.tar.gz", io.BytesIO(data)) == len(data)
    assert store.exists("jobs/j1/job.tar.gz")
    with store.open("jobs/j1/job.tar.gz") as blob:
        assert blob.read() == data

    store.put("jobs/j1/job.tar.gz", io.BytesIO(b"newer"))
    with store.open("jobs/j1/job.tar.gz") as blob:
        assert blob.read() == b"newer"


@pytest.mark.parametrize("extra", [0, 1, 4097])
def test_a_blob_of_several_parts_is_written_in_parts_and_read_in_chunks(
    store: BlobStore, extra: int
) -> None:
    part = part_size(store)
    data = os.urandom(2 * part + extra)
    assert store.put("jobs/big/job.tar.gz", io.BytesIO(data)) == len(data)
    with store.open("jobs/big/job.tar.gz") as blob:
        pieces = iter(lambda: blob.read(CHUNK_BYTES), b"")
        assert b"".join(pieces) == data
    assert leftovers(store) == []


@pytest.mark.s3
def test_an_s3_blob_is_streamed_a_part_at_a_time_from_short_reads(s3_config: S3Config) -> None:
    store = S3BlobStore(s3_config)
    data = os.urandom(s3_config.part_bytes + 12345)
    assert store.put("jobs/trickle/job.tar.gz", Trickle(data)) == len(data)
    with store.open("jobs/trickle/job.tar.gz") as blob:
        assert blob.read() == data
    answer = store.client.head_object(Bucket=store.bucket, Key="jobs/trickle/job.tar.gz")
    assert answer["ETag"].strip('"').endswith("-2")  # a multipart upload of two parts


def test_an_empty_blob_is_a_blob(store: BlobStore) -> None:
    assert store.put("empty", io.BytesIO(b"")) == 0
    assert store.exists("empty")
    with store.open("empty") as blob:
        assert blob.read() == b""


def test_a_failed_write_leaves_the_key_as_it_was(store: BlobStore) -> None:
    store.put("jobs/j1/job.tar.gz", io.BytesIO(b"the first upload"))
    with pytest.raises(ConnectionResetError):
        store.put("jobs/j1/job.tar.gz", FailingStream(before=2 * part_size(store) + 10))
    with pytest.raises(ConnectionResetError):
        store.put("jobs/j2/job.tar.gz", FailingStream(before=10))

    with store.open("jobs/j1/job.tar.gz") as blob:
        assert blob.read() == b"the first upload"
    assert not store.exists("jobs/j2/job.tar.gz")
    assert leftovers(store) == []


KILLED_WRITER = """
import json, sys
from pathlib import Path
from app.blobs import S3Config, store_at

class Endless:
    def read(self, size=-1, /):
        print("writing", flush=True)
        return b"x" * size

where = json.loads(sys.argv[1])
location = S3Config(**where) if isinstance(where, dict) else Path(where)
store_at(location).put("jobs/killed/job.tar.gz", Endless())
"""


def test_a_writer_killed_mid_blob_leaves_no_blob(store: BlobStore) -> None:
    location = location_of(store)
    where = dataclasses.asdict(location) if isinstance(location, S3Config) else str(location)
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, json.dumps(where)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert writer.stdout is not None
    for _ in range(3):  # three reads: two parts sent, well into the blob
        assert writer.stdout.readline() == "writing\n"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=10)

    again = store_at(location)  # as a restarted service opens it
    assert not again.exists("jobs/killed/job.tar.gz")
    assert list(again.list()) == []
    assert len(leftovers(again)) == 1  # out of readers' sight, until it is swept
    if isinstance(again, LocalBlobStore):
        # Young, it is kept: it may be a live writer's. (moto dates every multipart upload
        # in 2010, so the S3 store sweeps it at any age there.)
        assert again.sweep_temporary(older_than=3600) == 0
    assert again.sweep_temporary(older_than=-1) == 1
    assert leftovers(again) == []


def test_the_maintenance_round_sweeps_what_dead_writers_left(
    tmp_path: Path, database_url: str
) -> None:
    store = LocalBlobStore(tmp_path / "blobs")
    leftover, young = store.temp / "blob-dead", store.temp / "blob-writing"
    leftover.write_bytes(b"half")
    young.write_bytes(b"a live writer's")
    an_hour_ago = time.time() - 2 * 3600
    os.utime(leftover, (an_hour_ago, an_hour_ago))
    database = Database(database_url)
    try:
        policy = Policy(timedelta(days=30), timedelta(days=7))
        report = run_maintenance(database, store, now=datetime.now(UTC), policy=policy)
    finally:
        database.dispose()
    assert report.abandoned_writes == 1
    assert not leftover.exists() and young.exists()


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
def test_unsafe_keys_are_refused_everywhere(store: BlobStore, key: str) -> None:
    with pytest.raises(InvalidBlobKeyError):
        validate_key(key)
    with pytest.raises(InvalidBlobKeyError):
        store.put(key, io.BytesIO(b"x"))
    for method in (store.open, store.exists, store.delete):
        with pytest.raises(InvalidBlobKeyError):
            method(key)
    with pytest.raises(InvalidBlobKeyError):
        store.download_url(key, content_disposition="attachment", content_type="text/plain")
    assert list(store.list()) == []


def test_nothing_is_written_outside_the_root(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path / "blobs")
    with pytest.raises(InvalidBlobKeyError):
        store.put("../escaped", io.BytesIO(b"x"))
    assert not (tmp_path / "escaped").exists()


def test_blobs_are_listed_by_prefix_in_order(store: BlobStore) -> None:
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


def test_delete_says_whether_there_was_a_blob(store: BlobStore) -> None:
    store.put("jobs/a", io.BytesIO(b"."))
    assert store.delete("jobs/a") is True
    assert store.delete("jobs/a") is False
    assert not store.exists("jobs/a")
    with pytest.raises(BlobNotFoundError):
        store.open("jobs/a")
    store.put("jobs/b/c", io.BytesIO(b"."))
    with pytest.raises(BlobNotFoundError):
        store.open("jobs/b")  # a folder (a common prefix) is not a blob
    assert not store.exists("jobs/b")


DISPOSITION = "attachment; filename=\"demo.tar.gz\"; filename*=UTF-8''d%C3%A9mo.tar.gz"


def test_a_download_address_is_presigned_where_the_store_gives_one(store: BlobStore) -> None:
    data = os.urandom(1000)
    store.put("jobs/d/job.tar.gz", io.BytesIO(data))
    address = store.download_url(
        "jobs/d/job.tar.gz", content_disposition=DISPOSITION, content_type="application/gzip"
    )
    with pytest.raises(BlobNotFoundError):
        store.download_url(
            "jobs/missing", content_disposition=DISPOSITION, content_type="application/gzip"
        )
    if isinstance(store, LocalBlobStore):
        assert address is None  # the service streams a folder's blobs itself
        return
    assert address is not None and "X-Amz-Signature=" in address
    assert "X-Amz-Expires=60" in address  # S3Config.presign_seconds
    fetched = httpx.get(address)  # no credentials: the address is the permission
    assert fetched.status_code == 200
    assert fetched.content == data
    assert fetched.headers["content-disposition"] == DISPOSITION
    assert fetched.headers["content-type"] == "application/gzip"
    unsigned = httpx.get(address.split("?")[0])
    assert unsigned.status_code == 403


@pytest.mark.s3
def test_a_store_that_presigns_nothing_is_streamed(s3_config: S3Config) -> None:
    store = S3BlobStore(dataclasses.replace(s3_config, presign=False))
    store.put("jobs/d/job.tar.gz", io.BytesIO(b"."))
    address = store.download_url("jobs/d/job.tar.gz", content_disposition="x", content_type="x/y")
    assert address is None


@pytest.mark.s3
def test_the_settings_choose_the_store(tmp_path: Path, s3_config: S3Config) -> None:
    local = open_blob_store(Settings(state_dir=tmp_path))
    assert isinstance(local, LocalBlobStore) and local.root == (tmp_path / "blobs").absolute()
    s3 = open_blob_store(
        Settings(
            state_dir=tmp_path,
            blob_store="s3",
            s3_endpoint=s3_config.endpoint,
            s3_bucket=s3_config.bucket,
            s3_presign_lifetime="PT5M",  # read as the environment's text is
        )
    )
    assert isinstance(s3, S3BlobStore)
    assert s3.config == dataclasses.replace(s3_config, presign_seconds=300, part_bytes=8 << 20)
    s3.put("jobs/x", io.BytesIO(b"through the settings"))
    with S3BlobStore(s3_config).open("jobs/x") as blob:
        assert blob.read() == b"through the settings"


def test_the_s3_store_needs_a_bucket_and_a_plain_address() -> None:
    with pytest.raises(HbenchError) as refused:
        load_settings(blob_store="s3")
    assert refused.value.code == "settings-missing"
    assert "HBENCH_S3_BUCKET" in str(refused.value)
    for endpoint in ("ftp://store", "http://key:secret@store:9000", "http://store?x=1", "store"):
        with pytest.raises(HbenchError) as refused:
            load_settings(blob_store="s3", s3_bucket="jobs", s3_endpoint=endpoint)
        assert refused.value.code == "settings-invalid"
        assert "HBENCH_S3_ENDPOINT" in str(refused.value)
    with pytest.raises(HbenchError) as refused:
        load_settings(blob_store="s3", s3_bucket="Not_A_Bucket")
    assert refused.value.code == "settings-invalid"
    fine = load_settings(blob_store="s3", s3_bucket="jobs", s3_endpoint="http://minio:9000/")
    assert fine.s3_endpoint == "http://minio:9000"
