"""Small HTTP stand-ins for tests (the runner's token endpoint, an upload endpoint, a git
server): a request handler that logs nothing and answers JSON, and a threaded server for
it on a free loopback port."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import BaseRequestHandler
from typing import Any


class StubHandler(BaseHTTPRequestHandler):
    """A request handler that writes no access log (the tests read what it recorded) and
    answers JSON with `send_json`."""

    def send_json(self, status: int, answer: Any) -> None:
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def stub_server(handler: Callable[..., BaseRequestHandler]) -> Iterator[int]:
    """Serve `handler` on a free loopback port, one thread per request, until the block
    ends; yields the port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
