"""Fixtures for the tests marked `s3`: moto's S3-compatible server, started once per session
as its own process on a free loopback port (`tools/moto_s3.py`), and a new bucket per test.

Import the fixtures into a test module (or a conftest) to use them.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest

from app.blobs import S3BlobStore, S3Config
from app.blobs.s3 import MIN_PART_BYTES
from tools.moto_s3 import TEST_CREDENTIALS, moto_s3

# boto3 finds credentials in the environment, in this process and in the upload workers,
# which a fork server starts with the environment it had when it began: so they are set
# when the fixtures are imported, before any test starts one. moto takes any credentials;
# real ones already set are kept, and only ever sent, signed, to the loopback server.
for _name, _value in TEST_CREDENTIALS.items():
    os.environ.setdefault(_name, _value)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """The server's address, `http://127.0.0.1:PORT`; it is stopped at the session's end."""
    with moto_s3() as endpoint:
        yield endpoint


@pytest.fixture
def s3_config(s3_server: str) -> S3Config:
    """A new, empty bucket on the server, and parts as small as S3 allows."""
    config = S3Config(
        bucket=f"hbench-test-{secrets.token_hex(6)}", endpoint=s3_server, part_bytes=MIN_PART_BYTES
    )
    S3BlobStore(config).client.create_bucket(Bucket=config.bucket)
    return config
