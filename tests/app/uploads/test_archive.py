"""The upload archive reader: good archives from every tar unpack exactly; hostile ones are refused.

Every refusal is checked for its rule code, for leaving nothing outside the scratch
folder, and for the scratch folder being gone afterwards. The fuzz test at the end
runs a quick sample by default; `HBENCH_FUZZ_EXAMPLES=10000` runs the long one:

    HBENCH_FUZZ_EXAMPLES=10000 .venv/bin/pytest tests/app/uploads -k fuzz
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import random
import shutil
import subprocess
import tarfile
import threading
import unicodedata
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.uploads.archive import (
    DEFAULT_LIMITS,
    ArchiveLimits,
    ExtractedJob,
    FileDigest,
    extract,
    scratch_folder,
    spool,
    spool_async,
)
from hbench.codes import CODE_NAMES
from hbench.errors import HbenchError
from hbench.jobs.pack import pack
from hbench.jobs.sealing import seal
from hbench.jobs.verification import compare
from tests.app.uploads.tarbuild import (
    GNU_MAGIC,
    end,
    gnu_long_name,
    gz,
    header,
    member,
    padded,
    pax,
    tar,
)
from tests.conftest import HarborJobFactory

MIB = 1024 * 1024
ARCHIVE_CODES = {
    "upload-too-large", "upload-unpacked-too-large", "upload-too-many-files", "upload-too-deep",
    "upload-not-gzip", "upload-corrupt", "upload-truncated", "upload-trailing-data",
    "archive-malformed", "archive-unsafe-path", "archive-path-too-long", "archive-link",
    "archive-special-file", "archive-duplicate-name", "archive-several-jobs",
    "archive-outside-job", "archive-empty",
}  # fmt: skip
"""Every refusal the archive reader makes; nothing else may come out of it."""
FUZZ_EXAMPLES = int(os.environ.get("HBENCH_FUZZ_EXAMPLES", "0")) or 150


def test_every_archive_code_is_a_rule_code() -> None:
    assert ARCHIVE_CODES <= CODE_NAMES


def digest(data: bytes) -> FileDigest:
    return FileDigest(len(data), hashlib.sha256(data).hexdigest())


def chunks(data: bytes, size: int = 4096) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def folder(name: str) -> bytes:
    return member(name, typeflag=b"5")


def ok_job(*members: bytes) -> bytes:
    """A gzipped archive of the folder `job/` and the given members."""
    return gz(tar(folder("job/"), *members))


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """The only place an extraction may write: the scratch folder is made inside it."""
    path = tmp_path / "sandbox"
    path.mkdir()
    return path


def unpack(body: bytes, sandbox: Path, limits: ArchiveLimits = DEFAULT_LIMITS) -> ExtractedJob:
    """Extract, check the files on disk are exactly the result's, and remove the scratch."""
    with scratch_folder(sandbox) as scratch:
        result = extract(chunks(body), scratch, limits)
        assert_on_disk(result, scratch)
    assert list(sandbox.iterdir()) == []
    return result


def assert_on_disk(result: ExtractedJob, scratch: Path) -> None:
    assert result.root == scratch / result.job_name
    on_disk = {}
    for path in scratch.rglob("*"):
        assert not path.is_symlink()
        assert path.resolve().is_relative_to(scratch.resolve())
        if path.is_file():
            on_disk[path.relative_to(result.root).as_posix()] = digest(path.read_bytes())
            assert path.stat().st_mode & 0o777 == 0o600
        else:
            assert path.is_dir()
            assert path.stat().st_mode & 0o777 == 0o700
    assert on_disk == result.files


def refused(
    body: bytes, sandbox: Path, code: str, limits: ArchiveLimits = DEFAULT_LIMITS
) -> HbenchError:
    """Extract, expect the refusal `code`, and check the sandbox is left empty."""
    with pytest.raises(HbenchError) as caught, scratch_folder(sandbox) as scratch:
        extract(chunks(body), scratch, limits)
    assert caught.value.code == code, caught.value.detail
    assert caught.value.detail.endswith(f"({code})")
    assert list(sandbox.iterdir()) == []
    return caught.value


# --- Archives that must be accepted -------------------------------------------------


def test_a_job_unpacks_with_every_file_hashed(sandbox: Path) -> None:
    files = {
        "config.json": b'{"job_name": "job"}',
        "trial__a/result.json": b"{}",
        "trial__a/agent/trajectory.json": os.urandom(100_000),
        "trial__a/empty.txt": b"",
    }
    members = [folder("job/trial__a/"), folder("job/trial__a/agent/")]
    members += [member(f"job/{path}", data) for path, data in files.items()]
    result = unpack(ok_job(*members), sandbox)
    assert result.job_name == "job"
    assert result.files == {path: digest(data) for path, data in files.items()}
    assert result.unpacked_bytes == sum(len(d) for d in files.values())
    assert result.compressed_bytes == len(ok_job(*members))


def test_folders_are_made_for_files_without_their_own_entries(sandbox: Path) -> None:
    body = gz(tar(member("job/a/b/c.txt", b"deep")))
    assert unpack(body, sandbox).files == {"a/b/c.txt": digest(b"deep")}


def test_dot_slash_prefixes_and_doubled_slashes_are_normalised(sandbox: Path) -> None:
    body = gz(tar(folder("./"), folder("./job/"), member("./job//x/./y.txt", b"y")))
    assert unpack(body, sandbox).files == {"x/y.txt": digest(b"y")}


def test_a_regular_file_named_with_a_slash_is_an_old_style_folder(sandbox: Path) -> None:
    body = ok_job(member("job/old/", typeflag=b"\x00"), member("job/old/f", b"f"))
    assert unpack(body, sandbox).files == {"old/f": digest(b"f")}


def test_a_ustar_prefix_joins_a_long_name(sandbox: Path) -> None:
    body = ok_job(member("file.txt", b"p", prefix="job/" + "d" * 120))
    assert unpack(body, sandbox).files == {"d" * 120 + "/file.txt": digest(b"p")}


def test_a_pax_path_and_size_override_the_header(sandbox: Path) -> None:
    name = "job/" + "long-" * 30 + "/" + "path-" * 30 + "ü.txt"
    body = ok_job(
        pax({"path": name, "size": "5", "mtime": "1.5"}), header("x", size=0) + padded(b"12345")
    )
    assert unpack(body, sandbox).files == {name.removeprefix("job/"): digest(b"12345")}


def test_a_gnu_long_name_names_the_next_member(sandbox: Path) -> None:
    below = "n" * 200 + "/" + "m" * 100
    body = ok_job(gnu_long_name(f"job/{below}"), member("ignored", b"data", magic=GNU_MAGIC))
    assert unpack(body, sandbox).files == {below: digest(b"data")}


def test_harmless_pax_global_headers_are_allowed(sandbox: Path) -> None:
    body = gz(
        tar(pax({"comment": "made by hand"}, typeflag=b"g"), folder("job/"), member("job/f", b"f"))
    )
    assert unpack(body, sandbox).files == {"f": digest(b"f")}


def test_end_blocks_without_record_padding_are_enough(sandbox: Path) -> None:
    body = gz(tar(folder("job/"), member("job/f", b"f"), record=False))
    assert unpack(body, sandbox).files == {"f": digest(b"f")}


def test_case_variants_are_distinct_files(sandbox: Path) -> None:
    # Linux jobs may hold both (the kernel's xt_MARK.h and xt_mark.h); the service's
    # file system is case-sensitive.
    body = ok_job(member("job/README", b"1"), member("job/readme", b"2"))
    assert set(unpack(body, sandbox).files) == {"README", "readme"}


@pytest.mark.parametrize(
    "tar_format", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]
)
def test_pythons_tarfile_output_is_accepted(sandbox: Path, tar_format: int) -> None:
    files = {"a.txt": b"a", "d" * 90 + "/" + "e" * 90 + ".log": b"long", "ü/ñ.txt": "é".encode()}
    if tar_format == tarfile.USTAR_FORMAT:
        files.pop("ü/ñ.txt")  # ustar can't hold non-ASCII names
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", format=tar_format) as archive:
        archive.addfile(tarinfo("job", tarfile.DIRTYPE))
        for path, data in files.items():
            archive.addfile(tarinfo(f"job/{path}", tarfile.REGTYPE, len(data)), io.BytesIO(data))
    result = unpack(out.getvalue(), sandbox)
    assert result.files == {path: digest(data) for path, data in files.items()}


def tarinfo(name: str, kind: bytes, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info


@pytest.mark.parametrize("options", [[], ["--format=pax"], ["--format=gnu"], ["--format=ustar"]])
def test_gnu_tar_output_is_accepted(sandbox: Path, tmp_path: Path, options: list[str]) -> None:
    job = tmp_path / "src" / "my-job"
    long_dir = job / ("x" * 80) / ("y" * 80)
    long_dir.mkdir(parents=True)
    (job / "config.json").write_text("{}")
    (long_dir / "log.txt").write_bytes(b"log\n" * 1000)
    body = subprocess.run(
        ["tar", "czf", "-", *options, "-C", str(tmp_path / "src"), "my-job"],
        check=True,
        capture_output=True,
    ).stdout
    result = unpack(body, sandbox)
    assert result.job_name == "my-job"
    assert set(result.files) == {"config.json", f"{'x' * 80}/{'y' * 80}/log.txt"}


def test_hbench_pack_output_is_accepted(sandbox: Path, tmp_path: Path) -> None:
    job = tmp_path / "packed-job"
    (job / "trial__1" / "agent").mkdir(parents=True)
    (job / "config.json").write_text("{}")
    (job / "trial__1" / "agent" / "log.txt").write_bytes(os.urandom(300_000))
    out = io.BytesIO()
    pack(job, out)
    result = unpack(out.getvalue(), sandbox)
    assert result.files == {
        "config.json": digest(b"{}"),
        "trial__1/agent/log.txt": digest((job / "trial__1/agent/log.txt").read_bytes()),
    }


@pytest.mark.harbor
def test_a_sealed_harbor_job_matches_its_manifest_once_unpacked(
    harbor_job: HarborJobFactory, copy_job: Callable[[Path], Path], sandbox: Path
) -> None:
    job = copy_job(harbor_job("upload-archive", "-k", "2"))
    manifest = seal(job)
    out = io.BytesIO()
    pack(job, out)
    result = unpack(out.getvalue(), sandbox)
    assert result.job_name == job.name
    assert compare(manifest, result.files) == []
    assert "manifest.json" in result.files


def test_async_bodies_are_spooled_in_a_worker_then_unpacked_whole(sandbox: Path) -> None:
    body = ok_job(member("job/f", b"async"))

    async def stream() -> AsyncIterator[bytes]:
        for chunk in chunks(body, 7):
            await asyncio.sleep(0)
            yield chunk

    async def run() -> ExtractedJob:
        with scratch_folder(sandbox) as scratch:
            sent = await spool_async(stream(), scratch)
            assert sent.body.read_bytes() == body
            assert sent.body.stat().st_mode & 0o777 == 0o600
            assert not sent.target.exists()
            unpacked = sent.unpack()
            assert unpacked.root.parent == sent.target
            assert sent.target.stat().st_mode & 0o777 == 0o700
            return unpacked

    assert asyncio.run(run()).files == {"f": digest(b"async")}
    assert list(sandbox.iterdir()) == []


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not gzip at all", "upload-not-gzip"),
        (b"", "upload-not-gzip"),
        (gz(random.Random(1).randbytes(200)), "upload-too-large"),  # noqa: S311 - test bytes
    ],
    ids=["not-gzip", "empty", "over-the-sent-cap"],
)
def test_spooling_refuses_what_the_first_bytes_and_the_sent_cap_show(
    sandbox: Path, body: bytes, code: str
) -> None:
    limits = ArchiveLimits(max_sent_bytes=40)
    read: list[int] = []

    def counted() -> Iterator[bytes]:
        for chunk in chunks(body, 30):
            read.append(len(chunk))
            yield chunk

    with scratch_folder(sandbox) as scratch, pytest.raises(HbenchError) as caught:
        spool(counted(), scratch, limits)
    assert caught.value.code == code
    assert len(read) <= 2  # no chunk read past the one that showed it


def test_a_spooled_body_is_unpacked_under_the_same_refusals(sandbox: Path) -> None:
    with scratch_folder(sandbox) as scratch:
        sent = spool(chunks(ok_job(member("job/../f", b"x"))), scratch, DEFAULT_LIMITS)
        with pytest.raises(HbenchError) as caught:
            sent.unpack()
    assert caught.value.code == "archive-unsafe-path"


def test_a_cancelled_upload_stops_its_worker_before_the_scratch_goes(sandbox: Path) -> None:
    started = threading.Event()

    async def stalled() -> AsyncIterator[bytes]:
        yield ok_job(member("job/f", b"x" * 10_000))[:100]
        started.set()
        await asyncio.Event().wait()  # a client that stops sending
        yield b""

    async def run() -> None:
        with scratch_folder(sandbox) as scratch:
            task = asyncio.create_task(spool_async(stalled(), scratch))
            while not started.is_set():
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    before = threading.active_count()
    asyncio.run(run())
    assert list(sandbox.iterdir()) == []
    assert threading.active_count() <= before


def test_the_scratch_folder_is_private_and_always_removed(tmp_path: Path) -> None:
    with scratch_folder(tmp_path) as scratch:
        assert scratch.stat().st_mode & 0o777 == 0o700
        (scratch / "a").mkdir()
    assert not scratch.exists()
    with pytest.raises(RuntimeError), scratch_folder(tmp_path) as scratch:
        (scratch / "file").write_text("partial")
        raise RuntimeError
    assert list(tmp_path.iterdir()) == []


def test_extract_wants_an_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "leftover").write_text("x")
    with pytest.raises(ValueError, match="empty"):
        extract([ok_job(member("job/f", b"f"))], tmp_path)


# --- Bodies that are not one complete gzip stream -----------------------------------


def test_too_much_sent_stops_reading_at_the_cap(sandbox: Path) -> None:
    body = ok_job(member("job/big", os.urandom(200_000)))
    read: list[int] = []

    def counted() -> Iterator[bytes]:
        for chunk in chunks(body, 10_000):
            read.append(len(chunk))
            yield chunk

    limits = ArchiveLimits(max_sent_bytes=50_000)
    with pytest.raises(HbenchError) as caught, scratch_folder(sandbox) as scratch:
        extract(counted(), scratch, limits)
    assert caught.value.code == "upload-too-large"
    assert sum(read) == 60_000  # the chunk that crossed the cap, and not one more
    assert list(sandbox.iterdir()) == []


@pytest.mark.parametrize(
    "body",
    [b"", b"PK\x03\x04 a zip file", b"\x1f", tar(folder("job/"), member("job/f", b"plain tar"))],
    ids=["empty", "zip", "one-byte", "uncompressed-tar"],
)
def test_a_body_that_is_not_gzip_is_refused(sandbox: Path, body: bytes) -> None:
    refused(body, sandbox, "upload-truncated" if body == b"\x1f" else "upload-not-gzip")


def test_a_damaged_gzip_stream_is_refused(sandbox: Path) -> None:
    body = bytearray(ok_job(member("job/f", os.urandom(5000))))
    body[len(body) // 2] ^= 0xFF
    refused(bytes(body), sandbox, "upload-corrupt")


def test_a_wrong_gzip_checksum_is_refused(sandbox: Path) -> None:
    body = bytearray(ok_job(member("job/f", b"data")))
    body[-8] ^= 0xFF  # the CRC-32 in gzip's trailer
    refused(bytes(body), sandbox, "upload-corrupt")


def test_a_truncated_gzip_stream_is_refused(sandbox: Path) -> None:
    body = ok_job(member("job/f", os.urandom(20_000)))
    for cut in (len(body) - 4, len(body) // 2, 11):
        refused(body[:cut], sandbox, "upload-truncated")


def test_a_truncated_tar_inside_a_complete_gzip_is_refused(sandbox: Path) -> None:
    whole = tar(folder("job/"), member("job/f", b"x" * 3000))
    for cut in (600, 512 + 512 + 100, len(whole) - 20 * 512, len(whole) - 19 * 512):
        refused(gz(whole[:cut]), sandbox, "upload-truncated")


def test_trailing_garbage_after_the_gzip_stream_is_refused(sandbox: Path) -> None:
    refused(ok_job(member("job/f", b"f")) + b"garbage", sandbox, "upload-trailing-data")


def test_a_second_gzip_stream_is_refused(sandbox: Path) -> None:
    body = ok_job(member("job/f", b"f")) + gz(tar(member("job/g", b"smuggled")))
    refused(body, sandbox, "upload-trailing-data")


def test_data_after_the_tar_end_inside_the_gzip_is_refused(sandbox: Path) -> None:
    body = gz(tar(folder("job/"), member("job/f", b"f")) + member("job/late", b"smuggled"))
    refused(body, sandbox, "upload-trailing-data")


def test_a_lone_zero_block_then_members_is_refused(sandbox: Path) -> None:
    body = gz(folder("job/") + bytes(512) + member("job/hidden", b"h") + end())
    refused(body, sandbox, "upload-trailing-data")


# --- Size caps ------------------------------------------------------------------------


def test_a_gzip_bomb_is_refused_at_its_header(sandbox: Path) -> None:
    # 600 MiB of zeros declared: refused on reading the header, before a byte is written.
    bomb = folder("job/") + header("job/zeros", size=600 * MIB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = compressor.compress(bomb) + compressor.compress(bytes(4 * MIB)) + compressor.flush()
    refused(body, sandbox, "upload-unpacked-too-large")


def test_files_over_the_unpacked_cap_are_refused(sandbox: Path) -> None:
    limits = ArchiveLimits(max_unpacked_bytes=100_000)
    body = ok_job(member("job/a", bytes(60_000)), member("job/b", bytes(60_000)))
    refused(body, sandbox, "upload-unpacked-too-large", limits)


def test_zeros_after_the_end_count_against_the_stream_cap(sandbox: Path) -> None:
    limits = ArchiveLimits(max_stream_bytes=1 * MIB)
    body = gz(tar(folder("job/"), member("job/f", b"f")) + bytes(2 * MIB))
    refused(body, sandbox, "upload-unpacked-too-large", limits)


def test_more_files_than_allowed_are_refused(sandbox: Path) -> None:
    limits = ArchiveLimits(max_files=10)
    body = ok_job(*(member(f"job/f{i}", b"x") for i in range(11)))
    refused(body, sandbox, "upload-too-many-files", limits)
    assert unpack(ok_job(*(member(f"job/f{i}", b"x") for i in range(10))), sandbox, limits)


def test_more_folders_than_allowed_are_refused(sandbox: Path) -> None:
    limits = ArchiveLimits(max_folders=5)
    body = ok_job(*(folder(f"job/d{i}/") for i in range(6)), member("job/f", b"f"))
    refused(body, sandbox, "upload-too-many-files", limits)


def test_paths_deeper_than_the_cap_are_refused(sandbox: Path) -> None:
    deep = "/".join(["d"] * DEFAULT_LIMITS.max_depth)
    assert unpack(ok_job(member(f"job/{deep}", b"ok")), sandbox).files == {deep: digest(b"ok")}
    refused(ok_job(member(f"job/{deep}/x", b"no")), sandbox, "upload-too-deep")


def test_paths_and_names_over_their_caps_are_refused(sandbox: Path) -> None:
    long_path = "/".join(["p" * 200] * 6)  # 1,205 bytes below the job folder
    refused(
        ok_job(pax({"path": f"job/{long_path}"}), member("x", b"")),
        sandbox,
        "archive-path-too-long",
    )
    refused(
        ok_job(pax({"path": "job/" + "n" * 256}), member("x", b"")),
        sandbox,
        "archive-path-too-long",
    )
    refused(
        ok_job(gnu_long_name("job/" + "g" * 5000), member("x", b"")),
        sandbox,
        "archive-path-too-long",
    )


def test_a_huge_pax_header_is_refused(sandbox: Path) -> None:
    body = ok_job(pax({"comment": "c" * 70_000}), member("job/f", b"f"))
    refused(body, sandbox, "archive-malformed")


# --- Unsafe names ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "job/../escaped",
        "job/a/../../escaped",
        "../escaped",
        "job/..",
        "/etc/passwd",
        "//etc/passwd",
        "job/back\\slash",
        "job/new\nline",
        "job/bell\x07",
        "job/c1\x85control",
        "job/evil\u202egnp.sh",
        "job/line\u2028separator",
    ],
)
def test_unsafe_paths_are_refused(sandbox: Path, tmp_path: Path, name: str) -> None:
    refused(ok_job(pax({"path": name}), member("x", b"evil")), sandbox, "archive-unsafe-path")
    assert not any(p.name == "escaped" for p in tmp_path.rglob("*"))


def test_an_absolute_path_outside_is_never_written(sandbox: Path, tmp_path: Path) -> None:
    target = tmp_path / "absolute-target"
    refused(
        ok_job(pax({"path": str(target)}), member("x", b"evil")), sandbox, "archive-unsafe-path"
    )
    assert not target.exists()


def test_traversal_hidden_in_a_gnu_long_name_is_refused(sandbox: Path, tmp_path: Path) -> None:
    name = "job/" + "a" * 120 + "/../../../escaped"
    refused(
        ok_job(gnu_long_name(name), member("harmless", b"evil")), sandbox, "archive-unsafe-path"
    )
    assert not any(p.name == "escaped" for p in tmp_path.rglob("*"))


def test_traversal_hidden_in_a_pax_path_is_refused(sandbox: Path) -> None:
    body = ok_job(pax({"path": "job/../../escaped"}), member("job/harmless", b"evil"))
    refused(body, sandbox, "archive-unsafe-path")


def test_a_name_that_is_not_utf8_is_refused(sandbox: Path) -> None:
    refused(ok_job(member(b"job/caf\xe9", b"latin-1")), sandbox, "archive-unsafe-path")


def test_a_nameless_file_is_refused(sandbox: Path) -> None:
    refused(gz(tar(member("./", b"data", typeflag=b"0"))), sandbox, "archive-malformed")
    refused(gz(tar(folder("job/"), member(".", b"data"))), sandbox, "archive-unsafe-path")


# --- Links and special files ------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "typeflag"), [("symlink", b"2"), ("hardlink", b"1")], ids=["symlink", "hardlink"]
)
def test_links_are_refused(sandbox: Path, kind: str, typeflag: bytes) -> None:
    body = ok_job(member("job/link", typeflag=typeflag, linkname="/etc/passwd"))
    error = refused(body, sandbox, "archive-link")
    assert kind.removesuffix("link") in error.detail


def test_a_symlink_then_a_file_through_it_is_refused_at_the_link(sandbox: Path) -> None:
    body = ok_job(member("job/out", typeflag=b"2", linkname="/etc"), member("job/out/x", b"x"))
    refused(body, sandbox, "archive-link")


def test_a_gnu_long_link_target_is_refused(sandbox: Path) -> None:
    body = ok_job(gnu_long_name("/" + "t" * 200, typeflag=b"K"), member("job/l", typeflag=b"2"))
    refused(body, sandbox, "archive-link")


def test_a_pax_linkpath_is_refused_even_on_a_regular_file(sandbox: Path) -> None:
    refused(
        ok_job(pax({"linkpath": "/etc/shadow"}), member("job/f", b"f")), sandbox, "archive-link"
    )


@pytest.mark.parametrize(
    "typeflag", [b"3", b"4", b"6", b"S", b"D", b"M", b"V", b"X", b"Z"], ids=repr
)
def test_devices_fifos_and_other_members_are_refused(sandbox: Path, typeflag: bytes) -> None:
    refused(ok_job(member("job/special", typeflag=typeflag)), sandbox, "archive-special-file")


def test_pax_sparse_files_are_refused(sandbox: Path) -> None:
    body = ok_job(pax({"GNU.sparse.major": "1", "GNU.sparse.name": "job/s"}), member("job/s", b"x"))
    refused(body, sandbox, "archive-special-file")


@pytest.mark.parametrize("options", [["--format=gnu"], ["--format=pax"]])
def test_gnu_tars_own_sparse_files_are_refused(
    sandbox: Path, tmp_path: Path, options: list[str]
) -> None:
    job = tmp_path / "src" / "job"
    job.mkdir(parents=True)
    with (job / "sparse").open("wb") as out:
        out.seek(4 * MIB)
        out.write(b"end")
    body = subprocess.run(
        ["tar", "czf", "-", "--sparse", *options, "-C", str(tmp_path / "src"), "job"],
        check=True,
        capture_output=True,
    ).stdout
    refused(body, sandbox, "archive-special-file")


# --- Duplicates, several jobs, files outside the job ------------------------------------


def test_a_file_twice_is_refused(sandbox: Path) -> None:
    body = ok_job(member("job/f", b"first"), member("job/f", b"second"))
    refused(body, sandbox, "archive-duplicate-name")


def test_a_file_twice_under_two_spellings_is_refused(sandbox: Path) -> None:
    body = ok_job(member("job/a/f", b"first"), member("job/a//./f", b"second"))
    refused(body, sandbox, "archive-duplicate-name")


def test_unicode_normalisation_duplicates_are_refused(sandbox: Path) -> None:
    composed = unicodedata.normalize("NFC", "résumé.txt")
    decomposed = unicodedata.normalize("NFD", "résumé.txt")
    assert composed != decomposed
    body = ok_job(
        pax({"path": f"job/{composed}"}),
        member("x", b"1"),
        pax({"path": f"job/{decomposed}"}),
        member("y", b"2"),
    )
    refused(body, sandbox, "archive-duplicate-name")


def test_a_compatibility_character_and_its_ascii_twin_are_refused(sandbox: Path) -> None:
    body = ok_job(member("job/K", b"ascii"), pax({"path": "job/\u212a"}), member("x", b"kelvin"))
    refused(body, sandbox, "archive-duplicate-name")


def test_a_name_that_is_both_file_and_folder_is_refused(sandbox: Path) -> None:
    refused(
        ok_job(member("job/x", b"file"), member("job/x/y", b"under")),
        sandbox,
        "archive-duplicate-name",
    )
    refused(ok_job(member("job/x", b"file"), folder("job/x/")), sandbox, "archive-duplicate-name")
    refused(
        ok_job(member("job/x/y", b"under"), member("job/x", b"file")),
        sandbox,
        "archive-duplicate-name",
    )


def test_a_folder_listed_twice_is_refused(sandbox: Path) -> None:
    refused(ok_job(folder("job/d/"), folder("job/d/")), sandbox, "archive-duplicate-name")


def test_two_job_folders_are_refused(sandbox: Path) -> None:
    body = gz(tar(folder("one/"), member("one/f", b"1"), folder("two/"), member("two/f", b"2")))
    refused(body, sandbox, "archive-several-jobs")


def test_files_at_the_top_of_the_archive_are_refused(sandbox: Path) -> None:
    refused(gz(tar(member("config.json", b"{}"))), sandbox, "archive-outside-job")
    body = gz(tar(folder("./"), member("./config.json", b"{}"), member("./result.json", b"{}")))
    refused(body, sandbox, "archive-outside-job")
    refused(
        ok_job(member("job/f", b"f"), member("stray.txt", b"s")), sandbox, "archive-outside-job"
    )


@pytest.mark.parametrize(
    "body",
    [gz(end()), gz(tar(folder("job/"))), gz(tar(folder("job/"), folder("job/d/"))), gz(b"")],
    ids=["nothing", "job-folder-only", "folders-only", "empty-tar-stream"],
)
def test_an_archive_without_files_is_refused(sandbox: Path, body: bytes) -> None:
    refused(body, sandbox, "archive-empty")


# --- Malformed tar ----------------------------------------------------------------------


def test_a_bad_header_checksum_is_refused(sandbox: Path) -> None:
    body = gz(folder("job/") + header("job/f", size=1, checksum_delta=1) + padded(b"f") + end())
    refused(body, sandbox, "archive-malformed")


def test_a_header_without_ustar_magic_is_refused(sandbox: Path) -> None:
    refused(gz(tar(member("job/f", b"f", magic=bytes(8)))), sandbox, "archive-malformed")


def test_random_bytes_in_gzip_are_not_a_tar(sandbox: Path) -> None:
    refused(gz(os.urandom(4096)), sandbox, "archive-malformed")


def test_a_folder_with_data_is_refused(sandbox: Path) -> None:
    refused(ok_job(member("job/d", b"data", typeflag=b"5")), sandbox, "archive-malformed")


@pytest.mark.parametrize(
    "records",
    [b"5 a=b", b"99 path=x\n", b"x path=x\n", b"9 nokey\n", b"6 =b\n"],
    ids=["no-newline", "length-too-long", "no-length", "no-equals", "empty-key"],
)
def test_malformed_pax_records_are_refused(sandbox: Path, records: bytes) -> None:
    body = ok_job(member("././@PaxHeader", records, typeflag=b"x"), member("job/f", b"f"))
    refused(body, sandbox, "archive-malformed")


def test_a_pax_size_that_is_not_a_number_is_refused(sandbox: Path) -> None:
    refused(ok_job(pax({"size": "12abc"}), member("job/f", b"f")), sandbox, "archive-malformed")


def test_a_header_size_that_is_not_octal_is_refused(sandbox: Path) -> None:
    block = bytearray(header("job/f", size=1))
    block[124:136] = b"0000000009x\x00"
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\x00 " % sum(block)
    refused(ok_job(bytes(block) + padded(b"f")), sandbox, "archive-malformed")


def test_a_pax_header_with_no_member_after_it_is_refused(sandbox: Path) -> None:
    refused(
        gz(tar(folder("job/"), member("job/f", b"f"), pax({"path": "job/g"}))),
        sandbox,
        "archive-malformed",
    )


def test_two_long_names_for_one_member_are_refused(sandbox: Path) -> None:
    body = ok_job(gnu_long_name("job/a" * 30), gnu_long_name("job/b" * 30), member("x", b"x"))
    refused(body, sandbox, "archive-malformed")
    body = ok_job(pax({"path": "job/p"}), gnu_long_name("job/" + "l" * 120), member("x", b"x"))
    refused(body, sandbox, "archive-malformed")


def test_a_global_header_that_renames_everything_is_refused(sandbox: Path) -> None:
    body = gz(tar(pax({"path": "job/all"}, typeflag=b"g"), folder("job/"), member("job/f", b"f")))
    refused(body, sandbox, "archive-malformed")


def test_the_test_tar_writer_agrees_with_tarfile() -> None:
    data = tar(
        folder("job/"),
        member("job/a", b"alpha"),
        pax({"path": "job/" + "p" * 150}),
        member("x", b"pax"),
        gnu_long_name("job/" + "g" * 150),
        member("y", b"gnu", magic=GNU_MAGIC),
    )
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        seen = {m.name: archive.extractfile(m).read() if m.isfile() else None for m in archive}  # type: ignore[union-attr]
    assert seen == {
        "job": None,
        "job/a": b"alpha",
        "job/" + "p" * 150: b"pax",
        "job/" + "g" * 150: b"gnu",
    }


# --- Fuzzing ----------------------------------------------------------------------------

SAFE_NAME = st.one_of(
    st.sampled_from(["a", "b", "c.txt", "agent", "result.json"]),  # small pool: duplicates happen
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789._-é", min_size=1, max_size=12),
).filter(lambda s: s not in (".", ".."))
HOSTILE_NAME = st.sampled_from(
    ["..", ".", "", "/", "a\\b", "x\ny", "\x00", "A", "a"]
    + [unicodedata.normalize(form, "résumé") for form in ("NFC", "NFD")]
)
COMPONENT = st.one_of(SAFE_NAME, HOSTILE_NAME, st.text(max_size=300))
PATH = st.one_of(
    st.lists(SAFE_NAME, min_size=1, max_size=4).map("/".join),
    st.lists(SAFE_NAME, min_size=1, max_size=4).map("/".join),
    st.lists(SAFE_NAME, min_size=1, max_size=4).map("/".join),
    st.lists(COMPONENT, min_size=1, max_size=6).map("/".join),
    st.integers(30, 34).map(lambda depth: "/".join(["d"] * depth)),  # around the depth cap
    st.integers(150, 260).map(lambda n: "l" * n),  # around the name cap
)
JOB_PATH = st.one_of(
    *[PATH.map(lambda p: f"job/{p}")] * 6,
    PATH.map(lambda p: f"./job/{p}"),
    PATH.map(lambda p: f"other/{p}"),
    PATH,
    st.just("/abs/x"),
)
DATA = st.binary(max_size=1500)


FileSpec = tuple[str, bytes]
"""A regular file as put in: its name as written in the archive, and its bytes."""


@st.composite
def file_member(draw: st.DrawFn) -> tuple[bytes, FileSpec]:
    """A regular file named in its header, by a PAX path, or by a GNU long name."""
    name, data = draw(JOB_PATH), draw(DATA)
    raw_name = name.encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(["header", "pax", "gnu"]))
    if how == "gnu":
        # A GNU long name ends at its first NUL, as GNU tar reads it.
        shown = name.split("\x00", 1)[0]
        return gnu_long_name(raw_name) + member("x", data, magic=GNU_MAGIC), (shown, data)
    if how == "header" and len(raw_name) <= 100 and b"\x00" not in raw_name:
        return member(raw_name, data), (name, data)
    return pax({"path": raw_name}) + member("x", data), (name, data)


SPECIAL_FLAGS = {"symlink": b"2", "hardlink": b"1", "device": b"3", "fifo": b"6", "sparse": b"S"}


@st.composite
def other_member(draw: st.DrawFn) -> bytes:
    """Anything else: a folder, a link, a special file, a global header, or damaged bytes."""
    kind = draw(st.sampled_from([*SPECIAL_FLAGS, "dir", "pax-link", "global", "bad-sum", "raw"]))
    data = draw(DATA)
    if kind in SPECIAL_FLAGS:
        return member("job/s", typeflag=SPECIAL_FLAGS[kind], linkname=b"../../x")
    if kind == "dir":
        return pax({"path": draw(JOB_PATH)}) + member("d", typeflag=b"5")
    if kind == "pax-link":
        return pax({"linkpath": "/etc"}) + member("job/l", data)
    if kind == "global":
        key = draw(st.sampled_from(["comment", "path", "size", "linkpath", "GNU.sparse.size"]))
        return pax({key: "1"}, typeflag=b"g")
    if kind == "bad-sum":
        return header("job/c", size=len(data), checksum_delta=draw(st.integers(1, 50))) + padded(
            data
        )
    return draw(st.binary(min_size=512, max_size=512))


HOSTILE_MEMBER = st.one_of(*[file_member()] * 6, other_member().map(lambda m: (m, None)))


@st.composite
def hostile_archive(draw: st.DrawFn) -> tuple[bytes, list[FileSpec | None]]:
    """Members, then maybe damage. A third are clean (files only, undamaged), so that
    acceptance and the count and size caps are reached as often as refusals."""
    clean = draw(st.integers(0, 2)) == 0
    member_strategy = file_member() if clean else HOSTILE_MEMBER
    members: list[tuple[bytes, FileSpec | None]] = draw(st.lists(member_strategy, max_size=12))
    stream = folder("job/") if draw(st.integers(0, 3)) else b""
    stream += b"".join(m for m, _ in members) + end(record=draw(st.booleans()))
    damages = ["none"] if clean else ["none"] * 4 + ["cut-tar", "cut-gzip", "flip", "trail"]
    damage = draw(st.sampled_from(damages))
    if damage == "cut-tar":
        stream = stream[: draw(st.integers(0, len(stream)))]
    body = gz(stream)
    if damage == "cut-gzip":
        body = body[: draw(st.integers(0, len(body)))]
    elif damage == "flip":
        index = draw(st.integers(0, len(body) - 1))
        body = body[:index] + bytes([body[index] ^ draw(st.integers(1, 255))]) + body[index + 1 :]
    elif damage == "trail":
        body += draw(st.binary(min_size=1, max_size=64))
    return body, [spec for _, spec in members]


def expected_files(specs: list[FileSpec | None]) -> dict[str, FileDigest]:
    """What an accepted archive must hold: each file member, its name normalised.

    A name ending with a slash is a folder, so it holds no file."""
    files = {}
    for spec in specs:
        if spec is not None and not spec[0].endswith("/"):
            parts = [p for p in spec[0].split("/") if p not in ("", ".")]
            files["/".join(parts[1:])] = digest(spec[1])
    return files


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(archive=hostile_archive(), chunk=st.sampled_from([1, 7, 512, 4096, 1 << 20]))
def test_fuzz_archives_are_refused_with_a_code_or_unpacked_exactly(
    tmp_path: Path, archive: tuple[bytes, list[FileSpec | None]], chunk: int
) -> None:
    body, specs = archive
    outside = tmp_path / "outside"
    sandbox = outside / "sandbox"
    sandbox.mkdir(parents=True, exist_ok=True)
    limits = ArchiveLimits(max_files=5, max_unpacked_bytes=4_000, max_stream_bytes=64_000)
    try:
        with scratch_folder(sandbox) as scratch:
            result = extract(chunks(body, chunk), scratch, limits)
            assert_on_disk(result, scratch)
            assert result.files == expected_files(specs)
            event("accepted")
    except HbenchError as error:
        assert error.code in ARCHIVE_CODES, error.detail
        event(error.code)
    assert [p.name for p in outside.rglob("*")] == ["sandbox"]
    shutil.rmtree(outside)
