"""Uploads in parts (`/api/bench/upload-sessions`): a real job sent in parts is stored as
one upload; every refusal has its code and leaves nothing half-stored."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import replace
from datetime import timedelta

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.bench.caps import job_caps
from app.bench.parts import sweep_sessions
from app.bench.upload_sessions import claim_completion, release_completion
from app.bench.uploader import Uploader
from app.blobs.local import LocalBlobStore
from app.checks.evidence import IssuedSpec
from app.db.models import UploadSession
from app.db.session import Database
from app.registry import default_registry, get_registry
from app.settings import Settings
from tests.support.bigjob import pad_job

from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import FakeClock, assert_nothing_stored, issue_run, job_rows, run_token, upload
from .jobs import SealedJob, packed

MIB = 1024 * 1024
SESSIONS = "/api/bench/upload-sessions"


@pytest.fixture(scope="session")
def padded_archive(sealed: SealedJob, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The sealed real job with 2.5 MiB of recordings added: three parts of 1 MiB."""
    job = sealed.copy_to(tmp_path_factory.mktemp("padded"))
    pad_job(job, 5 * MIB // 2)
    return packed(job)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cut(archive: bytes, part_bytes: int = MIB) -> list[bytes]:
    return [archive[at : at + part_bytes] for at in range(0, len(archive), part_bytes)]


def open_session(
    client: TestClient, archive: bytes, part_bytes: int = MIB, **headers: str
) -> Response:
    body = {"total_bytes": len(archive), "sha256": sha(archive), "part_bytes": part_bytes}
    return client.post(SESSIONS, json=body, headers=headers)


def put_part(
    client: TestClient, session: str, number: int, data: bytes, digest: str | None = None,
    **headers: str,
) -> Response:  # fmt: skip
    sent = {"hbench-part-sha256": digest or sha(data), "content-type": "application/octet-stream"}
    return client.put(
        f"{SESSIONS}/{session}/parts/{number}", content=data, headers={**sent, **headers}
    )


def refused(answer: Response, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["code"] == code, answer.text


def part_blobs(settings: Settings) -> list[str]:
    folder = settings.blob_dir / "upload-parts"
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def sessions(db: Session) -> int:
    db.rollback()
    return db.scalar(select(func.count()).select_from(UploadSession)) or 0


def test_a_job_sent_in_parts_is_checked_and_stored_as_one_upload(
    client: TestClient, *, db: Session, settings: Settings, padded_archive: bytes
) -> None:
    pieces = cut(padded_archive)
    assert len(pieces) == 3
    opened = open_session(client, padded_archive)
    assert opened.status_code == 201, opened.text
    state = opened.json()
    assert (state["parts"], state["received"], state["next_part"]) == (3, [], 1)
    session = state["id"]

    for number, piece in enumerate(pieces, start=1):
        answer = put_part(client, session, number, piece)
        assert answer.status_code == 200, answer.text
    assert len(part_blobs(settings)) == 3
    # A part sent again with its own bytes (its answer was lost) changes nothing.
    again = put_part(client, session, 2, pieces[1])
    assert again.json()["received"] == [sha(p) for p in pieces]
    assert again.json()["next_part"] is None

    done = client.post(f"{SESSIONS}/{session}/complete")

    assert done.status_code == 201, done.text
    single = upload(client, padded_archive).json()
    assert done.json().keys() == single.keys()
    assert done.json()["checks"] == single["checks"]
    rows = job_rows(db)
    assert [str(row.id) for row in rows] == [done.json()["id"], single["id"]]
    assert rows[0].summary["upload"] == rows[1].summary["upload"]
    assert rows[0].summary["upload"]["compressed_bytes"] == len(padded_archive)
    assert part_blobs(settings) == []
    state = client.get(f"{SESSIONS}/{session}").json()
    assert (state["status"], state["job_id"]) == ("completed", done.json()["id"])
    # A second completion stores nothing more.
    refused(client.post(f"{SESSIONS}/{session}/complete"), 409, "upload-session-completed")
    refused(put_part(client, session, 1, pieces[0]), 409, "upload-session-completed")
    assert len(job_rows(db)) == 2


def test_a_part_out_of_order_is_refused_and_not_kept(
    client: TestClient, *, db: Session, settings: Settings, padded_archive: bytes
) -> None:
    pieces = cut(padded_archive)
    session = open_session(client, padded_archive).json()["id"]

    refused(put_part(client, session, 2, pieces[1]), 409, "upload-part-out-of-order")
    refused(put_part(client, session, 4, pieces[2]), 409, "upload-part-out-of-order")

    assert client.get(f"{SESSIONS}/{session}").json()["next_part"] == 1
    assert part_blobs(settings) == []
    assert_nothing_stored(db, settings)


def test_a_part_with_a_wrong_digest_is_refused_and_not_kept(
    client: TestClient, *, db: Session, settings: Settings, padded_archive: bytes
) -> None:
    pieces = cut(padded_archive)
    session = open_session(client, padded_archive).json()["id"]
    flipped = bytes([pieces[0][0] ^ 1]) + pieces[0][1:]

    refused(
        put_part(client, session, 1, flipped, sha(pieces[0])), 422, "upload-part-digest-mismatch"
    )
    assert client.get(f"{SESSIONS}/{session}").json()["received"] == []
    assert put_part(client, session, 1, pieces[0]).status_code == 200
    # Part 1 again, with other bytes than those received.
    refused(put_part(client, session, 1, flipped), 422, "upload-part-digest-mismatch")
    assert client.get(f"{SESSIONS}/{session}").json()["received"] == [sha(pieces[0])]
    assert len(part_blobs(settings)) == 1
    assert_nothing_stored(db, settings)


def test_a_part_past_the_declared_size_is_refused(
    client: TestClient, *, db: Session, settings: Settings, padded_archive: bytes
) -> None:
    pieces = cut(padded_archive)
    session = open_session(client, padded_archive).json()["id"]
    put_part(client, session, 1, pieces[0])
    put_part(client, session, 2, pieces[1])

    longer = pieces[2] + b"more"
    refused(put_part(client, session, 3, longer), 422, "upload-part-size-mismatch")
    # Sent without a length, it is cut off at the first byte past the declared total.
    headers = {"hbench-part-sha256": sha(longer), "content-type": "application/octet-stream"}
    chunked = client.put(
        f"{SESSIONS}/{session}/parts/3", content=iter([pieces[2], b"more"]), headers=headers
    )
    refused(chunked, 422, "upload-part-size-mismatch")
    assert "runs past it" in chunked.json()["detail"]
    refused(put_part(client, session, 2, pieces[1][:-1]), 422, "upload-part-size-mismatch")

    assert client.get(f"{SESSIONS}/{session}").json()["next_part"] == 3
    assert len(part_blobs(settings)) == 2
    assert_nothing_stored(db, settings)


def test_a_session_over_the_caps_or_with_impossible_parts_is_refused(
    client: TestClient, *, db: Session, padded_archive: bytes
) -> None:
    digest = sha(padded_archive)

    def declare(total: int, part: int, sha256: str = digest) -> Response:
        body = {"total_bytes": total, "sha256": sha256, "part_bytes": part}
        return client.post(SESSIONS, json=body)

    # An API token's job is held to the service's default: 95 MiB as sent.
    refused(declare(96 * MIB, 32 * MIB), 413, "upload-too-large")
    refused(declare(10 * MIB, 96 * MIB), 422, "upload-session-invalid")
    refused(declare(10 * MIB, MIB // 2), 422, "upload-session-invalid")
    refused(declare(10 * MIB, MIB, "not-a-digest"), 422, "upload-session-invalid")
    assert sessions(db) == 0


def test_completing_before_every_part_is_in_is_refused(
    client: TestClient, *, db: Session, settings: Settings, padded_archive: bytes
) -> None:
    pieces = cut(padded_archive)
    session = open_session(client, padded_archive).json()["id"]
    put_part(client, session, 1, pieces[0])

    missing = client.post(f"{SESSIONS}/{session}/complete")

    refused(missing, 409, "upload-parts-missing")
    assert "send parts 2, 3" in missing.json()["detail"]
    # The parts stay: the rest is sent and the upload completes.
    put_part(client, session, 2, pieces[1])
    put_part(client, session, 3, pieces[2])
    assert client.post(f"{SESSIONS}/{session}/complete").status_code == 201
    assert len(job_rows(db)) == 1


def test_parts_of_another_archive_are_refused_whole_and_removed(
    client: TestClient, *, db: Session, settings: Settings, padded_archive: bytes
) -> None:
    pieces = cut(padded_archive)
    declared = {"total_bytes": len(padded_archive), "sha256": sha(b"another archive"),
                "part_bytes": MIB}  # fmt: skip
    session = client.post(SESSIONS, json=declared).json()["id"]
    for number, piece in enumerate(pieces, start=1):
        put_part(client, session, number, piece)

    refused(client.post(f"{SESSIONS}/{session}/complete"), 422, "upload-digest-mismatch")

    assert_nothing_stored(db, settings)
    assert part_blobs(settings) == [] and sessions(db) == 0
    refused(client.get(f"{SESSIONS}/{session}"), 404, "upload-session-not-found")


def test_a_refused_job_stores_nothing_and_removes_its_parts(
    client: TestClient, *, db: Session, settings: Settings
) -> None:
    archive = b"\x1f\x8b\x08" + bytes(2 * MIB)  # gzip's magic, then nothing of a gzip stream
    session = open_session(client, archive).json()["id"]
    for number, piece in enumerate(cut(archive), start=1):
        put_part(client, session, number, piece)

    refused(client.post(f"{SESSIONS}/{session}/complete"), 422, "upload-corrupt")

    assert_nothing_stored(db, settings)
    assert part_blobs(settings) == [] and sessions(db) == 0


def test_parts_that_fail_to_unpack_and_lack_the_declared_digest_are_named_so(
    client: TestClient, *, db: Session, settings: Settings
) -> None:
    archive = b"\x1f\x8b\x08" + bytes(2 * MIB)
    declared = {"total_bytes": len(archive), "sha256": sha(b"the archive meant"),
                "part_bytes": MIB}  # fmt: skip
    session = client.post(SESSIONS, json=declared).json()["id"]
    for number, piece in enumerate(cut(archive), start=1):
        put_part(client, session, number, piece)

    refused(client.post(f"{SESSIONS}/{session}/complete"), 422, "upload-digest-mismatch")
    assert_nothing_stored(db, settings)


def test_a_session_is_its_openers_alone(
    client: TestClient, *, db: Session, make_token: TokenFactory, padded_archive: bytes
) -> None:
    remote = TestClient(client.app, **REMOTE)
    alice, bob = bearer(make_token("alice")), bearer(make_token("bob"))
    session = open_session(remote, padded_archive, **alice).json()["id"]

    refused(remote.get(f"{SESSIONS}/{session}", headers=bob), 404, "upload-session-not-found")
    piece = cut(padded_archive)[0]
    refused(put_part(remote, session, 1, piece, **bob), 404, "upload-session-not-found")
    refused(remote.post(f"{SESSIONS}/{session}/complete", headers=bob), 404,
            "upload-session-not-found")  # fmt: skip
    assert remote.get(f"{SESSIONS}/{session}", headers=alice).status_code == 200
    refused(remote.post(SESSIONS, json={}), 401, "auth-required")


def test_an_aborted_session_leaves_nothing(
    client: TestClient, *, db: Session, settings: Settings, padded_archive: bytes
) -> None:
    session = open_session(client, padded_archive).json()["id"]
    put_part(client, session, 1, cut(padded_archive)[0])

    assert client.delete(f"{SESSIONS}/{session}").status_code == 204

    assert part_blobs(settings) == [] and sessions(db) == 0
    refused(client.get(f"{SESSIONS}/{session}"), 404, "upload-session-not-found")


def test_a_session_expires_and_the_sweep_removes_it(
    client: TestClient,
    *,
    db: Session,
    settings: Settings,
    clock: FakeClock,
    padded_archive: bytes,
) -> None:
    session = open_session(client, padded_archive).json()["id"]
    put_part(client, session, 1, cut(padded_archive)[0])
    # Parts no session names (a removal cut short) go too.
    blobs = LocalBlobStore(settings.blob_dir)
    blobs.put(f"upload-parts/{uuid.uuid4()}/000001-{'0' * 64}", _Bytes(b"left"))

    clock.now += settings.upload_session_lifetime + timedelta(seconds=1)

    refused(put_part(client, session, 2, cut(padded_archive)[1]), 410, "upload-session-expired")
    database = Database(settings.effective_database_url)
    try:
        assert sweep_sessions(database, blobs, now=clock.now) == 2
    finally:
        database.dispose()
    assert part_blobs(settings) == [] and sessions(db) == 0


def test_an_account_has_few_sessions_open_at_once(
    client: TestClient, *, padded_archive: bytes, settings: Settings
) -> None:
    # Each of another part size: the same declaration again answers its open session.
    for n in range(1, settings.upload_sessions_per_account + 1):
        assert open_session(client, padded_archive, n * MIB).status_code == 201
    refused(open_session(client, padded_archive, 8 * MIB), 429, "upload-sessions-too-many")
    assert open_session(client, padded_archive).status_code == 200


def test_the_same_archive_declared_again_goes_on_from_the_parts_held(
    client: TestClient, *, db: Session, make_token: TokenFactory, padded_archive: bytes
) -> None:
    """A client that stopped part way opens its session again: the service answers the
    session it holds (200) with its parts, and the upload goes on from `next_part`."""
    remote = TestClient(client.app, **REMOTE)
    alice, bob = bearer(make_token("alice")), bearer(make_token("bob"))
    first = open_session(remote, padded_archive, **alice)
    assert first.status_code == 201, first.text
    session, pieces = first.json()["id"], cut(padded_archive)
    assert put_part(remote, session, 1, pieces[0], **alice).status_code == 200

    again = open_session(remote, padded_archive, **alice)
    assert again.status_code == 200, again.text
    assert again.json()["id"] == session
    assert again.json()["received"] == [sha(pieces[0])] and again.json()["next_part"] == 2
    # Another account, or another part size, is another session.
    assert open_session(remote, padded_archive, **bob).json()["id"] != session
    assert open_session(remote, padded_archive, 2 * MIB, **alice).json()["id"] != session
    assert sessions(db) == 3

    for number, piece in enumerate(pieces[1:], 2):
        assert put_part(remote, session, number, piece, **alice).status_code == 200
    done = remote.post(f"{SESSIONS}/{session}/complete", headers=alice)
    assert done.status_code == 201, done.text
    # Completed, it is no longer the archive's open session.
    assert open_session(remote, padded_archive, **alice).json()["id"] != session


def test_an_issued_run_is_held_to_its_boards_caps(
    app: FastAPI,
    client: TestClient,
    *,
    db: Session,
    settings: Settings,
    clock: FakeClock,
    sealed: SealedJob,
    padded_archive: bytes,
) -> None:
    registry = default_registry()
    board = registry.boards["hbench-demo"].model_copy(
        update={"upload_max_bytes": 300 * MIB, "unpacked_max_bytes": MIB}
    )
    registry = replace(registry, boards={**registry.boards, board.slug: board})
    app.dependency_overrides[get_registry] = lambda: registry
    issued = issue_run(db, sealed.spec)
    declared = {"total_bytes": 200 * MIB, "sha256": "0" * 64, "part_bytes": 64 * MIB}

    # Over one request's 95 MiB, within the board's 300 MiB: sent in parts.
    opened = client.post(SESSIONS, json=declared, headers=run_token(issued.token))
    assert opened.status_code == 201, opened.text
    # The board's 1 MiB unpacked cap holds a single upload too.
    refused(upload(client, padded_archive, **run_token(issued.token)), 413,
            "upload-unpacked-too-large")  # fmt: skip

    caps = job_caps(settings, registry, uploader_for(board.slug))
    assert (caps.sent, caps.unpacked, caps.board) == (300 * MIB, MIB, "hbench-demo")
    ceiling = settings.model_copy(update={"job_max_bytes": 100 * MIB})
    assert job_caps(ceiling, registry, uploader_for(board.slug)).sent == 100 * MIB
    default = job_caps(settings, registry, Uploader(uuid.uuid4(), "alice"))
    assert (default.sent, default.unpacked) == (95 * MIB, 512 * MIB)


def uploader_for(board: str) -> Uploader:
    issued = IssuedSpec(run_id=str(uuid.uuid4()), spec={}, spec_digest="", board=board,
                        entry="oracle-a1b2c3")  # fmt: skip
    return Uploader(uuid.uuid4(), "alice", uuid.uuid4(), issued)


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, size: int = -1, /) -> bytes:
        data, self.data = (self.data, b"") if size < 0 else (self.data[:size], self.data[size:])
        return data


def test_a_tiny_part_size_is_allowed_for_a_one_part_archive(client: TestClient) -> None:
    archive = b"x" * 100
    assert open_session(client, archive, part_bytes=100).status_code == 201


def test_the_part_digest_header_is_required(client: TestClient, padded_archive: bytes) -> None:
    session = open_session(client, padded_archive).json()["id"]
    answer = client.put(f"{SESSIONS}/{session}/parts/1", content=cut(padded_archive)[0])
    refused(answer, 422, "request-invalid")


def test_a_session_being_completed_takes_no_part_nor_another_completion(
    client: TestClient, *, settings: Settings, padded_archive: bytes
) -> None:
    pieces = cut(padded_archive)
    session = open_session(client, padded_archive).json()["id"]
    for number, piece in enumerate(pieces, start=1):
        put_part(client, session, number, piece)
    database = Database(settings.effective_database_url)
    try:
        # Another request's completion, claimed and running.
        assert claim_completion(database, uuid.UUID(session))
        refused(client.post(f"{SESSIONS}/{session}/complete"), 409, "upload-session-busy")
        refused(client.delete(f"{SESSIONS}/{session}"), 409, "upload-session-busy")
        refused(put_part(client, session, 3, pieces[2]), 409, "upload-session-busy")
        assert client.get(f"{SESSIONS}/{session}").json()["status"] == "completing"
        # Its failure (not a refusal) opens the session again, parts and all.
        release_completion(database, uuid.UUID(session))
    finally:
        database.dispose()
    assert client.post(f"{SESSIONS}/{session}/complete").status_code == 201
