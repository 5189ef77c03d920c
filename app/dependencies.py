"""The FastAPI dependencies every part of the service shares: settings, database, blob store.

The resources are opened once, when the app starts (`app.main.lifespan` calls
`open_resources`), and handed to handlers through these functions, which tests replace
with `app.dependency_overrides`.

The service itself sets no override: the settings `create_app` is given are kept on the
app (`app.state.settings`) and read by `app_settings`. FastAPI builds every dependency of
every request anew from its signature while any override is set, which cost a request
of `POST /api/local-runs` some 25 signature inspections, about a fifth of its time. The
dependencies here only hand over what the app holds, so they are `async`: a plain `def`
would be called in the thread pool, a hop of a thread and back for each of them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

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


def app_settings(app: object) -> Settings:
    """The settings an app's handlers see: a test's override of `get_settings`, else those
    `create_app` was given, else the environment's."""
    overrides = getattr(app, "dependency_overrides", None) or {}
    override = overrides.get(get_settings)
    if override is not None:
        settings: Settings = override()
        return settings
    given = getattr(getattr(app, "state", None), "settings", None)
    return given if isinstance(given, Settings) else get_settings()


async def request_settings(request: Request) -> Settings:
    """The settings, as a dependency (`SettingsDep`); tests override `get_settings`."""
    return app_settings(request.app)


async def get_resources(request: Request) -> Resources:
    resources = getattr(request.app.state, "resources", None)
    if not isinstance(resources, Resources):
        raise RuntimeError("the app has not started: use it inside its lifespan")
    return resources


async def get_database(resources: Annotated[Resources, Depends(get_resources)]) -> Database:
    return resources.database


async def get_session(
    database: Annotated[Database, Depends(get_database)],
) -> AsyncIterator[Session]:
    """A session for one request. Services commit what they change; anything left
    uncommitted when the request ends (a refusal, a failure) is rolled back.

    Opening a session touches no connection, nor does closing one whose work was
    committed (a commit hands the connection back to the pool). Closing one still in a
    transaction rolls it back, a round trip to the database, so that is done in a thread."""
    session = database.session()
    try:
        yield session
    finally:
        if session.in_transaction():
            await run_in_threadpool(session.close)
        else:
            session.close()


async def get_blob_store(resources: Annotated[Resources, Depends(get_resources)]) -> BlobStore:
    return resources.blobs


SettingsDep = Annotated[Settings, Depends(request_settings)]
DatabaseDep = Annotated[Database, Depends(get_database)]
SessionDep = Annotated[Session, Depends(get_session)]
BlobStoreDep = Annotated[BlobStore, Depends(get_blob_store)]
