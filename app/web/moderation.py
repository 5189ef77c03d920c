"""Report a submission (`/report`), and the maintainers' page (`/maintainers`): the report
queue with dismiss and take-down, and the deny list."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError

from app.errors import validation_problems
from app.reports import service
from app.reports.policy import NOTE_MAX, REASONS
from app.reports.schemas import DenyRequest
from app.web.pages import Page, PageDep, PageError
from hbench.errors import HbenchError

router = APIRouter(include_in_schema=False)

DONE = {
    "dismissed": "The report is dismissed; the run stays as it is.",
    "taken-down": "The run is taken down; the audit log records the reason and note.",
    "denied": "The account is on the deny list.",
    "allowed": "The account is off the deny list.",
}


@router.get("/report", response_class=HTMLResponse)
def report_form(page: PageDep) -> HTMLResponse:
    return page.render("report.html", title="Report a submission", fields={}, sent=None)


@router.post("/report", response_class=HTMLResponse)
async def send_report(page: PageDep) -> HTMLResponse:
    fields = await page.form()
    try:
        report = service.create_report(
            page.session, page.signed_in.account,
            entry=fields.get("entry", "").strip() or None,
            run=fields.get("run", "").strip() or None,
            message=fields.get("message", ""),
            per_hour=page.settings.reports_per_hour, now=page.now,
        )  # fmt: skip
    except HbenchError as error:
        return page.refused(error, "report.html", title="Report a submission", fields=fields,
                            sent=None)  # fmt: skip
    return page.render("report.html", title="Report a submission", fields={}, sent=report.id)


def maintainer(page: Page) -> None:
    page.signed_in  # noqa: B018  # signed in first, so the refusal says what to do
    if not page.is_maintainer:
        raise PageError(
            HbenchError("maintainer-only", "only the service's maintainers can open this page")
        )


def queue_context(page: Page, **values: Any) -> dict[str, Any]:
    return {
        "title": "Maintainers",
        "reports": service.list_reports(page.session),
        "denied": service.denied(page.session),
        "reasons": REASONS,
        "note_max": NOTE_MAX,
        "notice": None,
        **values,
    }


@router.get("/maintainers", response_class=HTMLResponse)
def maintainers(page: PageDep, done: str | None = None) -> HTMLResponse:
    maintainer(page)
    return page.render("maintainers.html", **queue_context(page, notice=DONE.get(done or "")))


def back(done: str) -> RedirectResponse:
    return RedirectResponse(f"/maintainers?done={done}", status.HTTP_303_SEE_OTHER)


def refused(page: Page, error: HbenchError) -> HTMLResponse:
    page.session.rollback()
    return page.refused(error, "maintainers.html", **queue_context(page))


@router.post("/maintainers/reports/{number}/dismiss", response_class=HTMLResponse)
async def dismiss(page: PageDep, number: int) -> Any:
    maintainer(page)
    await page.form()
    try:
        service.dismiss(page.session, page.signed_in.account, number, now=page.now)
    except HbenchError as error:
        return refused(page, error)
    return back("dismissed")


@router.post("/maintainers/reports/{number}/take-down", response_class=HTMLResponse)
async def take_down(page: PageDep, number: int) -> Any:
    maintainer(page)
    fields = await page.form()
    try:
        service.take_down_report(
            page.session, page.signed_in.account, number,
            reason=fields.get("reason", ""), note=fields.get("note", ""),
            run=fields.get("run", "").strip() or None, now=page.now,
        )  # fmt: skip
    except HbenchError as error:
        return refused(page, error)
    return back("taken-down")


@router.post("/maintainers/deny", response_class=HTMLResponse)
async def deny(page: PageDep) -> Any:
    maintainer(page)
    fields = await page.form()
    try:
        try:
            login = DenyRequest(login=fields.get("login", "").strip()).login
        except ValidationError as error:
            raise HbenchError.from_problems(validation_problems(error.errors())) from None
        service.deny(page.session, login, page.settings)
    except HbenchError as error:
        return refused(page, error)
    return back("denied")


@router.post("/maintainers/allow", response_class=HTMLResponse)
async def allow(page: PageDep) -> Any:
    maintainer(page)
    fields = await page.form()
    try:
        service.allow(page.session, fields.get("login", "").strip())
    except HbenchError as error:
        return refused(page, error)
    return back("allowed")
