"""Reports, take-downs and the deny list in the database.

Functions take the caller's session and commit what they change. A take-down changes the
job's row, closes its reports and enqueues the public change (`TakeDownRunChange`) in one
transaction, so the audit log gets the reason and note exactly when the run leaves its
board. Nothing here writes the reporter anywhere public, or to a log line.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, case, or_, select
from sqlalchemy.orm import Session

from app.auth.service import ensure_account, find_account
from app.datarepo.changes import TakeDownPushedRunChange, TakeDownRunChange
from app.datarepo.outbox import enqueue
from app.db.models import (
    Account,
    Job,
    JobStatus,
    Report,
    ReportStatus,
    ReproducedRun,
    ReproducedRunStatus,
)
from app.publish.record import run_id_of
from app.ratelimit import Limit, check_and_record
from app.reports import policy
from app.settings import Settings
from app.v1.service import reject_published_run
from hbench.errors import HbenchError

ON_A_BOARD = and_(
    Job.published_at.is_not(None),
    Job.withdrawn_at.is_(None),
    Job.taken_down_at.is_(None),
    Job.board.is_not(None),
)
"""A job whose score is on its board: published, and neither withdrawn nor taken down
(its files may be deleted: the spec keeps a deleted job's score until it is withdrawn)."""


def public_runs(session: Session, entry: str | None, run: str | None) -> list[Job]:
    """The runs on a board with this entry name and/or run id (a run's id is its job's)."""
    query = select(Job).where(ON_A_BOARD)
    if run:
        try:
            query = query.where(Job.id == uuid.UUID(run.strip()))
        except ValueError:
            return []
    if entry:
        query = query.where(Job.entry == entry.strip())
    return list(session.scalars(query.order_by(Job.published_at, Job.id)))


def create_report(
    session: Session,
    account: Account,
    *,
    entry: str | None,
    run: str | None,
    message: str,
    per_hour: int,
    now: datetime,
) -> Report:
    """File a report of a public run, within the account's hourly limit."""
    policy.check_report(entry, run, message)
    runs = public_runs(session, entry, run)
    if not runs:
        named = " and ".join(f"{k} {v!r}" for k, v in (("entry", entry), ("run", run)) if v)
        raise HbenchError(
            "report-target-unknown",
            f"no run on a board has {named}; give the entry's name as its board shows it, "
            "or the run's number from its page",
        )
    bucket = Limit(f"reports:user:{account.id}", per_hour, policy.REPORT_WINDOW)
    decision = check_and_record(session, [bucket], now)
    if not decision.allowed:
        raise HbenchError(
            "report-limit",
            f"you can send {per_hour} reports an hour; try again in "
            f"{_minutes(decision.retry_after.total_seconds() if decision.retry_after else 0)}",
        )
    boards = {job.board for job in runs}
    report = Report(
        reporter_id=account.id,
        entry=(entry or "").strip() or None,
        run=(run or "").strip() or None,
        job_ref=runs[0].id if len(runs) == 1 else None,
        board=boards.pop() if len(boards) == 1 else None,
        message=message.strip(),
        status=ReportStatus.OPEN,
        created_at=now,
    )
    session.add(report)
    session.commit()
    return report


def _minutes(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def list_reports(session: Session, *, open_only: bool = False) -> list[tuple[Report, str]]:
    """Reports with their reporters' logins: open ones first, oldest first among them, then
    closed ones, newest first."""
    is_open = Report.status == ReportStatus.OPEN
    query = select(Report, Account.login).join(Account, Account.id == Report.reporter_id)
    if open_only:
        query = query.where(is_open)
    query = query.order_by(
        case((is_open, 0), else_=1),
        case((is_open, Report.id), else_=-Report.id),
    )
    return [(report, login) for report, login in session.execute(query)]


def get_report(session: Session, number: int) -> Report:
    report = session.get(Report, number)
    if report is None:
        raise HbenchError("report-not-found", f"there is no report number {number}")
    return report


def refuse_closed(report: Report) -> None:
    if report.status is not ReportStatus.OPEN:
        raise HbenchError(
            "report-closed",
            f"report {report.id} is closed already ({report.status.value.replace('_', ' ')})",
        )


def dismiss(session: Session, maintainer: Account, number: int, *, now: datetime) -> Report:
    """Leave the run as it is and close the report."""
    report = get_report(session, number)
    refuse_closed(report)
    report.status, report.resolved_at, report.resolved_by_id = (
        ReportStatus.DISMISSED,
        now,
        maintainer.id,
    )
    session.commit()
    return report


@dataclass(frozen=True)
class TakeDown:
    """A run taken down: where it was, what the audit log says, and the reports closed."""

    board: str | None  # None for a pushed run, which is on no board
    run_id: str
    reason: str
    note: str
    reports_closed: list[int]


def take_down_report(
    session: Session,
    maintainer: Account,
    number: int,
    *,
    reason: str,
    note: str,
    run: str | None,
    now: datetime,
) -> TakeDown:
    """Take down the run a report is about (`run` chooses when it names several)."""
    report = get_report(session, number)
    refuse_closed(report)
    if report.job_ref is not None and run is None:
        job = _locked(session, report.job_ref)
    else:
        runs = public_runs(session, report.entry, run or report.run)
        if len(runs) > 1:
            ids = ", ".join(run_id_of(job.id) for job in runs)
            raise HbenchError(
                "report-run-ambiguous",
                f"report {number} names the entry {report.entry!r}, which has several runs on "
                f"boards ({ids}); say which with `run`",
            )
        job = _locked(session, runs[0].id) if runs else None
    if job is None:
        raise HbenchError(
            "takedown-run-not-public",
            f"the run report {number} is about is no longer on a board; dismiss the report",
        )
    return take_down(session, maintainer, job, reason=reason, note=note, now=now)


def take_down_run(
    session: Session, maintainer: Account, run_id: str, *, reason: str, note: str, now: datetime
) -> TakeDown:
    """Take down a run by its id, with or without a report about it: a run on a board (its
    job's id), or a summary pushed to the runs API (`run_…`)."""
    pushed = session.get(ReproducedRun, run_id, with_for_update=True)
    if pushed is not None and pushed.job_ref is None:
        return take_down_pushed(session, maintainer, pushed, reason=reason, note=note, now=now)
    try:
        job = _locked(session, uuid.UUID(run_id))
    except ValueError:
        job = None
    if job is None or job.published_at is None:
        raise HbenchError("takedown-run-not-found", f"no run {run_id} was ever on a board")
    return take_down(session, maintainer, job, reason=reason, note=note, now=now)


def take_down_pushed(
    session: Session,
    maintainer: Account,
    run: ReproducedRun,
    *,
    reason: str,
    note: str,
    now: datetime,
) -> TakeDown:
    """Take a pushed summary off the site and out of the runs API's lists and aggregates:
    its row `rejected`, and the public change with the reason and note, in one transaction."""
    if run.status is ReproducedRunStatus.REJECTED:
        session.rollback()
        raise HbenchError("takedown-run-not-public", f"the run {run.id} is taken down already")
    people = [session.get_one(Account, run.user_id).login] if run.user_id is not None else []
    checked = policy.check_takedown(reason, note, people)
    text = note.strip()
    change = TakeDownPushedRunChange(run_id=run.id, reason=checked, note=text or None)
    enqueue(session, change, at=now)
    run.status = ReproducedRunStatus.REJECTED
    session.commit()
    return TakeDown(None, run.id, reason, text, [])


def _locked(session: Session, job_id: uuid.UUID) -> Job | None:
    # Row-locked (PostgreSQL), so two maintainers taking one run down enqueue it once.
    return session.scalars(select(Job).where(Job.id == job_id).with_for_update()).one_or_none()


def take_down(
    session: Session, maintainer: Account, job: Job, *, reason: str, note: str, now: datetime
) -> TakeDown:
    """Take a run off its board: the job's row, its reports, the runs API's record, and the
    public change with the reason and note, in one transaction."""
    if (
        job.board is None
        or session.scalar(select(Job.id).where(Job.id == job.id, ON_A_BOARD)) is None
    ):
        session.rollback()
        raise HbenchError(
            "takedown-run-not-public",
            f"the run {run_id_of(job.id)} is not on a board (withdrawn or taken down already)",
        )
    reports = list(
        session.scalars(
            select(Report).where(
                Report.status == ReportStatus.OPEN,
                or_(
                    Report.job_ref == job.id,
                    and_(Report.job_ref.is_(None), Report.run == str(job.id)),
                ),
            )
        )
    )
    people = [session.get_one(Account, job.owner_id).login]
    people += [session.get_one(Account, r.reporter_id).login for r in reports]
    checked = policy.check_takedown(reason, note, people)
    text = note.strip()
    change = TakeDownRunChange(board=job.board, run_id=run_id_of(job.id), reason=checked, note=text)
    enqueue(session, change, at=now)
    job.taken_down_at = now
    if job.status is JobStatus.PUBLISHED:
        # A deleted job keeps its status: its files' purge goes on as before.
        job.status = JobStatus.TAKEN_DOWN
    reject_published_run(session, job.id)
    for report in reports:
        report.status, report.resolved_at = ReportStatus.TAKEN_DOWN, now
        report.resolved_by_id, report.reason, report.note = maintainer.id, reason, text
    session.commit()
    return TakeDown(job.board, run_id_of(job.id), reason, text, sorted(r.id for r in reports))


def deny(session: Session, login: str, settings: Settings) -> Account:
    """Put a login on the deny list; an account is made for a login never seen, so it is
    denied from its first sign-in. A maintainer's account (`policy.is_maintainer`, by its
    GitHub account id) is refused."""
    account = ensure_account(session, login)
    if policy.is_maintainer(account, settings):
        raise HbenchError("deny-maintainer", f"{account.login} is a maintainer; remove that first")
    account.is_denied = True
    session.commit()
    return account


def allow(session: Session, login: str) -> Account:
    """Take a login off the deny list."""
    account = find_account(session, login)
    if account is None or not account.is_denied:
        raise HbenchError("deny-account-not-found", f"{login} is not on the deny list")
    account.is_denied = False
    session.commit()
    return account


def denied(session: Session) -> list[str]:
    query = select(Account.login).where(Account.is_denied.is_(True)).order_by(Account.login)
    return list(session.scalars(query))
