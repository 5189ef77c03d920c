"""The database's tables: accounts, API tokens, issued runs, private jobs and the outbox.

The database holds private state only (DESIGN.md, "The three stores"); public state lives
in the data repository, written through the outbox. The same models run on SQLite and
PostgreSQL; `app/migrations/` creates them, and a test holds the two to each other.
"""

from __future__ import annotations

import enum
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Dialect,
    Enum,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    Uuid,
    false,
    func,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import DateTime, TypeDecorator

# Named constraints keep migrations reproducible, and let SQLite's batch mode (which
# rebuilds a table to alter it) find them again.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

TOKEN_HASH_LENGTH = 64  # hex SHA-256
LOGIN_LENGTH = 39  # GitHub's longest login


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on both databases.

    SQLite keeps no time zone, so values are stored as naive UTC there and come back
    marked UTC; naive values are refused on the way in, since their zone is a guess.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("timestamps must carry a time zone; use datetime.now(UTC)")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# JSONB on PostgreSQL: stored parsed, so later steps can index into summaries and specs.
JSONDocument = JSON().with_variant(JSONB(), "postgresql")
# SQLite only auto-increments a column declared exactly INTEGER PRIMARY KEY.
BigIntegerKey = BigInteger().with_variant(Integer(), "sqlite")


def status_enum(cls: type[enum.StrEnum], name: str) -> Enum:
    """A status column stored as its text value, held to its values by a CHECK constraint."""
    return Enum(
        cls,
        name=name,
        native_enum=False,
        create_constraint=True,
        length=16,
        values_callable=lambda members: [member.value for member in members],
        validate_strings=True,
    )


class IssuedRunStatus(enum.StrEnum):
    ISSUED = "issued"
    UPLOADED = "uploaded"
    EXPIRED = "expired"
    ABANDONED = "abandoned"


class JobStatus(enum.StrEnum):
    PRIVATE = "private"
    PUBLISHED = "published"
    WITHDRAWN = "withdrawn"
    DELETED = "deleted"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012  # SQLAlchemy reads this class attribute as is
        datetime: UTCDateTime(),
        uuid.UUID: Uuid(),
        dict[str, Any]: JSONDocument,
        list[dict[str, Any]]: JSONDocument,
    }


class Account(Base):
    """A person: the local user, or someone signed in with GitHub."""

    __tablename__ = "accounts"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    login: Mapped[str] = mapped_column(String(LOGIN_LENGTH))
    # GitHub's numeric id is the stable identity: logins can be renamed and reused.
    github_id: Mapped[int | None] = mapped_column(BigInteger, unique=True)
    is_maintainer: Mapped[bool] = mapped_column(default=False, server_default=false())
    is_denied: Mapped[bool] = mapped_column(default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


# GitHub logins ignore case, so `Alice` and `alice` must be one account.
Index("ux_accounts_login", func.lower(Account.login), unique=True)


class ApiToken(Base):
    """An `hpg_…` token, kept as the SHA-256 of its text; the text is shown once."""

    __tablename__ = "api_tokens"
    __table_args__ = (Index("ix_api_tokens_account_created", "account_id", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(TOKEN_HASH_LENGTH), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]

    account: Mapped[Account] = relationship(lazy="joined")


class IssuedRun(Base):
    """A run the service issued: its board, entry and spec, and its one-use run token."""

    __tablename__ = "issued_runs"
    __table_args__ = (
        # "Your issued runs, newest first".
        Index("ix_issued_runs_account_issued", "account_id", "issued_at"),
        # A board's limits: runs issued to one account lately, and those awaiting upload.
        Index("ix_issued_runs_account_board_status", "account_id", "board", "status"),
        # Honest counting: how many of a board's issued runs are public.
        Index("ix_issued_runs_board_status", "board", "status"),
        CheckConstraint("expires_at > issued_at", name="expires_after_issue"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    account_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id"))
    board: Mapped[str] = mapped_column(String(200))
    entry: Mapped[str] = mapped_column(String(100))
    spec: Mapped[dict[str, Any]]
    spec_digest: Mapped[str] = mapped_column(String(80))
    token_hash: Mapped[str] = mapped_column(String(TOKEN_HASH_LENGTH), unique=True)
    status: Mapped[IssuedRunStatus] = mapped_column(
        status_enum(IssuedRunStatus, "issued_run_status"), default=IssuedRunStatus.ISSUED
    )
    issued_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    # The verified GitHub Actions OIDC claims, for a run issued from a workflow.
    provenance: Mapped[dict[str, Any] | None]


class Job(Base):
    """An uploaded job: kept privately until its owner publishes, withdraws or deletes it."""

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_owner_uploaded", "owner_id", "uploaded_at"),
        # Recognising a re-upload (`bench-published-before`) looks jobs up by Harbor's id,
        # deleted ones included; the same job may exist more than once, so not unique.
        Index("ix_jobs_job_id", "job_id"),
        Index("ix_jobs_board_status", "board", "status"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id"))
    job_id: Mapped[uuid.UUID]  # Harbor's `result.json` id, kept across resumes
    job_name: Mapped[str] = mapped_column(String(255))
    status: Mapped[JobStatus] = mapped_column(
        status_enum(JobStatus, "job_status"), default=JobStatus.PRIVATE
    )
    summary: Mapped[dict[str, Any]]
    checks: Mapped[list[dict[str, Any]]]
    redactions: Mapped[dict[str, Any]]  # file path -> values replaced with [REDACTED]
    # What survives deletion: Harbor's job id and each trial's task, start, finish and
    # token counts, so a re-upload of a published job is recognised.
    fingerprint: Mapped[dict[str, Any] | None]
    blob_key: Mapped[str | None] = mapped_column(String(512))
    # One accepted upload per issued run: the unique constraint is what makes a run
    # token single-use, even when two uploads race (the loser's insert fails).
    issued_run_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("issued_runs.id"), unique=True
    )
    board: Mapped[str | None] = mapped_column(String(200))
    entry: Mapped[str | None] = mapped_column(String(100))
    uploaded_at: Mapped[datetime] = mapped_column(default=utcnow)
    published_at: Mapped[datetime | None]
    withdrawn_at: Mapped[datetime | None]
    deleted_at: Mapped[datetime | None]


class OutboxEntry(Base):
    """A write to the data repository, recorded in the same transaction as its cause.

    The data-repo writer applies entries in id order and marks them applied; a failed
    attempt is counted and retried, so a crash between the two stores loses nothing.
    """

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(BigIntegerKey, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    applied_at: Mapped[datetime | None]
    attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    last_error: Mapped[str | None] = mapped_column(Text)


# The writer's query, "the oldest entries not yet applied", reads only this small index.
Index(
    "ix_outbox_pending",
    OutboxEntry.id,
    postgresql_where=OutboxEntry.applied_at.is_(None),
    sqlite_where=OutboxEntry.applied_at.is_(None),
)
