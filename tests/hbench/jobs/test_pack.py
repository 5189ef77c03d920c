"""Packing real Harbor jobs: the same bytes every time, only folders and regular files, streamed."""

from __future__ import annotations

import hashlib
import io
import os
import socket
import tarfile
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hbench.errors import HbenchError
from hbench.jobs.pack import PackResult, pack, pack_to_path
from hbench.jobs.sealing import seal
from hbench.jobs.verification import verify
from hbench.limits import UNPACKED_MAX_BYTES, UPLOAD_MAX_BYTES
from tests.conftest import HarborJobFactory

harbor = pytest.mark.harbor


@pytest.fixture(scope="module")
def demo_job(harbor_job: HarborJobFactory) -> Path:
    return harbor_job("pack-demo", "-k", "2")


@pytest.fixture
def sealed(demo_job: Path, copy_job: Callable[[Path], Path]) -> Path:
    job = copy_job(demo_job)
    seal(job)
    return job


def packed(job: Path) -> tuple[bytes, PackResult]:
    out = io.BytesIO()
    result = pack(job, out)
    return out.getvalue(), result


def contents(folder: Path) -> dict[str, bytes | None]:
    """Every folder (as None) and file (as its bytes) below `folder`."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() if p.is_file() else None
        for p in folder.rglob("*")
    }


def walk_order(folder: Path, prefix: str) -> list[str]:
    """The order the archive must follow: depth-first, each folder's names sorted."""
    order = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        order.append(f"{prefix}/{path.name}")
        if path.is_dir():
            order += walk_order(path, f"{prefix}/{path.name}")
    return order


def recreate(source: Path, dest: Path) -> None:
    """Copy a tree writing its entries in reverse order, so listings come out differently."""
    entries = sorted(source.rglob("*"), reverse=True)
    for path in entries:
        target = dest / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())


@harbor
def test_packing_twice_gives_the_same_bytes(sealed: Path) -> None:
    first, result = packed(sealed)
    second, again = packed(sealed)
    assert first == second
    assert result == again
    assert result.size == len(first)
    assert result.sha256 == hashlib.sha256(first).hexdigest()
    files = [p for p in sealed.rglob("*") if p.is_file()]
    assert result.files == len(files)
    assert result.unpacked_size == sum(p.stat().st_size for p in files)
    assert not result.over_upload_cap and not result.over_unpacked_cap


@harbor
def test_times_owners_permissions_and_creation_order_do_not_change_the_bytes(
    sealed: Path, tmp_path: Path
) -> None:
    original, _ = packed(sealed)
    other = tmp_path / "elsewhere" / sealed.name
    recreate(sealed, other)
    for i, path in enumerate(sorted(other.rglob("*"))):
        os.utime(path, (1_000_000 + i, 2_000_000_000 - i))
        path.chmod(0o700 if path.is_dir() else 0o600 if i % 2 else 0o664)
        if os.geteuid() == 0:
            os.chown(path, 1234 + i, 5678)
    os.utime(other, (0, 123))
    assert packed(other)[0] == original


@harbor
def test_the_archive_holds_the_job_folder_with_fixed_headers(sealed: Path) -> None:
    script = sealed / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    data, _ = packed(sealed)
    # gzip header: no modification time (bytes 4-8) and no file name (FLG.FNAME, 0x08).
    assert data[:2] == b"\x1f\x8b"
    assert data[4:8] == b"\0\0\0\0"
    assert not data[3] & 0x08

    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
    name = sealed.name
    assert [m.name for m in members] == [name, *walk_order(sealed, name)]
    for member in members:
        assert member.isdir() or member.isfile(), member.name
        assert (member.mtime, member.uid, member.gid) == (0, 0, 0)
        assert (member.uname, member.gname) == ("", "")
        executable = member.isdir() or member.name == f"{name}/run.sh"
        assert member.mode == (0o755 if executable else 0o644), member.name


@harbor
def test_the_archive_extracts_to_the_same_job_which_still_verifies(
    sealed: Path, tmp_path: Path
) -> None:
    (sealed / "empty-folder").mkdir()
    data, _ = packed(sealed)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(tmp_path / "out", filter="data")
    extracted = tmp_path / "out" / sealed.name
    assert contents(extracted) == contents(sealed)
    assert verify(extracted) == []


@harbor
def test_links_and_special_files_are_refused_before_writing(sealed: Path, tmp_path: Path) -> None:
    (sealed / "to-result").symlink_to("result.json")
    (sealed / "linked").hardlink_to(sealed / "config.json")
    os.mkfifo(sealed / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sealed / "sock"))
        out = io.BytesIO()
        with pytest.raises(HbenchError) as raised:
            pack(sealed, out)
        with pytest.raises(HbenchError):
            pack_to_path(sealed, tmp_path / "job.tgz")
    problems = raised.value.problems
    assert {p.code for p in problems} == {"pack-unsafe-file"}
    assert sorted(p.path or "" for p in problems) == [
        "config.json", "linked", "pipe", "sock", "to-result",
    ]  # fmt: skip
    assert "hard link" in next(p.message for p in problems if p.path == "linked")
    assert out.getvalue() == b""
    assert list(tmp_path.iterdir()) == [tmp_path / "jobs"]


@harbor
def test_pack_to_path_writes_the_archive_whole(sealed: Path, tmp_path: Path) -> None:
    dest = tmp_path / "job.tgz"
    dest.write_bytes(b"an older archive")
    result = pack_to_path(sealed, dest)
    assert dest.read_bytes() == packed(sealed)[0]
    assert result.sha256 == hashlib.sha256(dest.read_bytes()).hexdigest()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.tgz", "jobs"]


@harbor
def test_pack_refuses_to_write_into_the_job(sealed: Path) -> None:
    before = contents(sealed)
    for dest in (sealed / "job.tgz", sealed / "trial" / ".." / "job.tgz"):
        with pytest.raises(HbenchError) as raised:
            pack_to_path(sealed, dest)
        assert raised.value.code == "pack-output-inside-job"
    assert contents(sealed) == before


def test_pack_needs_a_folder(tmp_path: Path) -> None:
    with pytest.raises(HbenchError) as raised:
        pack(tmp_path / "missing", io.BytesIO())
    assert raised.value.code == "job-not-found"


@pytest.mark.parametrize(
    ("size", "unpacked", "over_upload", "over_unpacked"),
    [
        (UPLOAD_MAX_BYTES, UNPACKED_MAX_BYTES, False, False),
        (UPLOAD_MAX_BYTES + 1, UNPACKED_MAX_BYTES + 1, True, True),
    ],
)
def test_the_caps_are_inclusive(
    size: int, unpacked: int, over_upload: bool, over_unpacked: bool
) -> None:
    result = PackResult(size=size, sha256="0" * 64, files=1, unpacked_size=unpacked)
    assert (result.over_upload_cap, result.over_unpacked_cap) == (over_upload, over_unpacked)
    assert UPLOAD_MAX_BYTES == 95 * 1024 * 1024
    assert UNPACKED_MAX_BYTES == 512 * 1024 * 1024


class Discard:
    """A sink that keeps nothing but a count, so only pack's own memory is measured."""

    def __init__(self) -> None:
        self.size = 0

    def write(self, data: bytes) -> int:
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        pass


def test_packing_streams_in_flat_memory(tmp_path: Path) -> None:
    job = tmp_path / "big-job"
    (job / "trial").mkdir(parents=True)
    block = os.urandom(1 << 20)
    with (job / "trial" / "recording.bin").open("wb") as out:
        for _ in range(48):
            out.write(block)
    sink = Discard()
    tracemalloc.start()
    try:
        result = pack(job, sink)  # type: ignore[arg-type]  # a write-only sink is enough
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.size == sink.size > 48 << 20
    assert peak < 4 << 20, f"pack held {peak >> 20} MiB for a 48 MiB job"


names = st.text(alphabet="aZé-_.~", min_size=1, max_size=5).filter(lambda s: s not in (".", ".."))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tree=st.dictionaries(
        st.lists(names, min_size=1, max_size=3).map("/".join), st.binary(max_size=40), min_size=1
    ),
    seed=st.integers(0, 2**16),
)
def test_random_trees_pack_the_same_wherever_and_however_made(
    tree: dict[str, bytes], seed: int
) -> None:
    files = {p: d for p, d in tree.items() if not any(q.startswith(f"{p}/") for q in tree)}
    with tempfile.TemporaryDirectory() as scratch:
        first, second = Path(scratch) / "a" / "job", Path(scratch) / "b" / "job"
        for relative in sorted(files):
            (first / relative).parent.mkdir(parents=True, exist_ok=True)
            (first / relative).write_bytes(files[relative])
        for i, relative in enumerate(sorted(files, reverse=True)):
            (second / relative).parent.mkdir(parents=True, exist_ok=True)
            (second / relative).write_bytes(files[relative])
            os.utime(second / relative, (seed + i, seed * i))
        assert packed(first)[0] == packed(second)[0]
        with tarfile.open(fileobj=io.BytesIO(packed(first)[0]), mode="r:gz") as tar:
            archived = {
                m.name.removeprefix("job/"): tar.extractfile(m).read()  # type: ignore[union-attr]
                for m in tar.getmembers()
                if m.isfile()
            }
        assert archived == files
