"""`GET /api/health`, whether the service is up and can reach its database (liveness), and
`GET /api/ready`, whether it can serve everything: its database, its blob store, the site
(its first build has finished) and, where this process writes the data repository, that
repository's checkout (readiness)."""

from __future__ import annotations

import subprocess
import time
from typing import Literal

import httpx
from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy.exc import SQLAlchemyError

from app.blobs import BlobStore
from app.datarepo.git import Git
from app.db.session import Database
from app.dependencies import BlobStoreDep, DatabaseDep, SettingsDep
from app.errors import error_responses
from app.settings import Mode, Settings
from app.site.serve import is_built
from hbench import __version__
from hbench.errors import HbenchError

router = APIRouter(prefix="/api", tags=["service"])


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    mode: Mode


@router.get(
    "/health",
    summary="Check that the service is up",
    response_model=Health,
    responses=error_responses("service-unavailable"),
)
def health(database: DatabaseDep, settings: SettingsDep) -> Health:
    if not (part := _database(database)).ready:
        raise HbenchError("service-unavailable", f"the database {part.detail}")
    return Health(status="ok", version=__version__, mode=settings.mode)


class Part(BaseModel):
    name: Literal["database", "blob store", "data repository", "site"]
    ready: bool
    detail: str


class Readiness(BaseModel):
    status: Literal["ready"]
    parts: list[Part]


@router.get(
    "/ready",
    summary="Check that the service can serve everything",
    description="Each part the service needs, checked now: the database answers, the blob "
    "store answers, the site under `/site/` is built (its first build after a fresh start "
    "has finished), and (where this process writes the data repository) its checkout has a "
    "commit. 503 `service-unavailable` names the parts that failed.",
    response_model=Readiness,
    responses=error_responses("service-unavailable"),
)
def ready(database: DatabaseDep, blobs: BlobStoreDep, settings: SettingsDep) -> Readiness:
    parts = [_database(database), _blob_store(blobs), _site(settings), _data_repository(settings)]
    failed = [p for p in parts if not p.ready]
    if failed:
        where = "; ".join(f"{p.name}: {p.detail}" for p in failed)
        raise HbenchError("service-unavailable", f"not ready: {where}")
    return Readiness(status="ready", parts=parts)


def _database(database: Database) -> Part:
    try:
        database.ping()
    except SQLAlchemyError:
        return Part(name="database", ready=False, detail="does not answer")
    return Part(name="database", ready=True, detail="answers")


def _blob_store(blobs: BlobStore) -> Part:
    try:
        blobs.exists(READY_PROBE)
    except Exception as error:  # any failure of the store's client is "not ready"
        detail = f"does not answer ({type(error).__name__})"
        return Part(name="blob store", ready=False, detail=detail)
    return Part(name="blob store", ready=True, detail="answers")


def _data_repository(settings: Settings) -> Part:
    if not settings.writer_enabled:
        return Part(name="data repository", ready=True, detail="not written by this process")
    checkout = settings.data_repository_dir
    if not (checkout / ".git").exists():
        return Part(name="data repository", ready=False, detail="the checkout is not made yet")
    found = Git(checkout / ".git", checkout).run("rev-parse", "--verify", "HEAD", check=False)
    if found.code != 0:
        return Part(name="data repository", ready=False, detail="the checkout has no commit")
    return Part(name="data repository", ready=True, detail=f"at {found.stdout.strip()[:12]}")


def _site(settings: Settings) -> Part:
    # Built by this process's writer or follower, or a supervisor's writer: until its first
    # build has finished every page under /site/ answers 404.
    if not is_built(settings.site_dir):
        return Part(name="site", ready=False, detail="its first build has not finished")
    return Part(name="site", ready=True, detail="built")


READY_PROBE = "ready-probe"
"""A key no blob has: asking whether it exists is a round trip to the store."""


def wait_until_healthy(
    url: str, process: subprocess.Popen[bytes], seconds: float
) -> Literal["up", "exited", "late"]:
    """Poll the service `process` started at `url` until `GET /api/health` answers 200:
    `up` then, `exited` if the process ended first, `late` after `seconds`."""
    deadline = time.monotonic() + seconds
    # One client for every poll: each new one loads the TLS roots, some 25 ms of CPU taken
    # from the service starting beside it, ten times a second.
    with httpx.Client(timeout=2) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return "exited"
            try:
                if client.get(f"{url}/api/health").status_code == 200:
                    return "up"
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    return "late"
