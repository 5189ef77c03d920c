"""uvicorn's configuration for the service, as `hbench-app serve` runs it.

Forwarded addresses are believed only from `HBENCH_TRUSTED_PROXIES` (uvicorn would
otherwise believe `X-Forwarded-For` from 127.0.0.1, or from `FORWARDED_ALLOW_IPS`), and
the access log's query strings are filtered (`access_log.py`); the app's own lines are
logged beside uvicorn's, as text or JSON, each with its request's id (`app.observe.logs`).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.config import STARTUP_FAILURE

from app.observe.logs import log_config
from app.settings import Settings


def server_config(app: FastAPI, settings: Settings, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration for `app`; `options` (host, port, log level) pass on."""
    proxies = list(settings.trusted_proxies)
    return uvicorn.Config(
        app,
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies,
        log_config=log_config(settings.log_format),
        **options,
    )


def run(config: uvicorn.Config) -> None:
    """Serve until stopped, as `uvicorn.run` does with one process (which takes no Config):
    Ctrl-C ends it quietly, and a server that never started exits with uvicorn's code."""
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
