"""The account and API-token endpoints: `/api/me` and `/api/tokens`."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Response, status

from app.auth import service
from app.auth.dependencies import CurrentAccount, CurrentCaller, SessionAccount
from app.auth.schemas import Me, TokenCreate, TokenCreated, TokenInfo, TokenList
from app.dependencies import SessionDep
from app.errors import error_responses
from hbench.codes import Area

router = APIRouter(prefix="/api", tags=["accounts"])


@router.get(
    "/me",
    summary="Who you are signed in as",
    response_model=Me,
    responses=error_responses(Area.AUTH),
)
def me(caller: CurrentCaller) -> Me:
    account = caller.account
    return Me(
        id=account.id,
        login=account.login,
        github_id=account.github_id,
        is_maintainer=account.is_maintainer,
        created_at=account.created_at,
        signed_in_with=caller.via,
    )


@router.post(
    "/tokens",
    summary="Create an API token (shown once)",
    description="Answers with the token's text, which is shown in this answer only: "
    "the service keeps just its hash. API tokens can't create tokens (`session-required`).",
    status_code=status.HTTP_201_CREATED,
    response_model=TokenCreated,
    responses=error_responses(Area.AUTH, "session-required", "request-invalid"),
)
def create_token(
    body: TokenCreate, account: SessionAccount, session: SessionDep, response: Response
) -> TokenCreated:
    row, token = service.create_api_token(session, account, body.name)
    # The one answer that carries the secret must not be kept by any cache on the way.
    response.headers["cache-control"] = "no-store"
    return TokenCreated(**TokenInfo.model_validate(row).model_dump(), token=token)


@router.get(
    "/tokens",
    summary="List your API tokens",
    response_model=TokenList,
    responses=error_responses(Area.AUTH),
)
def list_tokens(account: CurrentAccount, session: SessionDep) -> TokenList:
    rows = service.list_api_tokens(session, account)
    return TokenList(tokens=[TokenInfo.model_validate(row) for row in rows])


@router.delete(
    "/tokens/{token_id}",
    summary="Revoke an API token",
    description="The token stops working at once. Revoking it again changes nothing.",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    responses=error_responses(Area.AUTH, "token-not-found", "request-invalid"),
)
def revoke_token(token_id: uuid.UUID, account: CurrentAccount, session: SessionDep) -> None:
    service.revoke_api_token(session, account, token_id)
