"""Uploads refused before the rule table: who sends them, and what the body is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.main import create_app
from app.settings import Settings

from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import assert_nothing_stored, upload


@pytest.fixture
def remote(client: TestClient) -> TestClient:
    """A client on another machine: only a token signs it in."""
    return TestClient(client.app, **REMOTE)


def test_an_upload_needs_a_token_from_another_machine(
    remote: TestClient, db: Session, settings: Settings, sealed_archive: bytes
) -> None:
    answer = upload(remote, sealed_archive)

    assert (answer.status_code, answer.json()["code"]) == (401, "auth-required")
    assert answer.headers["www-authenticate"] == "Bearer"
    assert_nothing_stored(db, settings)


@pytest.mark.parametrize(
    "authorization", ["Bearer hpg_" + "x" * 43, "Bearer nonsense", "Basic YWxpY2U6c2VjcmV0"]
)
def test_an_unknown_api_token_is_refused(
    remote: TestClient, db: Session, settings: Settings, sealed_archive: bytes, authorization: str
) -> None:
    answer = upload(remote, sealed_archive, authorization=authorization)

    assert (answer.status_code, answer.json()["code"]) == (401, "token-invalid")
    assert_nothing_stored(db, settings)


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", ""])
def test_a_body_not_sent_as_gzip_is_refused(
    remote: TestClient,
    *,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed_archive: bytes,
    content_type: str,
) -> None:
    answer = upload(
        remote, sealed_archive, **bearer(make_token()), **{"content-type": content_type}
    )

    assert (answer.status_code, answer.json()["code"]) == (415, "upload-content-type")
    assert_nothing_stored(db, settings)


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"PK\x03\x04 a zip, not a tar.gz", 415, "upload-not-gzip"),
        (b"", 415, "upload-not-gzip"),
    ],
)
def test_a_body_that_is_not_gzip_is_refused(
    remote: TestClient,
    *,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    body: bytes,
    status: int,
    code: str,
) -> None:
    answer = upload(remote, body, **bearer(make_token()))

    assert (answer.status_code, answer.json()["code"]) == (status, code)
    assert_nothing_stored(db, settings)


def test_a_cut_archive_is_refused_and_its_partial_files_removed(
    remote: TestClient,
    db: Session,
    settings: Settings,
    make_token: TokenFactory,
    sealed_archive: bytes,
) -> None:
    answer = upload(remote, sealed_archive[: len(sealed_archive) // 2], **bearer(make_token()))

    assert (answer.status_code, answer.json()["code"]) == (422, "upload-truncated")
    assert_nothing_stored(db, settings)


@pytest.fixture
def small_cap(settings: Settings, tmp_path: Path) -> Iterator[tuple[TestClient, Settings]]:
    """The service with a 4 KiB cap on what is sent, which the real job is over."""
    capped = settings.model_copy(update={"upload_max_bytes": 4096})
    with TestClient(create_app(capped), **REMOTE) as client:
        yield client, capped


def test_a_declared_length_over_the_cap_is_refused_before_reading(
    small_cap: tuple[TestClient, Settings],
    db: Session,
    make_token: TokenFactory,
    sealed_archive: bytes,
) -> None:
    client, settings = small_cap
    assert len(sealed_archive) > 4096

    answer = upload(client, sealed_archive, **bearer(make_token()))

    assert (answer.status_code, answer.json()["code"]) == (413, "upload-too-large")
    assert "over the 0 MiB cap" not in answer.json()["detail"]
    assert_nothing_stored(db, settings)


def test_a_streamed_body_over_the_cap_is_cut_off(
    small_cap: tuple[TestClient, Settings],
    db: Session,
    make_token: TokenFactory,
    sealed_archive: bytes,
) -> None:
    client, settings = small_cap
    chunks = (sealed_archive[i : i + 1024] for i in range(0, len(sealed_archive), 1024))

    # A generator is sent chunked, with no content-length to refuse early on.
    answer = client.post(
        "/api/bench/uploads",
        content=chunks,
        headers={"content-type": "application/gzip", **bearer(make_token())},
    )

    assert (answer.status_code, answer.json()["code"]) == (413, "upload-too-large")
    assert_nothing_stored(db, settings)
