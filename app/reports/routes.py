"""`POST /api/reports` for anyone signed in, and the maintainers' `/api/admin/…` endpoints:
the report queue, take-downs and the deny list."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, status

from app.auth.dependencies import CurrentAccount
from app.clock import ClockDep
from app.db.models import Account, Report
from app.dependencies import SessionDep, SettingsDep
from app.errors import error_responses
from app.reports import service
from app.reports.policy import is_maintainer
from app.reports.schemas import (
    DenyList,
    DenyRequest,
    ReportCreated,
    ReportInfo,
    ReportList,
    ReportRequest,
    TakeDownRequest,
    TakenDown,
)
from hbench.codes import Area, codes
from hbench.errors import HbenchError

MAINTAINER = codes(Area.AUTH, "maintainer-only", "request-invalid")
TAKEDOWN = ("takedown-reason-unknown", "takedown-note-invalid", "takedown-run-not-public")


def maintainer_account(account: CurrentAccount, settings: SettingsDep) -> Account:
    """The signed-in account, if it is a maintainer's (by its GitHub account id)."""
    if not is_maintainer(account, settings):
        raise HbenchError("maintainer-only", "only the service's maintainers can do this")
    return account


Maintainer = Annotated[Account, Depends(maintainer_account)]

router = APIRouter(prefix="/api/reports", tags=["reports"])
admin = APIRouter(prefix="/api/admin", tags=["maintainers"])


@router.post(
    "",
    summary="Report a run to the maintainers",
    description="Name the entry as its board shows it, its run number, or both, and say "
    "what's wrong in 10 to 2,000 characters. Five reports an hour. The person reported "
    "never sees who you are.",
    status_code=status.HTTP_201_CREATED,
    response_model=ReportCreated,
    responses=error_responses(Area.AUTH, Area.REPORT, "request-invalid"),
)
def create_report(
    body: ReportRequest,
    account: CurrentAccount,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
) -> ReportCreated:
    report = service.create_report(
        session, account, entry=body.entry, run=body.run, message=body.message,
        per_hour=settings.reports_per_hour, now=clock(),
    )  # fmt: skip
    return ReportCreated(number=report.id, status=report.status)


def info(report: Report, reporter: str) -> ReportInfo:
    return ReportInfo(
        number=report.id, status=report.status, entry=report.entry, run=report.run,
        board=report.board, message=report.message, reporter=reporter,
        created_at=report.created_at, resolved_at=report.resolved_at, reason=report.reason,
        note=report.note,
    )  # fmt: skip


@admin.get(
    "/reports",
    summary="The report queue: open reports first",
    response_model=ReportList,
    responses=error_responses(*MAINTAINER),
)
def list_reports(
    _maintainer: Maintainer, session: SessionDep, open_only: bool = False
) -> ReportList:
    rows = service.list_reports(session, open_only=open_only)
    return ReportList(reports=[info(report, login) for report, login in rows])


@admin.post(
    "/reports/{number}/dismiss",
    summary="Leave the run as it is and close the report",
    response_model=ReportInfo,
    responses=error_responses(*MAINTAINER, "report-not-found", "report-closed"),
)
def dismiss(
    number: int, maintainer: Maintainer, session: SessionDep, clock: ClockDep
) -> ReportInfo:
    report = service.dismiss(session, maintainer, number, now=clock())
    reporter = session.get_one(Account, report.reporter_id).login
    return info(report, reporter)


@admin.post(
    "/reports/{number}/take-down",
    summary="Take down the run a report is about",
    description="Takes the run off its board; the public audit log gets the reason and the "
    "note, never the reporter or the person reported. Closes every open report of the run.",
    response_model=TakenDown,
    responses=error_responses(
        *MAINTAINER, *TAKEDOWN, "report-not-found", "report-closed", "report-run-ambiguous"
    ),
)
def take_down_report(
    number: int, body: TakeDownRequest, maintainer: Maintainer, session: SessionDep, clock: ClockDep
) -> TakenDown:
    done = service.take_down_report(
        session, maintainer, number, reason=body.reason, note=body.note, run=body.run, now=clock()
    )
    return TakenDown(**vars(done))


@admin.post(
    "/runs/{run_id}/take-down",
    summary="Take down a run by its id",
    response_model=TakenDown,
    responses=error_responses(*MAINTAINER, *TAKEDOWN, "takedown-run-not-found"),
)
def take_down_run(
    run_id: str, body: TakeDownRequest, maintainer: Maintainer, session: SessionDep, clock: ClockDep
) -> TakenDown:
    done = service.take_down_run(
        session, maintainer, run_id, reason=body.reason, note=body.note, now=clock()
    )
    return TakenDown(**vars(done))


@admin.get(
    "/deny",
    summary="The deny list",
    response_model=DenyList,
    responses=error_responses(*MAINTAINER),
)
def list_denied(_maintainer: Maintainer, session: SessionDep) -> DenyList:
    return DenyList(logins=service.denied(session))


@admin.post(
    "/deny",
    summary="Deny an account: it can't be issued runs, upload or publish",
    response_model=DenyList,
    responses=error_responses(*MAINTAINER, "deny-maintainer"),
)
def deny(
    body: DenyRequest, _maintainer: Maintainer, session: SessionDep, settings: SettingsDep
) -> DenyList:
    service.deny(session, body.login, settings)
    return DenyList(logins=service.denied(session))


@admin.delete(
    "/deny/{login}",
    summary="Take an account off the deny list",
    response_model=DenyList,
    responses=error_responses(*MAINTAINER, "deny-account-not-found"),
)
def allow(login: str, _maintainer: Maintainer, session: SessionDep) -> DenyList:
    service.allow(session, login)
    return DenyList(logins=service.denied(session))
