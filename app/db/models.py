"""The database's tables: accounts, API tokens, issued runs, private jobs, the outbox, and
the GitHub App's webhook deliveries, used OIDC tokens and installations.

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
    TAKEN_DOWN = "taken_down"  # by a maintainer, for a reason the audit log gives


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012  # SQLAlchemy reads this class attribute as is
        datetime: UTCDateTime(),
        uuid.UUID: Uuid(),
        dict[str, Any]: JSONDocument,
        list[dict[str, Any]]: JSONDocument,
        list[str]: JSONDocument,
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
        # A sharded run's shards, by their run.
        Index("ix_issued_runs_parent", "parent_id"),
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
    # When its count on its board was enqueued (uploaded, expired or abandoned), so the
    # maintenance task counts each run once (app/publish/maintenance.py).
    counted_at: Mapped[datetime | None]
    # A sharded run (app/runs/shards.py): the run itself has `shard_count` and no parent;
    # each of its shards names it as `parent_id`, with its place (0-based) and the count.
    # Only the run itself counts on the board; a shard is never counted on its own.
    parent_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("issued_runs.id"))
    shard_index: Mapped[int | None]
    shard_count: Mapped[int | None]


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
    # When a maintainer took the job's run off its board (app/reports/), whatever its status.
    taken_down_at: Mapped[datetime | None]
    # When retention hid an unpublished job's files (app/bench/retention.py).
    files_hidden_at: Mapped[datetime | None]
    # Whether the service graded its recorded outputs again, and what it found.
    regrade: Mapped[Regrade | None] = relationship(lazy="selectin", passive_deletes=True)


class TrialPrint(Base):
    """One trial of a job that counted (published, or uploaded as an issued run), as a
    digest of its task, start, finish and token counts: how a copy of that job with its
    id changed is recognised (`bench-published-before`) without reading every job."""

    __tablename__ = "trial_prints"
    __table_args__ = (Index("ix_trial_prints_digest", "digest"),)

    job_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True
    )
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    task: Mapped[str] = mapped_column(String(255))


class RegradeStatus(enum.StrEnum):
    QUEUED = "queued"  # waits for the regrade worker
    RUNNING = "running"  # a worker claimed it at `started_at`
    AGREED = "agreed"  # the verifiers gave every trial the reward the job records
    DISAGREED = "disagreed"  # some trial's reward differs: `regrade-mismatch`
    NOT_REGRADABLE = "not_regradable"  # why is in `note`
    FAILED = "failed"  # the regrade could not run, `max attempts` times; why is in `note`


class Regrade(Base):
    """The regrade of one uploaded job: the service runs its tasks' verifiers again on the
    recorded outputs (app/regrade/). Made with the job's row, in the same transaction; a
    worker process claims queued ones in order (its own queue, apart from requests)."""

    __tablename__ = "regrades"

    job_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True
    )
    status: Mapped[RegradeStatus] = mapped_column(status_enum(RegradeStatus, "regrade_status"))
    note: Mapped[str | None] = mapped_column(Text)
    # Per trial whose reward differed: task, trial, the reward recorded and the one regraded.
    differences: Mapped[list[dict[str, Any]]] = mapped_column(default=list)
    attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    queued_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]


# The worker's query, "the oldest regrades still queued", reads only this small index.
Index(
    "ix_regrades_queued",
    Regrade.queued_at,
    postgresql_where=Regrade.status == RegradeStatus.QUEUED,
    sqlite_where=Regrade.status == RegradeStatus.QUEUED,
)


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


# The GitHub App (app/github/): webhook deliveries taken in, OIDC tokens used, and where
# the App is installed.


class WebhookDelivery(Base):
    """A webhook delivery already taken in, by its `X-GitHub-Delivery` id: a redelivery
    carries the same id, and is ignored. Kept at least a week (GitHub redelivers only
    deliveries of the past 3 days)."""

    __tablename__ = "github_deliveries"
    __table_args__ = (Index("ix_github_deliveries_received_at", "received_at"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    event: Mapped[str] = mapped_column(String(64))
    received_at: Mapped[datetime] = mapped_column(default=utcnow)


class UsedOidcToken(Base):
    """A GitHub Actions OIDC token already used, by its `jti`, kept until it expires:
    each token issues one run, however often it is presented in its lifetime."""

    __tablename__ = "oidc_used_tokens"
    __table_args__ = (Index("ix_oidc_used_tokens_expires_at", "expires_at"),)

    jti: Mapped[str] = mapped_column(String(255), primary_key=True)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime] = mapped_column(default=utcnow)


class GitHubCommandAction(Base):
    """A job action a comment command took, by the delivery that carried it: GitHub
    redelivers with the same id, and a redelivery answers with the reply kept here
    instead of acting again. Kept as long as deliveries are (a week)."""

    __tablename__ = "github_command_actions"
    __table_args__ = (Index("ix_github_command_actions_acted_at", "acted_at"),)

    delivery_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    action: Mapped[str] = mapped_column(String(16), primary_key=True)
    job_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    reply: Mapped[str] = mapped_column(Text)
    acted_at: Mapped[datetime] = mapped_column(default=utcnow)


class GitHubInstallation(Base):
    """An installation of the App on a user's or an organisation's account, as its
    `installation` webhook events told. Accounts are matched by their numeric id, which
    survives renames and can't be taken over by whoever registers a freed login."""

    __tablename__ = "github_installations"
    __table_args__ = (Index("ix_github_installations_account_id", "account_id"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    account_id: Mapped[int] = mapped_column(BigInteger)
    account_login: Mapped[str] = mapped_column(String(LOGIN_LENGTH))
    account_type: Mapped[str] = mapped_column(String(32))
    repository_selection: Mapped[str] = mapped_column(String(16))  # "all" or "selected"
    installed_by_id: Mapped[int | None] = mapped_column(BigInteger)
    installed_by_login: Mapped[str | None] = mapped_column(String(LOGIN_LENGTH))
    suspended_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    repositories: Mapped[list[GitHubInstallationRepository]] = relationship(
        cascade="all, delete-orphan", passive_deletes=True, lazy="selectin"
    )


class GitHubInstallationRepository(Base):
    """A repository an installation with `selected` repositories covers."""

    __tablename__ = "github_install_repos"
    __table_args__ = (Index("ix_github_install_repos_repository_id", "repository_id"),)

    installation_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("github_installations.id", ondelete="CASCADE"), primary_key=True
    )
    repository_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    full_name: Mapped[str] = mapped_column(String(140))


# Reports, the runs API's records and rate-limit windows (app/reports/, app/v1/).


class ReportStatus(enum.StrEnum):
    OPEN = "open"
    DISMISSED = "dismissed"
    TAKEN_DOWN = "taken_down"


class Report(Base):
    """A signed-in person's report of a public run, for the maintainers' queue. Private:
    who reported is never written to the data repository or to a log line."""

    __tablename__ = "reports"
    __table_args__ = (Index("ix_reports_status_created", "status", "created_at"),)

    # The report's number, which the reporter is told.
    id: Mapped[int] = mapped_column(BigIntegerKey, primary_key=True, autoincrement=True)
    reporter_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id"))
    entry: Mapped[str | None] = mapped_column(String(100))  # as the board shows it
    run: Mapped[str | None] = mapped_column(String(64))  # the run number as given
    job_ref: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("jobs.id"))
    board: Mapped[str | None] = mapped_column(String(200))
    message: Mapped[str] = mapped_column(Text)
    status: Mapped[ReportStatus] = mapped_column(
        status_enum(ReportStatus, "report_status"), default=ReportStatus.OPEN
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    resolved_at: Mapped[datetime | None]
    resolved_by_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("accounts.id"))
    reason: Mapped[str | None] = mapped_column(String(32))
    note: Mapped[str | None] = mapped_column(String(280))


class ReproducedRunStatus(enum.StrEnum):
    UPLOADED = "uploaded"
    VALIDATED = "validated"
    REJECTED = "rejected"


class ReproducedRun(Base):
    """A run record of the runs API (`/v1/runs`): a pushed summary, or a run published on
    a board (then `validated`, and linked to its job so it is recorded once)."""

    __tablename__ = "reproduced_runs"
    __table_args__ = (
        Index("ix_reproduced_runs_created", "created_at"),
        Index("ix_reproduced_runs_benchmark_model", "benchmark_slug", "model_slug"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    benchmark_slug: Mapped[str] = mapped_column(String(100))
    model: Mapped[str] = mapped_column(String(200))
    model_slug: Mapped[str | None] = mapped_column(String(100))
    harness: Mapped[str] = mapped_column(String(100))
    task_count: Mapped[int]
    n_attempts: Mapped[int]
    score: Mapped[float]
    metric: Mapped[str] = mapped_column(String(50))
    tokens_used: Mapped[int | None] = mapped_column(BigInteger)
    cost_usd: Mapped[float | None]
    harbor_version: Mapped[str | None] = mapped_column(String(50))
    cli_version: Mapped[str | None] = mapped_column(String(50))
    results_hash: Mapped[str | None] = mapped_column(String(64))
    task_rewards: Mapped[list[dict[str, Any]] | None]
    notes: Mapped[str | None] = mapped_column(Text)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("accounts.id"))
    status: Mapped[ReproducedRunStatus] = mapped_column(
        status_enum(ReproducedRunStatus, "reproduced_run_status"),
        default=ReproducedRunStatus.UPLOADED,
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    job_ref: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("jobs.id"), unique=True)
    # What the run proves (registry/evidence.py): its evidence levels, for a run published
    # on a board; None for a pushed summary, which nothing checked.
    evidence: Mapped[list[str] | None]


class RateLimitHit(Base):
    """One counted request in a rate-limit window: its bucket (an address's digest, or an
    account) and when. A bucket's window is its hits of the last period; older ones are
    pruned as the bucket is checked, so the table stays small."""

    __tablename__ = "rate_limit_hits"
    __table_args__ = (Index("ix_rate_limit_hits_bucket_at", "bucket", "at"),)

    id: Mapped[int] = mapped_column(BigIntegerKey, primary_key=True, autoincrement=True)
    bucket: Mapped[str] = mapped_column(String(100))
    at: Mapped[datetime]


class UploadSession(Base):
    """A job being uploaded in parts (app/bench/parts.py): what its sender declared, who
    sends it, and the digest of each part received so far, in order. Its parts live in
    the blob store under `upload-parts/<id>/` until it completes, is aborted or expires."""

    __tablename__ = "upload_sessions"
    __table_args__ = (
        Index("ix_upload_sessions_owner_status", "owner_id", "status"),
        Index("ix_upload_sessions_expires", "expires_at"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    owner_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("accounts.id"))
    # The issued run its run token uploads it as; None for an upload with an API token.
    run_id: Mapped[uuid.UUID | None]
    total_bytes: Mapped[int] = mapped_column(BigInteger)
    part_bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    # How many parts are in, and each one's sha256: a part is taken only as the next one,
    # by a conditional update on `received`, so two senders can't interleave.
    received: Mapped[int] = mapped_column(Integer, default=0)
    part_digests: Mapped[list[str]]
    # open -> completing -> completed (the job stored as `job_ref`).
    status: Mapped[str] = mapped_column(String(16), default="open")
    job_ref: Mapped[uuid.UUID | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
