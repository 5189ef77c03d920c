"""Fixtures for the web pages: the started app in local mode, forms read off the pages,
and the real sealed job the Your-bench tests upload."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from app.settings import Settings

from ..bench.conftest import sealed, sealed_archive
from ..conftest import NO_REGRADES

__all__ = ["sealed", "sealed_archive"]

ORIGIN = "http://127.0.0.1:8000"  # LOCAL's base URL, as a browser names it
TOKEN_FIELD = re.compile(r'name="csrf_token" value="([0-9a-f]*)"')


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Local mode, with the data-repo writer off: these tests look at the database."""
    return Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_enabled=False,
        **NO_REGRADES,
    )  # fmt: skip


def form_token(page: Response) -> str:
    """The hidden form token of a page."""
    found = TOKEN_FIELD.search(page.text)
    assert found is not None, page.text
    return found.group(1)


def submit(
    client: TestClient, page: str, action: str, fields: dict[str, str], origin: str = ORIGIN
) -> Response:
    """Open `page`, then send one of its forms to `action` as a browser does."""
    token = form_token(client.get(page))
    return client.post(
        action,
        data={"csrf_token": token, **fields},
        headers={"origin": origin},
        follow_redirects=False,
    )
