"""More fuzzing of uploads: bomb-shaped archives against the reader's caps, and hostile
bodies sent to the real upload endpoint, which must refuse each with a rule code and
store nothing (no row, no blob, no scratch folder left).

The reader's own fuzz test (`test_archive.py`) draws members one by one; the archives
here are built to a shape: a gzip bomb (a member of zeros far over the cap), a tar bomb
(more members than the cap), a tree deeper than the cap, a wide tree of folders, one
name under several Unicode spellings. Quick sample by default; the long run:

    HBENCH_FUZZ_EXAMPLES=10000 .venv/bin/pytest tests/app/uploads -k fuzz
"""

from __future__ import annotations

import os
import shutil
import unicodedata
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from app.db.models import Job
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from app.uploads.archive import ArchiveLimits, extract, scratch_folder
from hbench.codes import CODE_NAMES
from hbench.errors import HbenchError
from tests.app.conftest import LOCAL
from tests.app.uploads.tarbuild import end, gz, header, member, pax
from tests.app.uploads.test_archive import (
    ARCHIVE_CODES,
    assert_on_disk,
    chunks,
    folder,
    hostile_archive,
)

FUZZ_EXAMPLES = int(os.environ.get("HBENCH_FUZZ_EXAMPLES", "0"))
LIMITS = ArchiveLimits(
    max_files=20, max_folders=20, max_depth=8, max_unpacked_bytes=64_000, max_stream_bytes=256_000
)
SHAPES = {
    "gzip-bomb": {"upload-unpacked-too-large"},
    "declared-bomb": {"upload-unpacked-too-large"},
    # Many members are many headers too: the count cap, or the cap on what the stream
    # unpacks to, headers included, whichever is reached first.
    "tar-bomb": {"upload-too-many-files", "upload-unpacked-too-large"},
    "deep": {"upload-too-deep"},
    "wide": {"upload-too-many-files", "upload-unpacked-too-large"},
    "spellings": {"archive-duplicate-name"},
}
"""Each shape, undamaged, and the refusal it must get."""
SPELLINGS = [unicodedata.normalize(form, "résumé") for form in ("NFC", "NFD")]
"""One name, two spellings: the reader compares names in NFC."""


def compressed(*parts: bytes) -> bytes:
    """Gzip, part by part, so gigantic runs of zeros never sit in memory at once."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(compressor.compress(part) for part in parts) + compressor.flush()


@st.composite
def bomb(draw: st.DrawFn) -> tuple[str, bytes]:
    shape = draw(st.sampled_from(sorted(SHAPES)))
    start = folder("job/")
    if shape == "gzip-bomb":
        size = draw(st.integers(LIMITS.max_unpacked_bytes + 1, 4 * LIMITS.max_stream_bytes))
        zeros = header("job/zeros", size=size)
        body = compressed(start, zeros, *(bytes(65536) for _ in range(size // 65536)),
                          bytes(size % 65536 + (-size) % 512), end())  # fmt: skip
    elif shape == "declared-bomb":  # a header or PAX size far over the cap, few bytes after
        size = draw(st.integers(LIMITS.max_unpacked_bytes + 1, 2**40))
        how = draw(st.booleans())
        claim = (
            pax({"size": str(size)}) + header("job/big")
            if how
            else header("job/big", size=min(size, 8**11 - 1))  # the header's 11 octal digits
        )
        body = gz(start + claim + bytes(draw(st.integers(0, 4096))))
    elif shape == "tar-bomb":
        count = draw(st.integers(LIMITS.max_files + 1, 400))
        body = gz(start + b"".join(member(f"job/f{i}", b"x") for i in range(count)) + end())
    elif shape == "deep":
        depth = draw(st.integers(LIMITS.max_depth + 1, 200))
        path = "job/" + "/".join(["d"] * depth)  # past 100 bytes, so named by PAX
        body = gz(start + pax({"path": path}) + member("x", b"deep") + end())
    elif shape == "wide":
        count = draw(st.integers(LIMITS.max_folders + 1, 300))
        folders = b"".join(folder(f"job/d{i}/") for i in range(count))
        body = gz(start + folders + member("job/f", b"f") + end())
    else:
        names = draw(st.lists(st.sampled_from(SPELLINGS), min_size=2, max_size=4))
        body = gz(start + b"".join(member(f"job/{n}", b"s") for n in names) + end())
    return shape, body


@st.composite
def damaged(draw: st.DrawFn, body: bytes) -> tuple[bytes, str]:
    damage = draw(st.sampled_from(["none"] * 3 + ["cut", "flip", "trail"]))
    if damage == "cut":
        body = body[: draw(st.integers(0, len(body) - 1))]
    elif damage == "flip":
        index = draw(st.integers(0, len(body) - 1))
        body = body[:index] + bytes([body[index] ^ draw(st.integers(1, 255))]) + body[index + 1 :]
    elif damage == "trail":
        body += draw(st.binary(min_size=1, max_size=64))
    return body, damage


FUZZ = settings(
    max_examples=FUZZ_EXAMPLES or 100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@FUZZ
@given(shaped=bomb(), data=st.data(), chunk=st.sampled_from([1, 512, 65536]))
def test_fuzz_bombs_are_refused_by_their_cap_without_writing_past_it(
    tmp_path: Path, shaped: tuple[str, bytes], data: st.DataObject, chunk: int
) -> None:
    shape, clean = shaped
    body, damage = data.draw(damaged(clean))
    outside = tmp_path / "outside"
    sandbox = outside / "sandbox"
    sandbox.mkdir(parents=True, exist_ok=True)
    try:
        with pytest.raises(HbenchError) as refused, scratch_folder(sandbox) as scratch:
            result = extract(chunks(body, chunk), scratch, LIMITS)
            assert_on_disk(result, scratch)  # a damaged bomb that is no bomb any more
            event(f"{shape}: accepted after {damage}")
            raise HbenchError("archive-empty", "accepted")
        code = refused.value.code
        assert code in ARCHIVE_CODES, refused.value.detail
        if damage == "none":
            assert code in SHAPES[shape], (shape, refused.value.detail)
        event(f"{shape}/{damage}: {code}")
        # Nothing past the caps was ever on disk, and nothing at all outside the sandbox.
        assert [p.name for p in outside.rglob("*")] == ["sandbox"]
    finally:
        shutil.rmtree(outside)


# --- The upload endpoint --------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Settings]]:
    """The real app on SQLite, started once for all examples."""
    folder = tmp_path_factory.mktemp("fuzz-service")
    settings = Settings(state_dir=folder / "state", writer_enabled=False)
    with TestClient(create_app(settings), **LOCAL) as client:
        yield client, settings


def nothing_stored(settings: Settings) -> None:
    database = Database(settings.effective_database_url)
    try:
        with database.session() as session:
            assert session.scalar(select(func.count()).select_from(Job)) == 0
    finally:
        database.dispose()
    blobs = [p for p in (settings.blob_dir / "jobs").rglob("*") if p.is_file()]
    assert blobs == [] and list((settings.blob_dir / ".tmp").iterdir()) == []
    assert list(settings.upload_dir.iterdir()) == []


JOB_FILES = ["config.json", "result.json", "lock.json", "manifest.json", "job.log"]


@st.composite
def job_shaped(draw: st.DrawFn) -> bytes:
    """The files a job's checks read first, each absent, a folder, or some JSON."""
    members = [folder("job/")]
    for name in JOB_FILES:
        kind = draw(st.sampled_from(["file", "file", "folder", "absent"]))
        if kind == "folder":
            members.append(folder(f"job/{name}/"))
        elif kind == "file":
            value = draw(st.sampled_from(['{"id": "x"}', "{}", "[]", '{"harbor": {}}', "nul"]))
            members.append(member(f"job/{name}", value.encode()))
    return gz(b"".join(members) + end())


ENDPOINT_BODY = st.one_of(
    hostile_archive().map(lambda archive: archive[0]),
    job_shaped(),
    bomb().map(lambda shaped: shaped[1]),
    st.binary(max_size=2000),
)


@settings(
    max_examples=FUZZ_EXAMPLES // 10 or 60,  # each case is a whole HTTP request
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(body=ENDPOINT_BODY, chunked=st.booleans())
def test_fuzz_hostile_uploads_are_refused_with_a_code_and_nothing_is_stored(
    served: tuple[TestClient, Settings], body: bytes, chunked: bool
) -> None:
    client, settings_ = served
    content = chunks(body, 997) if chunked else body
    answer = client.post(
        "/api/bench/uploads", content=content, headers={"content-type": "application/gzip"}
    )
    assert 400 <= answer.status_code < 500, answer.text
    envelope = answer.json()
    assert envelope["code"] in CODE_NAMES and envelope["detail"].endswith(f"({envelope['code']})")
    assert {error["code"] for error in envelope["errors"]} <= CODE_NAMES
    event(envelope["code"])
    nothing_stored(settings_)


@pytest.mark.parametrize("name", JOB_FILES)
def test_a_folder_named_like_a_job_file_is_refused_not_a_crash(
    served: tuple[TestClient, Settings], name: str
) -> None:
    client, settings_ = served
    members = [member(f"job/{other}", b'{"id": "x"}') for other in JOB_FILES if other != name]
    body = gz(folder("job/") + b"".join(members) + folder(f"job/{name}/") + end())
    answer = client.post(
        "/api/bench/uploads", content=body, headers={"content-type": "application/gzip"}
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] in CODE_NAMES
    nothing_stored(settings_)
