"""Account settings (`/settings`): create an API token (its text shown once), list your
tokens, revoke one."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, status
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError

from app.auth import service
from app.auth.schemas import TokenCreate
from app.errors import validation_problems
from app.web.pages import Page, PageDep
from hbench.errors import HbenchError

router = APIRouter(include_in_schema=False)


def settings_context(page: Page, **values: Any) -> dict[str, Any]:
    tokens = service.list_api_tokens(page.session, page.signed_in.account)
    return {"title": "Account settings", "tokens": tokens, "created": None, **values}


@router.get("/settings", response_class=HTMLResponse)
def account_settings(page: PageDep, done: str | None = None) -> HTMLResponse:
    revoked = "The API token is revoked: it stops working at once." if done == "revoked" else None
    return page.render("settings.html", **settings_context(page, notice=revoked))


@router.post("/settings/tokens", response_class=HTMLResponse)
async def create_token(page: PageDep) -> HTMLResponse:
    fields = await page.form()
    caller = page.signed_in
    try:
        if caller.via == "token":
            raise HbenchError(
                "session-required",
                "an API token can't create API tokens; sign in on the site to make one",
            )
        try:
            body = TokenCreate(name=fields.get("name", ""))
        except ValidationError as error:
            raise HbenchError.from_problems(validation_problems(error.errors())) from None
        row, token = service.create_api_token(page.session, caller.account, body.name)
    except HbenchError as error:
        return page.refused(error, "settings.html", **settings_context(page, notice=None))
    return page.render("settings.html", **settings_context(page, notice=None, created=(row, token)))


@router.post("/settings/tokens/{token_id}/revoke", response_class=HTMLResponse)
async def revoke_token(page: PageDep, token_id: uuid.UUID) -> Any:
    await page.form()
    try:
        service.revoke_api_token(page.session, page.signed_in.account, token_id)
    except HbenchError as error:
        return page.refused(error, "settings.html", **settings_context(page, notice=None))
    return RedirectResponse("/settings?done=revoked", status.HTTP_303_SEE_OTHER)
