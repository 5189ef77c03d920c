"""`GET /api/health`: whether the service is up and can reach its database."""

from __future__ import annotations

import subprocess
import time
from typing import Literal

import httpx
from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy.exc import SQLAlchemyError

from app.dependencies import DatabaseDep, SettingsDep
from app.errors import error_responses
from app.settings import Mode
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
    try:
        database.ping()
    except SQLAlchemyError:
        raise HbenchError("service-unavailable", "the database does not answer") from None
    return Health(status="ok", version=__version__, mode=settings.mode)


def wait_until_healthy(
    url: str, process: subprocess.Popen[bytes], seconds: float
) -> Literal["up", "exited", "late"]:
    """Poll the service `process` started at `url` until `GET /api/health` answers 200:
    `up` then, `exited` if the process ended first, `late` after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return "exited"
        try:
            if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                return "up"
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    return "late"
