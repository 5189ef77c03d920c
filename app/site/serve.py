"""Serving the built site from the service: a static mount, and the rebuild after a
change to the data repository.

The integrator mounts it in `app.main.create_app` (`mount_site(app)`) and calls
`rebuild` after the data-repo writer commits; the rebuild renders only what changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from sitebuild.state import STATE_FILE

if TYPE_CHECKING:
    from sitebuild.build import BuildReport
    from sitebuild.config import SiteConfig

SITE_PATH = "/site"
"""Where the service serves the site; pages link relatively, so any path works."""


class SiteFiles(StaticFiles):
    """Static files that answer 404, not an error, until the folder's first build has
    finished (its build state, written last, is there: a first build's pages appear
    together), and send each file as it was when it was opened.

    The service rebuilds the folder while serving it, replacing a page by renaming its
    successor over it. A plain file response takes the length from one look at the name
    and the bytes from a later one, and a rename between them sends a body that doesn't
    match its `Content-Length` (the connection is cut). Here the length and the bytes come
    from one open file: the old page or the new one, whole.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.directory is None or not is_built(Path(self.directory)):
            await PlainTextResponse("the site is not built yet", status_code=404)(
                scope, receive, send
            )
            return
        await super().__call__(scope, receive, send)

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if isinstance(response, FileResponse):
            return await anyio.to_thread.run_sync(_whole, response)
        return response


def _whole(response: FileResponse) -> Response:
    """`response`'s file read through one open file, its headers from that file."""
    try:
        with Path(response.path).open("rb") as file:
            stat_result = os.fstat(file.fileno())
            body = file.read()
    except FileNotFoundError:
        # Removed since it was found (a deleted run's page): as if it had never been.
        return PlainTextResponse("not found", status_code=404)
    whole = Response(body, status_code=response.status_code, media_type=response.media_type)
    # The date and etag a file response gives that file (made from the status alone).
    stat_headers = FileResponse(response.path, stat_result=stat_result).headers
    for name in ("last-modified", "etag"):
        whole.headers[name] = stat_headers[name]
    return whole


def is_built(folder: Path) -> bool:
    """Whether the folder's first build has finished: its build state is written last."""
    return (folder / STATE_FILE).is_file()


def site_files(folder: Path) -> StaticFiles:
    """The built folder as an ASGI app: `index.html` for a folder's address, 404 else.

    The folder need not exist yet: requests answer 404 until the first build. (Creating
    it here would create the state directory before the service sets its private mode.)
    """
    return SiteFiles(directory=folder, html=True, check_dir=False)


def mount_site(app: FastAPI, path: str = SITE_PATH) -> None:
    """Serve at `path` the site in the folder the app's settings name (`site_dir`), read at
    each request as every handler reads them."""
    app.mount(path, SettingsSite(), name="site")


class SettingsSite:
    """The site in the folder of the running app's settings (`app.state.settings`); the
    static files of the last folder asked for are kept (they check their folder once)."""

    def __init__(self) -> None:
        self._served: tuple[Path, StaticFiles] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Imported here: the data-repo writer's command imports this module for `rebuild`,
        # and needs none of the app's dependencies (some 100 ms of its every start).
        from app.dependencies import app_settings  # noqa: PLC0415

        folder = app_settings(scope["app"]).site_dir
        served = self._served
        if served is None or served[0] != folder:
            served = self._served = (folder, site_files(folder))
        await served[1](scope, receive, send)


def rebuild(data_repo: Path, folder: Path, config: SiteConfig | None = None) -> BuildReport:
    """Bring the site up to date with the data repository's checkout, in this process.

    One process (`workers=1`): the service has threads, and forking a threaded process
    is unsafe; after one change only one board's pages are rendered anyway. No links
    (`link=False`): the service's checkout is rewritten in place, and a linked run's JSON
    would change with it before its page does.
    """
    # Imported here: the site builder (Jinja and its templates) is this module's only
    # use of it, and every `hbench-app` command and upload worker imports this module.
    from sitebuild.build import build_site  # noqa: PLC0415

    return build_site(data_repo, folder, config, workers=1, link=False)
