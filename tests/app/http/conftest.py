"""The service as `hbench-app serve` runs it (`app.http.server.server_config`), on a free
loopback port in this process, and a raw socket to send it what no client library would:
bodies that stall, bodies too large, headers that claim another address."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

from app.http.server import server_config
from app.settings import Settings
from tests.hbench.cli.service import STARTUP_SECONDS, loopback_socket, url_of

from ..bench.conftest import sealed, sealed_archive

__all__ = ["sealed", "sealed_archive"]


@contextmanager
def served(app: FastAPI, settings: Settings, **options: object) -> Iterator[tuple[str, int]]:
    """Serve the app with the service's own uvicorn configuration until the block ends;
    yields its host and port."""
    sock = loopback_socket()
    config = server_config(app, settings, **{"log_level": "info", "lifespan": "on", **options})
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the service did not start")
        time.sleep(0.01)
    try:
        host, port = sock.getsockname()[:2]
        assert url_of(sock).endswith(f":{port}")
        yield host, port
    finally:
        server.should_exit = True
        thread.join(timeout=STARTUP_SECONDS)
        sock.close()


def connect(address: tuple[str, int], timeout: float = 10.0) -> socket.socket:
    return socket.create_connection(address, timeout=timeout)


def request_head(method: str, path: str, headers: dict[str, str]) -> bytes:
    lines = [
        f"{method} {path} HTTP/1.1",
        "host: 127.0.0.1",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response with a content-length: status, headers, body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(status_line.split()[1]), headers, body[:length]
