"""Serving the built site from the service: a static mount, and the rebuild after a
change to the data repository.

The integrator mounts it in `app.main.create_app` (`mount_site(app, folder)`) and calls
`rebuild` after the data-repo writer commits; the rebuild renders only what changed.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from app.site.build import BuildReport, build_site
from app.site.config import SiteConfig

SITE_PATH = "/site"
"""Where the service serves the site; pages link relatively, so any path works."""


class SiteFiles(StaticFiles):
    """Static files that answer 404, not an error, while the folder is not built yet."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.directory is None or not Path(self.directory).is_dir():
            await PlainTextResponse("the site is not built yet", status_code=404)(
                scope, receive, send
            )
            return
        await super().__call__(scope, receive, send)


def site_files(folder: Path) -> StaticFiles:
    """The built folder as an ASGI app: `index.html` for a folder's address, 404 else.

    The folder need not exist yet: requests answer 404 until the first build. (Creating
    it here would create the state directory before the service sets its private mode.)
    """
    return SiteFiles(directory=folder, html=True, check_dir=False)


def mount_site(app: FastAPI, folder: Path, path: str = SITE_PATH) -> None:
    """Serve the site built into `folder` at `path`."""
    app.mount(path, site_files(folder), name="site")


def rebuild(data_repo: Path, folder: Path, config: SiteConfig | None = None) -> BuildReport:
    """Bring the site up to date with the data repository's checkout, in this process.

    One process (`workers=1`): the service has threads, and forking a threaded process
    is unsafe; after one change only one board's pages are rendered anyway. No links
    (`link=False`): the service's checkout is rewritten in place, and a linked run's JSON
    would change with it before its page does.
    """
    return build_site(data_repo, folder, config, workers=1, link=False)
