"""`JobActions` over publishing (`app.publish.service`): what `/hbench publish`, `withdraw`
and `delete` do once the comment's author was found allowed to act on the job.

Each action runs as the job's owner account, in one transaction with the public changes
it enqueues, as the Your-bench endpoints do. It is recorded under the comment's delivery
id in that same transaction (`GitHubCommandAction`): GitHub redelivers with the same id,
and a redelivered command answers with the reply it got the first time, acting no more.
A refused action rolls back and records nothing, so asking again is asking anew.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.bench.retention import policy_of
from app.blobs import BlobStore
from app.clock import Clock
from app.db.models import Account, GitHubCommandAction, Job
from app.db.session import Database
from app.publish import service
from app.publish.choice import BoardChoiceError
from app.settings import Settings
from hbench.errors import HbenchError
from registry.loader import Registry

if TYPE_CHECKING:
    from app.github.jobs import ActionRequest

RETENTION = timedelta(days=7)  # as long as delivery ids are kept (app/github/webhooks.py)

Act = Callable[[Session, Account, Job, datetime], str]


class PublishingActions:
    """Publish, withdraw and delete jobs from comments, through the publishing service."""

    def __init__(
        self,
        *,
        database: Database,
        registry: Registry,
        blobs: BlobStore,
        settings: Settings,
        clock: Clock,
    ) -> None:
        self.database = database
        self.registry = registry
        self.blobs = blobs
        self.settings = settings
        self.clock = clock
        self.policy = policy_of(settings)

    async def publish(self, request: ActionRequest) -> str:
        def act(session: Session, owner: Account, row: Job, now: datetime) -> str:
            try:
                done = service.publish(
                    session, owner, row.id, board=request.board,
                    registry=self.registry, policy=self.policy, now=now,
                )  # fmt: skip
            except BoardChoiceError as choice:
                boards = ", ".join(f"`{board}`" for board in choice.boards)
                raise HbenchError(
                    choice.code,
                    f"`{row.job_name}` fits {len(choice.boards)} boards ({boards}); name one: "
                    f"`/hbench publish {row.job_name} --board <board>`",
                ) from None
            run = done.run
            opened = " (a new board, opened by this run)" if done.opened is not None else ""
            text = (
                f"Published `{row.job_name}` to the board `{run.board}`{opened}, under the "
                f"entry `{run.entry.owner}/{run.entry.name}`."
            )
            return text + self.board_link(run.board)

        return await self.run("publish", request, act)

    async def withdraw(self, request: ActionRequest) -> str:
        def act(session: Session, owner: Account, row: Job, now: datetime) -> str:
            done = service.withdraw(session, owner, row.id, now=now)
            return (
                f"Withdrew `{done.job_name}` from the board `{done.board}`, for good: its "
                "score comes off the board, and the board counts it as withdrawn."
                + self.board_link(done.board)
            )

        return await self.run("withdraw", request, act)

    async def delete(self, request: ActionRequest) -> str:
        def act(session: Session, owner: Account, row: Job, now: datetime) -> str:
            # The command names the job: that is the confirmation the API asks for.
            done = service.delete(
                session, owner, row.id, confirm=row.job_name,
                blobs=self.blobs, policy=self.policy, now=now,
            )  # fmt: skip
            purge = now + self.policy.deleted_files_retention
            board = service.score_board(done)
            kept = f" Its score stays on the board `{board}`." if board is not None else ""
            return (
                f"Deleted `{done.job_name}`: it has left Your bench, and its files leave "
                f"storage by {purge:%Y-%m-%d %H:%M} UTC.{kept}"
            )

        return await self.run("delete", request, act)

    def board_link(self, board: str | None) -> str:
        """A link to the board's page on this service's site, when its URL is known."""
        base = self.settings.public_url
        if base is None or board is None:
            return ""
        return f" The board: {base.rstrip('/')}/site/boards/{board}/index.html"

    async def run(self, action: str, request: ActionRequest, act: Act) -> str:
        return await run_in_threadpool(self._run, action, request, act)

    def _run(self, action: str, request: ActionRequest, act: Act) -> str:
        now = self.clock()
        with self.database.session() as session:
            done = done_before(session, request.delivery_id, action, request.job.id)
            if done is not None:
                return done
            row = session.get(Job, request.job.id)
            owner = session.get(Account, row.owner_id) if row is not None else None
            if row is None or owner is None:
                raise HbenchError("command-job-not-found", f"the job `{request.job.name}` is gone")
            session.execute(
                delete(GitHubCommandAction).where(GitHubCommandAction.acted_at < now - RETENTION)
            )
            record = GitHubCommandAction(
                delivery_id=request.delivery_id, action=action, job_id=row.id, reply="",
                acted_at=now,
            )  # fmt: skip
            # Added before acting: the service's commit stores it with the action, and its
            # rollback on a refusal takes it away.
            session.add(record)
            reply = act(session, owner, row, now)
            record.reply = reply
            session.commit()
            return reply


def done_before(session: Session, delivery_id: str, action: str, job_id: uuid.UUID) -> str | None:
    """The reply of an action this delivery took already, or None."""
    reply = session.scalar(
        select(GitHubCommandAction.reply).where(
            GitHubCommandAction.delivery_id == delivery_id,
            GitHubCommandAction.action == action,
            GitHubCommandAction.job_id == job_id,
        )
    )
    if reply is None:
        return None
    return reply or f"Already done: this command's `{action}` was carried out when first sent."
