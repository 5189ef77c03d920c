"""The bodies of `/api/reports` and the maintainers' `/api/admin/…` endpoints.

Lengths a person is told about (a report's 10 to 2,000 characters, a note's 280) are
checked by `policy`, with codes of their own; the bounds here only keep bodies small.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.db.models import ReportStatus
from app.settings import LOGIN_MAX_LENGTH, LOGIN_PATTERN
from registry.naming import shown_name, shown_prose


class ReportRequest(BaseModel):
    """A report of a public run: its entry, its run number, or both, and what's wrong."""

    model_config = ConfigDict(extra="forbid")

    entry: str | None = Field(
        default=None, max_length=100, description="The entry's name as its board shows it."
    )
    run: str | None = Field(default=None, max_length=64, description="The run's number (id).")
    message: str = Field(max_length=20_000, description="What's wrong: 10 to 2,000 characters.")

    @field_validator("entry", "run")
    @classmethod
    def _names_show(cls, name: str | None) -> str | None:
        # No entry or run is named with a character a page can't show (nor can a database
        # hold a NUL): such a name names nothing, and is refused before any lookup.
        return shown_name(name) if name is not None else None

    @field_validator("message")
    @classmethod
    def _message_shows(cls, message: str) -> str | None:
        return shown_prose(message)


class ReportCreated(BaseModel):
    number: int = Field(description="The report's number.")
    status: ReportStatus


class ReportInfo(BaseModel):
    """A report as maintainers see it. Only here is the reporter named."""

    number: int
    status: ReportStatus
    entry: str | None
    run: str | None
    board: str | None
    message: str
    reporter: str
    created_at: datetime
    resolved_at: datetime | None
    reason: str | None
    note: str | None


class ReportList(BaseModel):
    reports: list[ReportInfo]


class TakeDownRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(
        max_length=64,
        examples=["score-cannot-be-right"],
        description="`score-cannot-be-right`, `breaks-terms`, `imitates-known-dataset` or "
        "`owner-request`.",
    )
    note: str = Field(max_length=2000, description="A short note for the audit log (280).")
    run: str | None = Field(
        default=None,
        max_length=64,
        description="The run to take down, when the report names an entry with several.",
    )

    @field_validator("reason", "run")
    @classmethod
    def _names_show(cls, name: str | None) -> str | None:
        return shown_name(name) if name is not None else None

    @field_validator("note")
    @classmethod
    def _note_shows(cls, note: str) -> str | None:
        return shown_prose(note)


class TakenDown(BaseModel):
    board: str | None = Field(description="The board the run was on; null for a pushed run.")
    run_id: str
    reason: str
    note: str
    reports_closed: list[int]


class DenyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    login: str = Field(pattern=LOGIN_PATTERN, max_length=LOGIN_MAX_LENGTH)


class DenyList(BaseModel):
    logins: list[str]
