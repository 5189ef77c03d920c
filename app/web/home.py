"""The home page (`/`) and Limits (`/limits`): what each board allows one person, and how
much of it the signed-in person uses now."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from sqlalchemy import func, select

from app.db.models import IssuedRun, IssuedRunStatus
from app.registry import RegistryDep
from app.runs.policy import DAY, is_runnable
from app.web.pages import PageDep
from hbench.limits import MIB

router = APIRouter(include_in_schema=False)


@dataclass(frozen=True)
class BoardLimit:
    slug: str
    title: str
    attempts: str
    runs_per_day: int
    runs_waiting: int
    issued_last_day: int | None
    waiting_now: int | None


def counted(rows: Iterable[Any]) -> dict[str, int]:
    """`board -> count` from a grouped count."""
    return {str(board): int(n) for board, n in rows}


@router.get("/", response_class=HTMLResponse)
def index(page: PageDep) -> HTMLResponse:
    return page.render("home.html", title="hbench")


@router.get("/limits", response_class=HTMLResponse)
def limits(page: PageDep, registry: RegistryDep) -> HTMLResponse:
    issued: dict[str, int] = {}
    waiting: dict[str, int] = {}
    if page.caller is not None:
        mine = IssuedRun.account_id == page.caller.account.id
        issued = counted(
            page.session.execute(
                select(IssuedRun.board, func.count())
                .where(mine, IssuedRun.issued_at > page.now - DAY)
                .group_by(IssuedRun.board)
            )
        )
        waiting = counted(
            page.session.execute(
                select(IssuedRun.board, func.count())
                .where(
                    mine,
                    IssuedRun.status == IssuedRunStatus.ISSUED,
                    IssuedRun.expires_at > page.now,
                )
                .group_by(IssuedRun.board)
            )
        )
    signed_in = page.caller is not None
    boards = [
        BoardLimit(
            slug=board.slug,
            title=board.title or board.slug,
            attempts=" or ".join(str(n) for n in board.attempts),
            runs_per_day=board.limits.runs_per_day,
            runs_waiting=board.limits.runs_waiting,
            issued_last_day=issued.get(board.slug, 0) if signed_in else None,
            waiting_now=waiting.get(board.slug, 0) if signed_in else None,
        )
        for board in sorted(registry.boards.values(), key=lambda b: b.slug)
        if is_runnable(board, registry)
    ]
    settings = page.settings
    service = {
        "upload_max": f"{settings.upload_max_bytes / MIB:.0f} MiB",
        "unpacked_max": f"{settings.unpacked_max_bytes / MIB:.0f} MiB",
        "run_token_hours": int(settings.run_token_lifetime.total_seconds() // 3600),
        "publish_days": settings.publish_window.days,
        "retention_days": settings.deleted_files_retention.days,
        "reports_per_hour": settings.reports_per_hour,
    }
    return page.render("limits.html", title="Limits", boards=boards, service=service)
