"""`GET /api/health`: whether the service is up and can reach its database."""

from __future__ import annotations

from typing import Literal

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
