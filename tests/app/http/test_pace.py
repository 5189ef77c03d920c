"""Bodies that stall: a client that sends part of a body and stops is answered 408 once it
falls behind the minimum rate, and its upload's scratch folder is gone by then; a body
that arrives slowly but steadily is read. A raw socket plays the client."""

from __future__ import annotations

import json
import select
import socket
import time
from pathlib import Path

import pytest
from sqlalchemy import func
from sqlalchemy import select as sql_select

from app.auth.service import create_api_token, ensure_account
from app.db.models import Job
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from tests.app.v1.conftest import summary

from ..conftest import NO_REGRADES
from .conftest import connect, read_response, request_head, served

GRACE = 0.5
"""Seconds a body may take before the rate applies: short, so a stall is cut off fast."""
RATE = 64 * 1024


@pytest.fixture
def paced(tmp_path: Path) -> Settings:
    """A service with a half-second grace period and a 64 KiB/s minimum rate."""
    return Settings(
        state_dir=tmp_path / "state",
        body_grace_period=GRACE,
        body_min_rate=RATE,
        **NO_REGRADES,
    )


def api_token(settings: Settings, login: str = "alice") -> str:
    database = Database(settings.effective_database_url)
    try:
        with database.session() as session:
            _, token = create_api_token(session, ensure_account(session, login), "test")
    finally:
        database.dispose()
    return token


def under_way(settings: Settings, sock: socket.socket) -> list[str]:
    """The uploads' scratch folders, once one is made (before any answer comes)."""
    deadline = time.monotonic() + 10
    while not answered(sock) and time.monotonic() < deadline:
        folders = scratch_folders(settings) if settings.upload_dir.is_dir() else []
        if folders:
            return folders
        time.sleep(0.005)
    return []


def stored_jobs(settings: Settings) -> int:
    database = Database(settings.effective_database_url)
    try:
        with database.session() as session:
            return session.scalar(sql_select(func.count()).select_from(Job)) or 0
    finally:
        database.dispose()


def answered(sock: socket.socket) -> bool:
    return bool(select.select([sock], [], [], 0)[0])


def scratch_folders(settings: Settings) -> list[str]:
    return sorted(path.name for path in settings.upload_dir.iterdir())


def test_a_stalled_upload_is_answered_408_and_its_scratch_folder_removed(
    paced: Settings, sealed_archive: bytes
) -> None:
    archive = sealed_archive
    with served(create_app(paced), paced, log_level="warning") as address:
        token = api_token(paced)
        head = request_head(
            "POST",
            "/api/bench/uploads",
            {
                "authorization": f"Bearer {token}",
                "content-type": "application/gzip",
                "content-length": str(len(archive)),
            },
        )
        with connect(address) as sock:
            sock.sendall(head + archive[:8192])
            held = under_way(paced, sock)  # the upload's folder, while it waits for more
            started = time.monotonic()
            status, _, body = read_response(sock)
            waited = time.monotonic() - started
        assert len(held) == 1 and held[0].startswith("hbench-upload-")
        assert status == 408
        refusal = json.loads(body)
        assert refusal["code"] == "request-body-too-slow"
        assert "slower than 64.0 KiB a second" in refusal["detail"]
        assert waited < 5
        assert scratch_folders(paced) == []
        assert [p for p in paced.blob_dir.rglob("*") if p.is_file()] == []
        assert stored_jobs(paced) == 0


def test_a_stalled_run_summary_is_answered_408_in_the_runs_apis_shape(paced: Settings) -> None:
    body = json.dumps(summary()).encode()
    with served(create_app(paced), paced, log_level="warning") as address, connect(address) as sock:
        head = request_head(
            "POST",
            "/v1/runs",
            {"content-type": "application/json", "content-length": str(len(body))},
        )
        sock.sendall(head + body[:100])
        status, _, answer = read_response(sock)
    assert status == 408
    error = json.loads(answer)["error"]
    assert error["code"] == "request-body-too-slow"


def test_a_body_that_arrives_slowly_but_steadily_is_read(paced: Settings) -> None:
    body = json.dumps(summary()).encode()
    third = len(body) // 3 + 1
    with served(create_app(paced), paced, log_level="warning") as address, connect(address) as sock:
        head = request_head(
            "POST",
            "/v1/runs",
            {"content-type": "application/json", "content-length": str(len(body))},
        )
        sock.sendall(head)
        for at in range(0, len(body), third):
            time.sleep(GRACE / 3)
            sock.sendall(body[at : at + third])
        status, _, answer = read_response(sock)
    assert status == 201, answer


def test_a_body_kept_trickling_past_its_deadline_is_cut_off(tmp_path: Path) -> None:
    # A deadline of about 1.5 seconds for a run summary: the grace period, then the
    # endpoint's 11.8 MiB at 16 MiB a second.
    settings = Settings(
        state_dir=tmp_path / "state",
        body_grace_period=GRACE,
        body_min_rate=RATE,
        body_deadline_rate=12 * 1024 * 1024,
        **NO_REGRADES,
    )
    head = request_head(
        "POST",
        "/v1/runs",
        {"content-type": "application/json", "content-length": str(8 * 1024 * 1024)},
    )
    app = create_app(settings)
    with served(app, settings, log_level="warning") as address, connect(address) as sock:
        sock.sendall(head + b"[")
        started = time.monotonic()
        # Four times the minimum rate, so only the deadline can stop it.
        while time.monotonic() - started < 5 and not answered(sock):
            sock.sendall(b" " * (RATE // 4))
            time.sleep(1 / 16)
        elapsed = time.monotonic() - started
        status, _, answer = read_response(sock)
    assert status == 408
    assert "did not arrive within 1.5 seconds" in json.loads(answer)["error"]["message"]
    assert 1 < elapsed < 3
