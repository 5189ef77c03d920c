"""The FastAPI dependencies every part of the service shares: settings, database, blob store.

The resources are opened once, when the app starts (`app.main.lifespan` calls
`open_resources`), and handed to handlers through these functions, which tests replace
with `app.dependency_overrides`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from app.blobs import BlobStore, open_blob_store
from app.db.migrate import migrated_database
from app.db.session import Database
from app.settings import Settings, get_settings


@dataclass(frozen=True)
class Resources:
    """What a running app holds open: its database and its blob store."""

    database: Database
    blobs: BlobStore

    def close(self) -> None:
        self.database.dispose()


def open_resources(settings: Settings) -> Resources:
    """Prepare the state directory, migrate the database to head, open the stores (the
    service on start, and the commands that need both)."""
    database = migrated_database(settings)
    return Resources(database=database, blobs=open_blob_store(settings))


def get_resources(request: Request) -> Resources:
    resources = getattr(request.app.state, "resources", None)
    if not isinstance(resources, Resources):
        raise RuntimeError("the app has not started: use it inside its lifespan")
    return resources


def get_database(resources: Annotated[Resources, Depends(get_resources)]) -> Database:
    return resources.database


def get_session(database: Annotated[Database, Depends(get_database)]) -> Iterator[Session]:
    """A session for one request. Services commit what they change; anything left
    uncommitted when the request ends (a refusal, a failure) is rolled back."""
    with database.session() as session:
        yield session


def get_blob_store(resources: Annotated[Resources, Depends(get_resources)]) -> BlobStore:
    return resources.blobs


SettingsDep = Annotated[Settings, Depends(get_settings)]
DatabaseDep = Annotated[Database, Depends(get_database)]
SessionDep = Annotated[Session, Depends(get_session)]
BlobStoreDep = Annotated[BlobStore, Depends(get_blob_store)]
