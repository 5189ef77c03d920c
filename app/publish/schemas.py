"""What the publish, withdraw and delete endpoints take and answer."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.errors import ErrorEnvelope


class PublishRequest(BaseModel):
    """Optional: the board, when the job fits several."""

    model_config = ConfigDict(extra="forbid")

    board: str | None = Field(
        default=None,
        max_length=200,
        description="The board's slug; needed only when the job fits several.",
        examples=["hbench-demo"],
    )


class DeleteRequest(BaseModel):
    """The job's name, typed again: deleting can't be undone."""

    model_config = ConfigDict(extra="forbid")

    confirm: str = Field(max_length=255, examples=["oracle-k2"])


class PublishedJob(BaseModel):
    """A job just published: where its score went."""

    id: uuid.UUID
    status: str = Field(examples=["published"])
    board: str
    entry: str = Field(examples=["oracle-a3f9c1"])
    owner: str = Field(description="The GitHub handle the board shows.")
    run_id: str = Field(description="The run's id on its board (the job's id).")
    issued: bool
    opened_board: bool = Field(description="Whether publishing opened a new board.")
    published_at: datetime
    download: str = Field(description="Where anyone can download the redacted job.")


class WithdrawnJob(BaseModel):
    id: uuid.UUID
    status: str = Field(examples=["withdrawn"])
    board: str | None
    run_id: str
    withdrawn_at: datetime | None


class DeletedJob(BaseModel):
    id: uuid.UUID
    status: str = Field(examples=["deleted"])
    deleted_at: datetime | None
    files_purged_by: datetime | None = Field(
        description="When the job's files leave storage at the latest (docs/retention.md)."
    )
    score_stays_on: str | None = Field(
        default=None,
        description="The board the job's score stays on, when it was published and neither "
        "withdrawn nor taken down: deleting leaves it there.",
        examples=["hbench-demo"],
    )


class BoardChoiceEnvelope(ErrorEnvelope):
    """`publish-board-choice`: the error envelope, and the boards the job fits."""

    boards: list[str] = Field(examples=[["hbench-demo", "hbench-demo-b"]])
