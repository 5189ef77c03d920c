"""Uploads in parts over real connections that drop: the served service keeps nothing of a
part cut off mid-body, and a client goes on from the session's next part. The done-when of
uploads in parts: a 300 MiB job uploads through `hbench jobs upload` and survives a
dropped connection (marked `slow`: CI runs it, and `make test` where HBENCH_TEST_SLOW=1;
the same path at 2.5 MiB runs always, below)."""

from __future__ import annotations

import hashlib
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import UploadSession
from app.registry import default_registry, get_registry
from app.settings import Settings
from hbench.action import upload as action_upload
from hbench.upload_parts import send_in_parts
from tests.hbench.cli.helpers import hbench
from tests.hbench.cli.service import serving
from tests.support.bigjob import pad_job
from tests.support.dropping_proxy import dropping_proxy

from ..conftest import TokenFactory, bearer
from .conftest import FakeClock, issue_run, job_rows, scratch_left
from .jobs import SealedJob, packed

MIB = 1024 * 1024
SESSIONS = "/api/bench/upload-sessions"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def part_blobs(settings: Settings) -> list[str]:
    folder = settings.blob_dir / "upload-parts"
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def cut_off_mid_part(url: str, path: str, headers: dict[str, str], data: bytes) -> None:
    """Send a part's headers and half its body on a raw connection, then close it."""
    host, port = url.removeprefix("http://").split(":")
    head = [f"PUT {path} HTTP/1.1", f"host: {host}:{port}", f"content-length: {len(data)}"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data[: len(data) // 2])


def test_a_part_cut_off_mid_body_is_not_kept_and_the_upload_resumes(
    app: FastAPI,
    *,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed: SealedJob,
    tmp_path: Path,
) -> None:
    job = sealed.copy_to(tmp_path)
    pad_job(job, 5 * MIB // 2)
    archive = packed(job)
    pieces = [archive[at : at + MIB] for at in range(0, len(archive), MIB)]
    auth = bearer(make_token("alice"))
    declared = {"total_bytes": len(archive), "sha256": sha(archive), "part_bytes": MIB}
    with serving(app) as url, httpx.Client(base_url=url, headers=auth, timeout=60) as client:
        session = client.post(SESSIONS, json=declared).json()["id"]

        def put(number: int) -> httpx.Response:
            headers = {"hbench-part-sha256": sha(pieces[number - 1])}
            return client.put(f"{SESSIONS}/{session}/parts/{number}",
                              content=pieces[number - 1], headers=headers)  # fmt: skip

        assert put(1).status_code == 200
        part_headers = {**auth, "hbench-part-sha256": sha(pieces[1])}
        cut_off_mid_part(url, f"{SESSIONS}/{session}/parts/2", part_headers, pieces[1])

        state = client.get(f"{SESSIONS}/{session}").json()
        assert (state["received"], state["next_part"]) == ([sha(pieces[0])], 2)
        assert len(part_blobs(settings)) == 1
        assert put(2).status_code == 200
        assert put(3).status_code == 200
        done = client.post(f"{SESSIONS}/{session}/complete")

    assert done.status_code == 201, done.text
    assert [str(row.id) for row in job_rows(db)] == [done.json()["id"]]
    assert part_blobs(settings) == [] and scratch_left(settings) == []


@pytest.fixture
def big_board(app: FastAPI) -> None:
    """The demo board allowing its issued runs' jobs 400 MiB as sent."""
    registry = default_registry()
    board = registry.boards["hbench-demo"].model_copy(update={"upload_max_bytes": 400 * MIB})
    registry = replace(registry, boards={**registry.boards, board.slug: board})
    app.dependency_overrides[get_registry] = lambda: registry


@contextmanager
def padded_job(sealed: SealedJob, folder: Path, settings: Settings, size: int) -> Iterator[Path]:
    """A copy of the sealed job padded to `size` bytes, removed afterwards with the blobs
    stored from it: hundreds of MiB in a shared /dev/shm go with the test, not with
    pytest's rotation of its temporary folders."""
    job = sealed.copy_to(folder)
    try:
        pad_job(job, size)
        yield job
    finally:
        shutil.rmtree(job, ignore_errors=True)
        shutil.rmtree(settings.blob_dir, ignore_errors=True)


@pytest.mark.slow
def test_a_300_mib_job_uploads_in_parts_through_the_client_across_a_dropped_connection(
    app: FastAPI,
    big_board: None,
    *,
    db: Session,
    settings: Settings,
    clock: FakeClock,
    sealed: SealedJob,
    tmp_path: Path,
) -> None:
    with padded_job(sealed, tmp_path, settings, 300 * MIB) as job:
        issued = issue_run(db, sealed.spec)
        with serving(app) as url, dropping_proxy(url, drop_after=100 * MIB) as (proxy, cut):
            sent = hbench(
                "jobs", "upload", str(job), "--url", f"{proxy}/api/bench/uploads",
                "-H", f"hpg-run-token: {issued.token}", cwd=tmp_path,
                env={"TMPDIR": str(tmp_path)},
            )  # fmt: skip

        assert sent.returncode == 0, sent.stdout + sent.stderr
        assert cut.dropped == 1  # the connection carrying part 2 was cut once
        (row,) = job_rows(db)
        assert row.issued_run_id == issued.run_id
        assert row.summary["upload"]["compressed_bytes"] > 300 * MIB
        assert f'"id": "{row.id}"' in sent.stdout
        assert part_blobs(settings) == [] and scratch_left(settings) == []


def test_the_actions_upload_step_sends_a_job_over_95_mib_in_parts(
    app: FastAPI,
    big_board: None,
    *,
    db: Session,
    settings: Settings,
    clock: FakeClock,
    sealed: SealedJob,
    tmp_path: Path,
) -> None:
    with padded_job(sealed, tmp_path, settings, 96 * MIB) as job:
        issued = issue_run(db, sealed.spec)
        with serving(app) as url:
            body = action_upload.send(
                job, f"{url}/api/bench/uploads", lambda: {"hpg-run-token": issued.token},
                tmp_path / "scratch",
            )  # fmt: skip

        (row,) = job_rows(db)
        assert body["id"] == str(row.id) and row.issued_run_id == issued.run_id
        assert row.summary["upload"]["compressed_bytes"] > 96 * MIB
        assert part_blobs(settings) == []


def padded_archive_file(sealed: SealedJob, folder: Path) -> Path:
    """The sealed real job with 2.5 MiB of recordings added, packed: three parts of 1 MiB."""
    job = sealed.copy_to(folder)
    pad_job(job, 5 * MIB // 2)
    archive = folder / "job.tgz"
    archive.write_bytes(packed(job))
    return archive


def test_the_client_resumes_after_a_dropped_connection(
    app: FastAPI,
    *,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed: SealedJob,
    tmp_path: Path,
) -> None:
    archive = padded_archive_file(sealed, tmp_path)
    sent: list[int] = []
    with serving(app) as url, dropping_proxy(url, drop_after=MIB + MIB // 2) as (proxy, cut):
        answer = send_in_parts(
            f"{proxy}/api/bench/uploads", archive, bearer(make_token("alice")),
            part_bytes=MIB, progress=sent.append, pause=0.05,
        )  # fmt: skip

    assert answer.status_code == 201, answer.body
    assert cut.dropped == 1
    # Part 2 was cut off and sent again: each part counted once, when it was taken.
    assert sent == [MIB, MIB, archive.stat().st_size - 2 * MIB]
    assert [str(row.id) for row in job_rows(db)] == [answer.body["id"]]
    assert part_blobs(settings) == []


class ClientStoppedError(Exception):
    """The client's process ending part way (killed, the machine asleep)."""


def test_the_same_upload_run_again_after_the_client_stopped_goes_on_from_its_parts(
    app: FastAPI,
    *,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed: SealedJob,
    tmp_path: Path,
) -> None:
    archive = padded_archive_file(sealed, tmp_path)
    alice = bearer(make_token("alice"))

    def stop_after_one_part(sent: int) -> None:
        raise ClientStoppedError(sent)

    sent: list[int] = []
    with serving(app) as url:
        endpoint = f"{url}/api/bench/uploads"
        with pytest.raises(ClientStoppedError):
            send_in_parts(endpoint, archive, alice, part_bytes=MIB, progress=stop_after_one_part)
        answer = send_in_parts(endpoint, archive, alice, part_bytes=MIB, progress=sent.append)

    assert answer.status_code == 201, answer.body
    # The held part counts at once; the two the service lacked were sent.
    assert sent == [MIB, MIB, archive.stat().st_size - 2 * MIB]
    db.rollback()
    assert db.scalar(select(func.count()).select_from(UploadSession)) == 1
    assert [str(row.id) for row in job_rows(db)] == [answer.body["id"]]
    assert part_blobs(settings) == []
