"""The bodies the account and token endpoints take and answer with."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

TokenName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: TokenName = Field(description="What the token is for, so you can tell it apart.")


class TokenInfo(BaseModel):
    """A token as lists show it: never its text, only its first characters."""

    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    name: str
    prefix: str = Field(description="The token's first characters, such as `hpg_Ab3dE9xQ`.")
    created_at: datetime
    last_used_at: datetime | None = Field(description="Last use, to the minute.")


class TokenCreated(TokenInfo):
    token: str = Field(description="The token itself, shown in this answer only.")


class TokenList(BaseModel):
    tokens: list[TokenInfo] = Field(description="Your tokens that still work, newest first.")


class Me(BaseModel):
    """The signed-in account."""

    id: uuid.UUID
    login: str
    github_id: int | None
    is_maintainer: bool
    created_at: datetime
    signed_in_with: Literal["token", "session", "local"] = Field(
        description="`token` for an API token, `session` for GitHub sign-in, `local` for the "
        "local user in local mode."
    )
