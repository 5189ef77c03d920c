"""The blob store: job archives and their files, behind a narrow interface.

`BlobStore` (`protocol.py`) is what the service needs of any store; `LocalBlobStore`
(`local.py`) keeps blobs in a folder, `S3BlobStore` (`s3.py`) in an S3-compatible bucket
that several replicas share. `HBENCH_BLOB_STORE` chooses one (`open_blob_store`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from app.blobs.local import TEMP_DIR, LocalBlobStore, copy_stream, fsync_directory
from app.blobs.protocol import (
    CHUNK_BYTES,
    KEY_PATTERN,
    MAX_KEY_LENGTH,
    PREFIX_PATTERN,
    STALE_TEMP_SECONDS,
    BlobNotFoundError,
    BlobStore,
    InvalidBlobKeyError,
    Readable,
    read_full,
    validate_key,
    validate_prefix,
)
from app.blobs.s3 import S3BlobStore, S3Config

if TYPE_CHECKING:
    from app.settings import Settings

BlobLocation = Path | S3Config
"""What opens a store again in another process: a folder, or a bucket's configuration."""

__all__ = [
    "CHUNK_BYTES",
    "KEY_PATTERN",
    "MAX_KEY_LENGTH",
    "PREFIX_PATTERN",
    "STALE_TEMP_SECONDS",
    "TEMP_DIR",
    "BlobLocation",
    "BlobNotFoundError",
    "BlobStore",
    "InvalidBlobKeyError",
    "LocalBlobStore",
    "Readable",
    "S3BlobStore",
    "S3Config",
    "blob_location",
    "copy_stream",
    "fsync_directory",
    "location_of",
    "open_blob_store",
    "read_full",
    "store_at",
    "validate_key",
    "validate_prefix",
]


def blob_location(settings: Settings) -> BlobLocation:
    """Where the settings keep blobs."""
    if settings.blob_store == "local":
        return settings.blob_dir.absolute()
    if settings.s3_bucket is None:  # the settings refuse this; a hand-made object may not
        raise ValueError("HBENCH_BLOB_STORE=s3 needs HBENCH_S3_BUCKET")
    return S3Config(
        bucket=settings.s3_bucket,
        endpoint=settings.s3_endpoint,
        region=settings.s3_region,
        public_endpoint=settings.s3_public_endpoint,
        presign=settings.s3_presign,
        presign_seconds=int(settings.s3_presign_lifetime.total_seconds()),
        part_bytes=settings.s3_part_size,
    )


def open_blob_store(settings: Settings) -> BlobStore:
    """The store the settings name: the local folder, or the S3-compatible bucket."""
    return store_at(blob_location(settings))


def store_at(location: BlobLocation) -> BlobStore:
    if isinstance(location, S3Config):
        return S3BlobStore(location)
    return LocalBlobStore(location)


def location_of(store: BlobStore) -> BlobLocation:
    """How another process opens the same store; a `TypeError` for a store it can't."""
    if isinstance(store, LocalBlobStore):
        return store.root.absolute()
    if isinstance(store, S3BlobStore):
        return store.config
    raise TypeError(
        f"a {type(store).__name__} can't be opened in another process: the upload workers "
        "open a LocalBlobStore by its folder and an S3BlobStore by its configuration"
    )
