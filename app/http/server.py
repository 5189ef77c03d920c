"""uvicorn's configuration for the service, as `hbench-app serve` runs it.

Forwarded addresses are believed only from `HBENCH_TRUSTED_PROXIES` (uvicorn would
otherwise believe `X-Forwarded-For` from 127.0.0.1, or from `FORWARDED_ALLOW_IPS`), and
the access log's query strings are filtered (`app.observe.access_log`); the app's own lines are
logged beside uvicorn's, as text or JSON, each with its request's id (`app.observe.logs`).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from app.observe.logs import log_config
from app.settings import Settings

APP_FACTORY = "app.main:create_app"
"""What each of several worker processes builds its app with, from the environment."""
WORKER_ANSWER_SECONDS = 60
"""How long a worker may take to start, or to answer the supervisor's check, before it is
replaced: uvicorn's 5 s is less than importing the app takes on a busy small machine."""


SWITCH_INTERVAL_SECONDS = 0.001
"""How long a thread may hold the interpreter while another waits for it (CPython's
default is 5 ms). A server process runs its event loop, the handlers' threads and the
threads that unpack uploads, which parse tar headers in Python for as long as a body
streams in: each time the loop or a handler comes back from the network or the database,
it waits for the interpreter up to a whole interval per busy thread. At 1 ms a read
among twenty unpacking uploads waits a fifth as long, for a little more switching."""


def tune_interpreter() -> None:
    """Set the process's switch interval for serving (`SWITCH_INTERVAL_SECONDS`): each
    server process does, as its app starts."""
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)


def server_config(app: FastAPI | str, settings: Settings, **options: Any) -> uvicorn.Config:
    """The uvicorn configuration for `app` (the app, or with `workers` over one the factory's
    import path, `APP_FACTORY`); `options` (host, port, workers, log level) pass on."""
    proxies = list(settings.trusted_proxies)
    return uvicorn.Config(
        app,
        factory=isinstance(app, str),
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies,
        log_config=log_config(settings.log_format),
        timeout_worker_healthcheck=WORKER_ANSWER_SECONDS,
        **options,
    )


def run(config: uvicorn.Config) -> None:
    """Serve until stopped, as `uvicorn.run` does (which takes no Config): several workers
    on one socket under uvicorn's supervisor, which restarts one that dies; or one process,
    which Ctrl-C ends quietly and which exits with uvicorn's code if it never started."""
    if config.workers > 1:
        Multiprocess(config, sockets=[config.bind_socket()]).run()
        return
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
