"""The access log of the service as `hbench-app serve` runs it keeps no secret of an
address: the sign-in callback's `code` and `state`, and any token in a query string."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from app.main import create_app
from app.observe.access_log import filtered_path
from app.settings import Settings

from ..conftest import NO_REGRADES
from .conftest import served

CODE = "6f1c0a9e2b7d4c3a8e5f"
STATE = "q8J3vR1xZt0eYk9WmA2sLd7uPc4Hn6Bg"
API_TOKEN = "hpg_" + "Zk3" * 14 + "x"


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_a_real_sign_in_callback_leaves_no_code_or_state_in_the_access_log(
    tmp_path: Path,
) -> None:
    settings = Settings(state_dir=tmp_path / "state", **NO_REGRADES)
    handler = Lines()
    with served(create_app(settings), settings) as (host, port):
        access = logging.getLogger("uvicorn.access")
        access.addHandler(handler)
        try:
            with httpx.Client(base_url=f"http://{host}:{port}") as client:
                client.get("/auth/github/callback", params={"code": CODE, "state": STATE})
                client.get("/api/health", params={"token": API_TOKEN, "page": "2"})
                client.get("/api/health", params={"next": "/bench", "run": API_TOKEN})
        finally:
            access.removeHandler(handler)
    logged = "\n".join(handler.lines)
    assert len(handler.lines) == 3, logged
    for secret in (CODE, STATE, API_TOKEN):
        assert secret not in logged
    assert '"GET /auth/github/callback?[filtered] HTTP/1.1"' in logged
    assert "/api/health?token=[REDACTED]&page=2" in logged
    assert "/api/health?next=%2Fbench&run=[REDACTED]" in logged


@pytest.mark.parametrize(
    ("target", "kept"),
    [
        ("/api/bench/jobs?limit=5", "/api/bench/jobs?limit=5"),
        ("/api/bench/jobs", "/api/bench/jobs"),
        (f"/auth/github/callback?error=denied&state={STATE}", "/auth/github/callback?[filtered]"),
        (f"/x?access_token={CODE}", "/x?access_token=[REDACTED]"),
        (f"/x?client_secret={CODE}&q=a+b", "/x?client_secret=[REDACTED]&q=a%20b"),
        ("/x?jwt=aaa.bbb.ccc", "/x?jwt=[REDACTED]"),
        ("/x?q=eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl", "/x?q=[REDACTED]"),
    ],
)
def test_query_strings_keep_what_is_no_secret(target: str, kept: str) -> None:
    assert filtered_path(target) == kept
