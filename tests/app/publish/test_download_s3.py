"""A service whose blobs live in an S3-compatible bucket (moto's server, on loopback): uploads
are stored there by the upload workers, and a download is a redirect to a presigned
address that serves the same bytes under the job's name, or the bytes themselves when the
store is told to presign nothing."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.blobs import S3BlobStore, S3Config
from app.http.headers import attachment
from app.settings import Settings
from tests.s3_server import s3_config, s3_server

from ..conftest import LOCAL, NO_REGRADES, REMOTE, TokenFactory, bearer
from .conftest import job_row, publish, uploaded

__all__ = ["s3_config", "s3_server"]

pytestmark = pytest.mark.s3


@pytest.fixture
def settings(tmp_path: Path, database_url: str, s3_config: S3Config) -> Settings:
    return Settings(
        state_dir=tmp_path / "state",
        database_url=database_url,
        writer_enabled=False,
        blob_store="s3",
        s3_endpoint=s3_config.endpoint,
        s3_bucket=s3_config.bucket,
        **NO_REGRADES,
    )


def stored(config: S3Config, key: str) -> bytes:
    with S3BlobStore(config).open(key) as blob:
        return blob.read()


def test_a_job_stored_in_s3_downloads_through_a_presigned_address(
    client: TestClient,
    *,
    make_token: TokenFactory,
    sealed_archive: bytes,
    db: Session,
    settings: Settings,
    s3_config: S3Config,
) -> None:
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    row = job_row(db, job_id)
    assert row.blob_key is not None
    archive = stored(s3_config, row.blob_key)  # in the bucket, not the state folder
    assert archive[:2] == b"\x1f\x8b"
    assert not (settings.blob_dir / "jobs").exists()

    answer = client.get(
        f"/api/bench/jobs/{job_id}/download", headers=bearer(token), follow_redirects=False
    )
    assert answer.status_code == 307, answer.text
    assert answer.headers["cache-control"] == "no-store"
    address = answer.headers["location"]
    assert address.startswith(f"{s3_config.endpoint}/{s3_config.bucket}/{row.blob_key}?")
    assert "X-Amz-Expires=60" in address  # HBENCH_S3_PRESIGN_LIFETIME's default

    fetched = httpx.get(address)  # straight from the store, with no credentials
    assert fetched.status_code == 200
    assert fetched.content == archive
    assert fetched.headers["content-type"] == "application/gzip"
    assert fetched.headers["content-disposition"] == attachment(
        f"{row.job_name}.tar.gz", default_stem="job"
    )

    # Private: nobody else is sent anywhere.
    anyone = TestClient(client.app, **REMOTE)
    refused = anyone.get(f"/api/bench/jobs/{job_id}/download", follow_redirects=False)
    assert refused.status_code == 404 and "location" not in refused.headers
    assert refused.json()["code"] == "bench-job-not-found"

    # Published: anyone is.
    assert publish(client, job_id, token).status_code == 200
    public = anyone.get(f"/api/bench/jobs/{job_id}/download", follow_redirects=False)
    assert public.status_code == 307
    assert httpx.get(public.headers["location"]).content == archive


def test_a_job_whose_object_is_gone_is_refused_not_redirected(
    client: TestClient, *, make_token: TokenFactory, sealed_archive: bytes, db: Session,
    s3_config: S3Config,
) -> None:  # fmt: skip
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    key = job_row(db, job_id).blob_key
    assert key is not None and S3BlobStore(s3_config).delete(key)
    answer = client.get(
        f"/api/bench/jobs/{job_id}/download", headers=bearer(token), follow_redirects=False
    )
    assert "location" not in answer.headers
    assert answer.json()["code"] == "job-files-hidden"


def test_a_store_clients_cannot_reach_is_streamed_through_the_service(
    tmp_path: Path, database_url: str, s3_config: S3Config, *,
    sealed_archive: bytes, db: Session, make_token: TokenFactory,
) -> None:  # fmt: skip
    from app.main import create_app  # noqa: PLC0415 - an app of its own settings

    settings = Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_enabled=False,
        blob_store="s3", s3_endpoint=s3_config.endpoint, s3_bucket=s3_config.bucket,
        s3_presign=False, **NO_REGRADES,
    )  # fmt: skip
    token = make_token("alice")
    with TestClient(create_app(settings), **LOCAL) as client:
        job_id = uploaded(client, sealed_archive, token)
        answer = client.get(
            f"/api/bench/jobs/{job_id}/download", headers=bearer(token), follow_redirects=False
        )
    assert answer.status_code == 200
    key = job_row(db, job_id).blob_key
    assert key is not None and answer.content == stored(s3_config, key)
    assert answer.headers["content-disposition"].startswith("attachment;")
