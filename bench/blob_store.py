"""Benchmark: the S3 blob store on boto3 against one on obstore, both against the same
S3-compatible server in the same run, beside the local store (a folder) as baseline.

The server is moto's (`tools/moto_s3.py`), started on loopback for the run. Three figures
for each store, each the median of `--repeat` rounds:

- write: one blob of `--mib` MiB streamed from a reader in 1 MiB reads (as an upload's
  archive is), written in parts of `--part-mib` MiB (a multipart upload), in MiB/s;
- read: the same blob read back whole in 1 MiB reads, in MiB/s;
- small put: one 2 KiB blob written, in ms (the median of `--small` writes).

boto3 is measured through the service's own store (`app.blobs.S3BlobStore`); obstore
through a store of the same shape below, with obstore's own streaming multipart writer.
moto is a Python server, so against it both libraries mostly measure the server; the
ratios between them say how much a library adds on top.

    .venv/bin/python bench/blob_store.py
    .venv/bin/python bench/blob_store.py --mib 256 --repeat 5
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/ is not installed
from report import Row, emit, percentile

from app.blobs import CHUNK_BYTES, LocalBlobStore, Readable, S3BlobStore, S3Config, read_full
from tools.moto_s3 import TEST_CREDENTIALS, moto_s3

BUCKET = "hbench-bench"
SMALL_BYTES = 2048
MIB = 1024 * 1024


class Store(Protocol):
    def put(self, key: str, stream: Readable) -> int: ...
    def open(self, key: str) -> BinaryIO: ...


class ObstoreBlobStore:
    """The S3 store's put and open on obstore: a streaming multipart writer, whole
    objects read in chunks."""

    def __init__(self, endpoint: str, bucket: str, part_bytes: int) -> None:
        from obstore.store import S3Store  # noqa: PLC0415 - only this benchmark uses it

        self.part_bytes = part_bytes
        self.store = S3Store(
            bucket,
            endpoint=endpoint,
            region=TEST_CREDENTIALS["AWS_DEFAULT_REGION"],
            access_key_id=TEST_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            secret_access_key=TEST_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            virtual_hosted_style_request=False,
            client_options={"allow_http": True},
        )

    def put(self, key: str, stream: Readable) -> int:
        import obstore  # noqa: PLC0415 - as above

        first = read_full(stream, self.part_bytes)
        if len(first) < self.part_bytes:
            obstore.put(self.store, key, first, use_multipart=False)
            return len(first)
        size = 0
        with obstore.open_writer(self.store, key, buffer_size=self.part_bytes) as writer:
            part = first
            while part:
                writer.write(part)
                size += len(part)
                part = read_full(stream, self.part_bytes)
        return size

    def open(self, key: str) -> BinaryIO:
        import obstore  # noqa: PLC0415 - as above

        # One GET, its body streamed in chunks (obstore's `open_reader` asks a range per
        # buffer, many requests for one blob), made a file of as the boto3 store does.
        chunks = obstore.get(self.store, key).stream(min_chunk_size=CHUNK_BYTES)
        return io.BufferedReader(ChunkReader(iter(chunks)), CHUNK_BYTES)


class ChunkReader(io.RawIOBase):
    """An iterator of byte chunks as a raw stream."""

    def __init__(self, chunks: Iterator[Any]) -> None:
        self.chunks = chunks
        self.left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self.left:
            self.left = bytes(next(self.chunks, b""))
        size = min(len(buffer), len(self.left))
        buffer[:size] = self.left[:size]
        self.left = self.left[size:]
        return size


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def read_all(store: Store, key: str) -> int:
    size = 0
    with store.open(key) as blob:
        while chunk := blob.read(CHUNK_BYTES):
            size += len(chunk)
    return size


def measure(store: Store, data: bytes, repeat: int, small: int) -> dict[str, float]:
    """Median write and read MiB/s of `data`, and the median and p99 small-put ms."""
    mib = len(data) / MIB
    writes: list[float] = []
    reads: list[float] = []
    for round_ in range(repeat):
        key = f"bench/big-{round_}"
        writes.append(mib / timed(partial(store.put, key, io.BytesIO(data))))
        reads.append(mib / timed(partial(read_all, store, key)))
    payload = os.urandom(SMALL_BYTES)
    puts = [
        1000 * timed(partial(store.put, f"bench/small-{n}", io.BytesIO(payload)))
        for n in range(small)
    ]
    assert read_all(store, f"bench/big-{repeat - 1}") == len(data)
    return {
        "write": statistics.median(writes),
        "read": statistics.median(reads),
        "put": statistics.median(puts),
        "put_p99": percentile(puts, 0.99),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64, help="size of the large blob")
    parser.add_argument("--part-mib", type=int, default=8, help="multipart part size")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of write and read")
    parser.add_argument("--small", type=int, default=200, help="small puts timed")
    args = parser.parse_args(argv)
    os.environ.update(TEST_CREDENTIALS)
    data = os.urandom(args.mib * MIB)
    part = args.part_mib * MIB
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-blobs-") as scratch, moto_s3() as endpoint:
        on_boto3 = S3BlobStore(S3Config(bucket=BUCKET, endpoint=endpoint, part_bytes=part))
        on_boto3.client.create_bucket(Bucket=BUCKET)
        stores: dict[str, Store] = {
            "local": LocalBlobStore(Path(scratch) / "blobs"),
            "boto3": on_boto3,
            "obstore": ObstoreBlobStore(endpoint, BUCKET, part),
        }
        print(
            f"{args.mib} MiB blob in {args.part_mib} MiB parts, {args.repeat} rounds; "
            f"{args.small} puts of {SMALL_BYTES} bytes; S3 server: moto at {endpoint}"
        )
        for name, store in stores.items():
            figures[name] = measure(store, data, args.repeat, args.small)
            found = figures[name]
            print(
                f"{name}: write {found['write']:.0f} MiB/s, read {found['read']:.0f} MiB/s, "
                f"small put {found['put']:.2f} ms (p99 {found['put_p99']:.2f} ms)"
            )
    rows: list[Row] = []
    figure = {"write": "MiB/s", "read": "MiB/s", "put": "ms", "put_p99": "ms"}
    label = {"write": "write", "read": "read", "put": "small put", "put_p99": "small put p99"}
    for name in ("boto3", "obstore"):
        for what, unit in figure.items():
            rows.append(
                Row(
                    "blob_store",
                    f"{name} {label[what]}",
                    figures[name][what],
                    unit,
                    f"local {label[what]}",
                    figures["local"][what],
                )
            )
    for what, unit in figure.items():
        rows.append(
            Row(
                "blob_store",
                f"obstore {label[what]}",
                figures["obstore"][what],
                unit,
                f"boto3 {label[what]}",
                figures["boto3"][what],
            )
        )
    boto, obs = figures["boto3"], figures["obstore"]
    print(
        f"obstore / boto3: write {obs['write'] / boto['write']:.2f}x, read "
        f"{obs['read'] / boto['read']:.2f}x, small put time {obs['put'] / boto['put']:.2f}x"
    )
    emit(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
