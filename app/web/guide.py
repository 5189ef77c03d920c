"""The user guide (`/guide/…`): how hbench works, in plain words, beside the pages it explains.

Each number a guide page gives (caps, windows, limits) is read from the settings or the
registry when the page is asked for, each rule code comes from `hbench.codes` (a code the
catalogue lacks fails the page), and each command is made by the function that prints it
(`hbench.issue`, `app.web.run`) or checked against the `hbench` CLI by the guide's tests
(`tests/app/web/test_guide.py`); `app/web/guide_facts.py` gathers them. Troubleshooting,
the page of every rule code, is `app/web/troubleshooting.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse
from markupsafe import Markup
from sqlalchemy import func, select

from app.db.models import IssuedRun, IssuedRunStatus
from app.registry import RegistryDep
from app.runs.lookup import is_runnable
from app.runs.policy import DAY
from app.web.guide_facts import (
    CONFIDENCE,
    Facts,
    cell_settings,
    commands,
    levels,
    public_fields,
    security_contact,
    source_types,
)
from app.web.pages import Page, PageDep, rule_code
from hbench.codes import CODE_NAMES, GUIDE_PATH
from registry.loader import Registry

router = APIRouter(include_in_schema=False)

PREFIX = "/guide"
TROUBLESHOOTING = GUIDE_PATH


@dataclass(frozen=True)
class GuidePage:
    slug: str
    title: str
    summary: str

    @property
    def href(self) -> str:
        return f"{PREFIX}/{self.slug}"


GUIDE: tuple[GuidePage, ...] = (
    GuidePage(
        "put-your-result-on-a-board",
        "Put your result on a board",
        "The whole path on one page: issue a run or not, run it, upload the job, publish "
        "it, and take it back.",
    ),
    GuidePage(
        "self-reported-and-issued-runs",
        "Self-reported runs and issued runs",
        "The two ways a run reaches a board, what each shows a reader, and the evidence "
        "labels the site puts on every run.",
    ),
    GuidePage(
        "cells-and-boards",
        "Cells and boards",
        "What decides the board a job goes on, when a job opens a new board, and how "
        "entries and scores are made.",
    ),
    GuidePage(
        "what-a-board-makes-public",
        "What a board makes public",
        "Every field of a published run, what never leaves the service, and how keys are "
        "kept out of stored jobs.",
    ),
    GuidePage(
        "limits",
        "Limits",
        "What each board allows one person, the caps on uploads, and how long tokens, "
        "windows and files last.",
    ),
    GuidePage(
        "security",
        "Security",
        "How to tell the maintainers about a security problem without making it public.",
    ),
    GuidePage(
        "troubleshooting",
        "Troubleshooting",
        "Every rule code a refusal ends with: what it means and how to fix it.",
    ),
)
BY_SLUG = {page.slug: page for page in GUIDE}


def rule(code: str) -> Markup:
    """A rule code as the guide shows it, linked to its Troubleshooting entry. A code the
    catalogue doesn't hold is a mistake in the guide, so the page fails rather than show it."""
    if code not in CODE_NAMES:
        raise ValueError(f"the guide names {code!r}, which hbench/codes.py does not hold")
    return rule_code(code)


def render(page: Page, registry: Registry, slug: str, **values: Any) -> HTMLResponse:
    """A guide page, with everything every guide page may use."""
    current = BY_SLUG[slug]
    login = page.caller.account.login if page.caller is not None else page.settings.local_login
    return page.render(
        f"guide/{slug}.html",
        title=current.title,
        current=current,
        guide=GUIDE,
        rule=rule,
        facts=Facts.of(page.settings),
        commands=commands(page.service_url, login, registry),
        **values,
    )


@router.get(PREFIX, include_in_schema=False)
def guide_without_slash() -> RedirectResponse:
    return RedirectResponse(f"{PREFIX}/", status_code=308)


@router.get(f"{PREFIX}/", response_class=HTMLResponse)
def index(page: PageDep) -> HTMLResponse:
    return page.render("guide/index.html", title="Guide", guide=GUIDE)


@router.get(f"{PREFIX}/put-your-result-on-a-board", response_class=HTMLResponse)
def put_your_result(page: PageDep, registry: RegistryDep) -> HTMLResponse:
    trusted = [entry.split("=", 1)[0] for entry in page.settings.trusted_workflows]
    return render(page, registry, "put-your-result-on-a-board", trusted_workflows=trusted)


@router.get(f"{PREFIX}/self-reported-and-issued-runs", response_class=HTMLResponse)
def self_reported_and_issued(page: PageDep, registry: RegistryDep) -> HTMLResponse:
    return render(
        page,
        registry,
        "self-reported-and-issued-runs",
        levels=levels(),
        source_types=source_types(),
    )


@router.get(f"{PREFIX}/cells-and-boards", response_class=HTMLResponse)
def cells_and_boards(page: PageDep, registry: RegistryDep) -> HTMLResponse:
    return render(
        page, registry, "cells-and-boards", cell_settings=cell_settings(), confidence=CONFIDENCE
    )


@router.get(f"{PREFIX}/what-a-board-makes-public", response_class=HTMLResponse)
def what_a_board_makes_public(page: PageDep, registry: RegistryDep) -> HTMLResponse:
    return render(page, registry, "what-a-board-makes-public", fields=public_fields())


@router.get(f"{PREFIX}/security", response_class=HTMLResponse)
def security(page: PageDep, registry: RegistryDep) -> HTMLResponse:
    return render(page, registry, "security", contact=security_contact(page.settings))


@dataclass(frozen=True)
class BoardLimit:
    slug: str
    title: str
    attempts: str
    runs_per_day: int
    runs_waiting: int
    issued_last_day: int | None
    waiting_now: int | None
    environments: str = "docker"
    max_concurrent_trials: int = 4


def counted(rows: Iterable[Any]) -> dict[str, int]:
    """`board -> count` from a grouped count."""
    return {str(board): int(n) for board, n in rows}


@router.get(f"{PREFIX}/limits", response_class=HTMLResponse)
def limits(page: PageDep, registry: RegistryDep) -> HTMLResponse:
    """What each board allows one person, and how much of it the signed-in person uses now."""
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
            environments=", ".join(board.environments),
            max_concurrent_trials=board.max_concurrent_trials,
        )
        for board in sorted(registry.boards.values(), key=lambda b: b.slug)
        if is_runnable(board, registry)
    ]
    return render(page, registry, "limits", boards=boards)
