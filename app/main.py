"""The service as an ASGI app: `create_app` joins the routers, error handlers and resources.

`hbench-app serve` starts it with the service's own uvicorn configuration
(`app.http.server`): forwarded addresses only from `HBENCH_TRUSTED_PROXIES`, and an access
log that keeps no sign-in code. `uvicorn --factory app.main:create_app` starts it too, but
then pass `--forwarded-allow-ips` yourself. Resources (database, blob store) open in the
lifespan, after migrations bring the database to head.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI

from app import health, scrape
from app.auth import routes as auth_routes
from app.bench import part_routes
from app.bench import routes as bench_routes
from app.datarepo.service import start_background_writer
from app.dependencies import app_settings, open_resources
from app.errors import install_error_handlers
from app.github import oauth as github_oauth
from app.github import webhooks as github_webhooks
from app.github.tokens import InstallationTokens
from app.http.bodies import BodyGuard
from app.http.forwarded import ForwardedFor
from app.http.server import tune_interpreter
from app.observe.requests import RequestObserver
from app.publish import routes as publish_routes
from app.reports import routes as reports_routes
from app.runs import routes as runs_routes
from app.security import install_security_headers
from app.services import Services
from app.settings import Settings
from app.site.serve import mount_site
from app.uploads.redaction.engine import default_engine
from app.v1 import routes as v1_routes
from app.web import install as install_web_pages
from hbench import __version__

DESCRIPTION = """\
Issue runs, upload sealed Harbor jobs, and publish their scores.

Every refusal is answered with one envelope, `{"detail", "code", "help", "errors"}`, whose
`code` is a rule code and `help` the address of its entry on the Troubleshooting page
(`/guide/troubleshooting`): what the code means and how to fix it.
"""


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app, on the given settings or on those read from the environment."""
    app = FastAPI(
        title="hbench",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
    )
    if settings is not None:
        # Kept on the app, not set as an override of `get_settings`: FastAPI answers
        # slower while any override is set (`app.dependencies.app_settings`).
        app.state.settings = settings
    install_error_handlers(app)
    shape = AppShape.of(app_settings(app))
    # Middlewares run outermost last-added: the client's address is settled first, and
    # the body guard's refusals carry the security headers too.
    app.add_middleware(BodyGuard)
    install_security_headers(app, hsts=shape.hsts)
    app.add_middleware(RequestObserver)
    app.add_middleware(ForwardedFor)
    mount_site(app)
    app.include_router(health.router)
    if shape.metrics:
        app.include_router(scrape.router)
    app.include_router(auth_routes.router)
    app.include_router(runs_routes.router)
    app.include_router(bench_routes.router)
    app.include_router(part_routes.router)
    app.include_router(publish_routes.router)
    app.include_router(reports_routes.router)
    app.include_router(reports_routes.admin)
    app.include_router(v1_routes.router)
    app.include_router(github_webhooks.router)
    app.include_router(github_oauth.router)
    install_web_pages(app)
    return app


@dataclass(frozen=True)
class AppShape:
    """What of its settings an app is built with; everything else (the stores, the state
    directory, the limits) its handlers and middlewares read from `app.state.settings` as
    they run, so an app started again on other settings of the same shape serves those."""

    hsts: bool
    """Strict-Transport-Security on every answer: GitHub mode on an https address."""
    metrics: bool
    """`GET /metrics` is routed (`HBENCH_METRICS_ENABLED`)."""

    @classmethod
    def of(cls, settings: Settings) -> AppShape:
        hsts = settings.mode == "github" and is_https(settings.public_url)
        return cls(hsts=hsts, metrics=settings.metrics_enabled)


def is_https(url: str | None) -> bool:
    return url is not None and url.startswith("https://")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    settings = app_settings(app)
    tune_interpreter()
    resources = open_resources(settings)
    app.state.resources = resources
    app.state.services = Services.started(settings, resources)
    # The redaction engine is made once per process (a second of CPU to compile its
    # patterns where this machine has not kept them): made now, the first run summary
    # pushed or query logged doesn't wait for it.
    threading.Thread(target=default_engine, name="hbench-redaction-warm", daemon=True).start()
    # The data-repo writer drains the outbox in the background (app/datarepo/service.py).
    writer = None
    try:
        # In GitHub mode it pushes with the App's installation tokens (None in local mode).
        tokens = InstallationTokens.from_settings(settings)
        writer = start_background_writer(settings, resources.database, tokens)
        yield
    finally:
        if writer is not None:
            writer.stop()
        resources.close()
