"""The real service, served by uvicorn on a free loopback port in this process.

The client under test runs as a subprocess and reaches it over HTTP, as a user's
`hbench` reaches a local `hbench-app serve`.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

STARTUP_SECONDS = 30.0


def loopback_socket() -> socket.socket:
    """A socket bound to a free loopback port, so its address is known before serving."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def url_of(sock: socket.socket) -> str:
    """The base URL of a loopback socket, `http://127.0.0.1:<port>`."""
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def serving_on(app: FastAPI, sock: socket.socket) -> Iterator[str]:
    """Serve the app on a socket bound beforehand (its URL may be in the app's settings, as
    the audience of the OIDC tokens it takes) until the block ends; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the service did not start")
        time.sleep(0.01)
    try:
        yield url_of(sock)
    finally:
        server.should_exit = True
        thread.join(timeout=STARTUP_SECONDS)
        sock.close()


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """Serve the app on a free loopback port until the block ends; yields its base URL."""
    with serving_on(app, loopback_socket()) as url:
        yield url
