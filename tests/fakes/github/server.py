"""The fake GitHub on a real loopback port, for clients that can't take an ASGI transport:
synchronous ones (PyGithub, githubkit's sync calls) and other processes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from tests.fakes.github.app import create_fake_github
from tests.fakes.github.state import FakeGitHub

START_TIMEOUT_SECONDS = 10.0


@contextmanager
def serve_fake_github(fake: FakeGitHub) -> Iterator[str]:
    """Serve the fake on 127.0.0.1 at a free port; yields its URL (also set as `fake.url`,
    so the OIDC issuer names itself by it)."""
    config = uvicorn.Config(
        create_fake_github(fake), host="127.0.0.1", port=0, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="fake-github", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the fake GitHub did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    previous, fake.url = fake.url, f"http://127.0.0.1:{port}"
    try:
        yield fake.url
    finally:
        fake.url = previous
        server.should_exit = True
        thread.join(START_TIMEOUT_SECONDS)
