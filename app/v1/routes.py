"""The runs API (`../shared/spec/benchhub-skill.md`): `POST /v1/runs`, `GET /v1/runs`,
`GET /v1/runs/{id}` and `GET /v1/bench/reproduced`, described at `/v1/meta/openapi.json`.

Anyone may push; an API token (`authorization: Bearer hpg_…`) attributes the run to its
account and raises the limit. Refusals use the skill's error shape (`app.errors.respond`).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Security, status
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials

from app.auth.dependencies import bearer
from app.auth.service import authenticate_api_token
from app.clock import ClockDep
from app.db.models import Account
from app.dependencies import SessionDep, SettingsDep
from app.errors import respond
from app.registry import RegistryDep
from app.settings import Settings
from app.site.serve import SITE_PATH
from app.v1 import service
from app.v1.aggregates import ReproducedCache, aggregate
from app.v1.policy import PushLimits, model_filter
from app.v1.schemas import (
    Camel,
    ReproducedList,
    RunCreated,
    RunList,
    RunRecord,
    RunSubmission,
)
from sitebuild import page as site_page

router = APIRouter(prefix="/v1", tags=["runs API"])
MAX_PAGE = 1_000_000
"""The last page a listing may ask for: its offset must fit the database's integers."""


class SkillError(Camel):
    """The runs API's error: `{"error": {"code", "message", "details", "type"}}`."""

    error: dict[str, object]


def responses(*codes: str) -> dict[int | str, dict[str, object]]:
    """OpenAPI `responses`: every refusal and failure in the skill's shape. (A `4XX` entry
    also keeps FastAPI from documenting a 422 this API never sends: its validation errors
    are 400s.)"""
    refused = ", ".join(f"`{code}`" for code in (*codes, "validation_error"))
    return {
        "4XX": {"model": SkillError, "description": f"Refused: {refused}"},
        "5XX": {"model": SkillError, "description": "Failed: `internal-error`"},
    }


def get_reproduced_cache(request: Request) -> ReproducedCache:
    """This app's cache of reproduced aggregates, made on first use."""
    cache = getattr(request.app.state, "reproduced_cache", None)
    if not isinstance(cache, ReproducedCache):
        cache = request.app.state.reproduced_cache = ReproducedCache()
    return cache


def run_url(request: Request, settings: Settings, run: RunRecord) -> str:
    """A pushed run's page on the site the service serves (there within the writer's
    round); a run published on a board, its record here."""
    base = settings.public_url or str(request.base_url).rstrip("/")
    if run.status == "uploaded":
        return f"{base}{SITE_PATH}/{site_page.pushed_run(run.id)}"
    return f"{base}/v1/runs/{run.id}"


@router.post(
    "/runs",
    summary="Push a run summary",
    description="Stores a `RunSubmission` as an `uploaded` run. Anonymous pushes count "
    "toward the address's daily limit; with an API token, toward the account's.",
    status_code=status.HTTP_201_CREATED,
    response_model=RunCreated,
    response_model_by_alias=True,
    responses=responses("token-invalid", "token-revoked", "account-denied", "rate_limited"),
)
def push_run(
    body: RunSubmission,
    request: Request,
    *,
    session: SessionDep,
    settings: SettingsDep,
    registry: RegistryDep,
    clock: ClockDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> RunCreated | JSONResponse:
    account: Account | None = None
    if credentials is not None:
        account = authenticate_api_token(session, credentials.credentials).account
    limits = PushLimits(settings.runs_per_ip_per_day, settings.runs_per_user_per_day)
    try:
        row = service.push_run(
            session, body, registry=registry, account=account,
            address=request.client.host if request.client else None, limits=limits, now=clock(),
        )  # fmt: skip
    except service.RateLimitedError as refused:
        answer = respond(request, refused.problems)
        answer.headers["retry-after"] = str(refused.retry_after)
        return answer
    (data,) = service.records(session, [row])
    return RunCreated(data=data, url=run_url(request, settings, data))


@router.get(
    "/runs",
    summary="List runs, newest first",
    response_model=RunList,
    response_model_by_alias=True,
    responses=responses(),
)
def list_runs(
    session: SessionDep,
    registry: RegistryDep,
    *,
    benchmark: str | None = None,
    model: str | None = None,
    harness: str | None = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
) -> RunList:
    # A model is asked for as it was pushed, in any spelling of the one slug.
    where = service.RunFilter(benchmark, model_filter(registry, model), harness)
    rows, pagination = service.list_runs(session, where, page=page, limit=limit)
    return RunList(data=service.records(session, rows), pagination=pagination)


@router.get(
    "/runs/{run_id}",
    summary="One run",
    response_model=RunCreated,
    response_model_by_alias=True,
    responses=responses("not_found"),
)
def get_run(
    run_id: str, request: Request, session: SessionDep, settings: SettingsDep
) -> RunCreated:
    (data,) = service.records(session, [service.get_run(session, run_id)])
    return RunCreated(data=data, url=run_url(request, settings, data))


@router.get(
    "/bench/reproduced",
    summary="Reproduced scores per benchmark, model and harness (cached 60 s)",
    response_model=ReproducedList,
    response_model_by_alias=True,
    responses=responses(),
)
def reproduced(
    session: SessionDep,
    clock: ClockDep,
    cache: Annotated[ReproducedCache, Depends(get_reproduced_cache)],
    registry: RegistryDep,
    *,
    benchmark: str | None = None,
    model: str | None = None,
) -> ReproducedList:
    where = service.RunFilter(benchmark, model_filter(registry, model))
    return cache.get(
        (benchmark, where.model), clock(), lambda: aggregate(service.scored_runs(session, where))
    )


@router.get("/meta/openapi.json", include_in_schema=False)
def openapi_document(request: Request) -> JSONResponse:
    """The service's OpenAPI document (also at `/openapi.json`), where the skill's agents
    look for the runs API's."""
    return JSONResponse(request.app.openapi())
