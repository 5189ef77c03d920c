"""sha256 of files, streams and canonical JSON, as the manifest and the service compute them."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import pytest

from hbench.digest import (
    CHUNK_SIZE,
    HashingWriter,
    canonical_digest,
    canonical_json,
    sha256_file,
    sha256_files,
    sha256_stream,
    spec_digest,
)


def test_canonical_json_is_the_documented_form() -> None:
    spec = {"model": "provider/modèle", "agents": [{"name": "oracle", "kwargs": {"b": 1, "a": 2}}]}
    expected = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(spec) == expected.encode("utf-8")
    assert b"mod\xc3\xa8le" in canonical_json(spec)
    assert (
        spec_digest(spec) == canonical_digest(spec) == hashlib.sha256(expected.encode()).hexdigest()
    )
    # Key order and whitespace of the source don't matter; values do.
    assert spec_digest(json.loads(json.dumps(spec, indent=4))) == spec_digest(spec)
    assert spec_digest({**spec, "model": "other"}) != spec_digest(spec)


SIZES = [0, 1, CHUNK_SIZE - 1, CHUNK_SIZE, CHUNK_SIZE + 1, 3 * CHUNK_SIZE + 17]


@pytest.mark.parametrize("size", SIZES)
def test_files_and_streams_hash_like_hashlib(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "file"
    path.write_bytes(data)
    expected = (size, hashlib.sha256(data).hexdigest())
    assert sha256_file(path) == expected
    assert sha256_stream(io.BytesIO(data)) == expected


def test_a_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"x")
    (tmp_path / "link").symlink_to("target")
    with pytest.raises(OSError):
        sha256_file(tmp_path / "link")
    with pytest.raises(OSError):
        sha256_file(tmp_path)


@pytest.mark.parametrize("workers", [1, 3])
def test_many_files_hash_on_a_pool_with_progress(tmp_path: Path, workers: int) -> None:
    blobs = {f"d{i % 7}/f{i}": os.urandom(i * 997 % (3 * CHUNK_SIZE)) for i in range(150)}
    for relative, data in blobs.items():
        (tmp_path / relative).parent.mkdir(exist_ok=True)
        (tmp_path / relative).write_bytes(data)
    progress: list[int] = []

    observed = sha256_files(
        tmp_path,
        [(p, len(d)) for p, d in sorted(blobs.items())],
        progress=progress.append,
        workers=workers,
    )

    assert observed == {p: (len(d), hashlib.sha256(d).hexdigest()) for p, d in blobs.items()}
    assert sum(progress) == sum(len(d) for d in blobs.values())
    assert len(progress) > 1


def test_hashing_writer_passes_bytes_on_and_digests_them() -> None:
    sink = io.BytesIO()
    writer = HashingWriter(sink)
    for part in (b"abc", bytearray(b"def"), memoryview(b"ghi")):
        writer.write(part)
    writer.flush()
    assert sink.getvalue() == b"abcdefghi"
    assert (writer.size, writer.hexdigest()) == (9, hashlib.sha256(b"abcdefghi").hexdigest())
