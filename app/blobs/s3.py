"""The S3-compatible blob store: blobs as objects in one bucket (AWS S3, MinIO, Ceph, R2...),
shared by every replica of the service.

A blob is written in parts of `part_bytes` through a multipart upload, so a blob of any
size needs one part of memory; S3 shows the object only once the upload completes, so a
reader never sees half of one. A failed write aborts its upload; a writer killed mid-blob
leaves an incomplete upload, invisible to readers, that `sweep_temporary` aborts later.
A blob smaller than one part is written with a single request.

Credentials come from boto3's standard chain: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`
and `AWS_SESSION_TOKEN`, a shared credentials file, or the machine's role. boto3 is
imported when a store is made, so importing `app.blobs` stays cheap.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, BinaryIO

from app.blobs.protocol import (
    KEY_PATTERN,
    STALE_TEMP_SECONDS,
    BlobNotFoundError,
    Readable,
    read_full,
    validate_key,
    validate_prefix,
)

if TYPE_CHECKING:
    from botocore.response import StreamingBody
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef

MIN_PART_BYTES = 5 * 1024 * 1024  # S3's smallest part, but for the last one
DEFAULT_PART_BYTES = 8 * 1024 * 1024
READ_BUFFER_BYTES = 1024 * 1024
MISSING = frozenset({"404", "NoSuchKey", "NotFound"})


@dataclass(frozen=True)
class S3Config:
    """Where the bucket is and how to reach it: what a store is made of, and what another
    process (an upload worker) needs to open the same store. It holds no credentials."""

    bucket: str
    endpoint: str | None = None
    """The store's address (MinIO, moto, another S3-compatible server); None for AWS."""
    region: str = "us-east-1"
    public_endpoint: str | None = None
    """The address clients reach the store at, for presigned downloads; default `endpoint`."""
    presign: bool = True
    presign_seconds: int = 60
    part_bytes: int = DEFAULT_PART_BYTES

    def __post_init__(self) -> None:
        if self.part_bytes < MIN_PART_BYTES:
            raise ValueError(f"S3 parts are at least {MIN_PART_BYTES} bytes")


class S3BlobStore:
    """Blobs as objects `<key>` in one bucket."""

    def __init__(self, config: S3Config) -> None:
        self.config = config
        self.bucket = config.bucket
        self.client = make_client(config, config.endpoint)
        public = config.public_endpoint
        # Signing needs no request: a second client only to sign for the public address.
        same = public in (None, config.endpoint)
        self.signer = self.client if same else make_client(config, public)

    def put(self, key: str, stream: Readable) -> int:
        validate_key(key)
        part = read_full(stream, self.config.part_bytes)
        if len(part) < self.config.part_bytes:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=part)
            return len(part)
        upload = self.client.create_multipart_upload(Bucket=self.bucket, Key=key)["UploadId"]
        try:
            parts: list[CompletedPartTypeDef] = []
            size = 0
            while part:
                number = len(parts) + 1
                answer = self.client.upload_part(
                    Bucket=self.bucket, Key=key, UploadId=upload, PartNumber=number, Body=part
                )
                parts.append({"ETag": answer["ETag"], "PartNumber": number})
                size += len(part)
                part = read_full(stream, self.config.part_bytes)
            self.client.complete_multipart_upload(
                Bucket=self.bucket, Key=key, UploadId=upload, MultipartUpload={"Parts": parts}
            )
        except BaseException:
            # Best effort: if the abort fails too, sweep_temporary finds the upload later.
            with contextlib.suppress(Exception):
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload)
            raise
        return size

    def open(self, key: str) -> BinaryIO:
        validate_key(key)
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=key)
        except self.client.exceptions.ClientError as error:
            if error_code(error) in MISSING:
                raise BlobNotFoundError(key) from None
            raise
        return io.BufferedReader(ObjectReader(answer["Body"]), READ_BUFFER_BYTES)

    def delete(self, key: str) -> bool:
        # S3's delete says nothing of whether there was an object: ask first.
        if not self.exists(key):
            return False
        self.client.delete_object(Bucket=self.bucket, Key=key)
        return True

    def exists(self, key: str) -> bool:
        validate_key(key)
        try:
            self.client.head_object(Bucket=self.bucket, Key=key)
        except self.client.exceptions.ClientError as error:
            if error_code(error) in MISSING:
                return False
            raise
        return True

    def list(self, prefix: str = "") -> Iterator[str]:
        validate_prefix(prefix)
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        )
        keys = [
            item["Key"]
            for page in pages
            for item in page.get("Contents", [])
            if KEY_PATTERN.fullmatch(item["Key"])
        ]
        yield from sorted(keys)

    def download_url(self, key: str, *, content_disposition: str, content_type: str) -> str | None:
        if not self.config.presign:
            validate_key(key)
            return None
        if not self.exists(key):
            raise BlobNotFoundError(key)
        return self.signer.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": key,
                "ResponseContentDisposition": content_disposition,
                "ResponseContentType": content_type,
            },
            ExpiresIn=self.config.presign_seconds,
        )

    def sweep_temporary(self, older_than: float = STALE_TEMP_SECONDS) -> int:
        """Abort the multipart uploads begun longer ago than `older_than` seconds."""
        cutoff = datetime.fromtimestamp(time.time() - older_than, UTC)
        aborted = 0
        for page in self.client.get_paginator("list_multipart_uploads").paginate(
            Bucket=self.bucket
        ):
            for upload in page.get("Uploads", []):
                if upload["Initiated"] < cutoff:
                    with contextlib.suppress(self.client.exceptions.NoSuchUpload):
                        self.client.abort_multipart_upload(
                            Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                        )
                        aborted += 1
        return aborted


class ObjectReader(io.RawIOBase):
    """An object's body as a raw stream, for `io.BufferedReader` to make a file of."""

    def __init__(self, body: StreamingBody) -> None:
        self.body = body

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]  # typeshed's Buffer
        data = self.body.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self.body.close()
        super().close()


def make_client(config: S3Config, endpoint: str | None) -> S3Client:
    import boto3  # noqa: PLC0415 - only a service configured for S3 pays for boto3
    from botocore.config import Config  # noqa: PLC0415 - as above

    settings = Config(
        region_name=config.region,
        retries={"mode": "standard", "max_attempts": 5},
        max_pool_connections=32,
        # Path-style addresses (`endpoint/bucket/key`) for S3-compatible servers, which
        # rarely have a name per bucket; AWS itself takes virtual-hosted ones.
        s3={"addressing_style": "path" if config.endpoint else "auto"},
        signature_version="s3v4",
    )
    return boto3.session.Session().client("s3", endpoint_url=endpoint, config=settings)


def error_code(error: Exception) -> str:
    response = getattr(error, "response", {}) or {}
    return str(response.get("Error", {}).get("Code", ""))
