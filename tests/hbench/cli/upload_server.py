"""A small upload endpoint on loopback that records what the client sent.

The client's own tests use it to see exactly what went over the wire (headers,
the streamed body, retries) and to answer with whatever envelope a case needs: it
reads the body, checks it is gzip, and answers with the service's error envelope or
a canned acceptance. The tests against the real service are in `tests/app/`.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.http_stub import StubHandler, stub_server


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class UploadServer:
    url: str
    received: list[Received] = field(default_factory=list)
    answer_status: int = 201
    answer_body: dict[str, Any] = field(
        default_factory=lambda: {"id": "job-1", "status": "private", "score": 0.8}
    )


@contextmanager
def upload_server() -> Iterator[UploadServer]:
    state = UploadServer(url="")

    class Handler(StubHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.received.append(Received(self.path, headers, body))
            status, answer = state.answer_status, state.answer_body
            if headers.get("content-type") != "application/gzip" or not _is_gzip(body):
                status, answer = 415, {"detail": "not gzip (upload-not-gzip)", "code": "x"}
            self.send_json(status, answer)

    with stub_server(Handler) as port:
        state.url = f"http://127.0.0.1:{port}/api/bench/uploads"
        yield state


def _is_gzip(body: bytes) -> bool:
    try:
        gzip.decompress(body)
    except (OSError, EOFError):
        return False
    return True
