"""The home page (`/`), and the old address of Limits (`/limits`), which now lives in the
guide (`/guide/limits`, app/web/guide.py)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, RedirectResponse

from app.web.pages import PageDep

router = APIRouter(include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
def index(page: PageDep) -> HTMLResponse:
    return page.render("home.html", title="hbench")


@router.get("/limits")
def limits() -> RedirectResponse:
    """Limits moved into the guide; links to the old address keep working."""
    return RedirectResponse("/guide/limits", status_code=301)
