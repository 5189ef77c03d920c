"""The service's web pages: server-rendered HTML for people, beside the JSON API.

`install` joins the page routers to the app, serves their static files and shows a
refusal raised before a page could render as a page of its own. docs/web-pages.md
describes each page.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response

from app.dependencies import app_settings
from app.web import account, bench, guide, home, moderation, run, troubleshooting
from app.web.pages import STATIC, STATIC_PATH, PageError, refusal_page


def install(app: FastAPI) -> None:
    """Serve the pages, their static files, and their refusals."""
    app.mount(STATIC_PATH, StaticFiles(directory=STATIC), name="web-static")
    for module in (home, run, bench, account, moderation, guide, troubleshooting):
        app.include_router(module.router)

    async def show_refusal(request: Request, error: Exception) -> Response:
        assert isinstance(error, PageError)  # noqa: S101  # registered for this type only
        settings = app_settings(app)
        return refusal_page(request, settings, error.error)

    app.add_exception_handler(PageError, show_refusal)
