"""A small git server over HTTP, standing in for github.com in GitHub-mode tests.

It speaks git's smart HTTP protocol through `git http-backend` (git's own CGI program)
and, like GitHub, answers 401 unless a request carries `Authorization: Basic` with
`x-access-token:<the installation token>`. It records every request's path and
headers, so tests can check where the token travelled and where it did not.
"""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from app.datarepo.git import git_executable
from tests.http_stub import StubHandler, stub_server


@dataclass
class GitHttpServer:
    root: Path
    token: str
    port: int = 0
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    @property
    def expected_authorization(self) -> str:
        return "Basic " + base64.b64encode(f"x-access-token:{self.token}".encode()).decode()


@contextmanager
def serve_git(root: Path, token: str) -> Iterator[GitHttpServer]:
    """Serve the bare repositories under `root` on a free loopback port."""
    state = GitHttpServer(root, token)

    class Handler(StubHandler):  # quiet: the test reads `requests` instead
        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            state.requests.append((self.command, self.path, dict(self.headers.items())))
            if self.headers.get("Authorization") != state.expected_authorization:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="GitHub"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status, headers, body = self._backend(self._body())
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while size := int(self.rfile.readline().strip(), 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()
                return b"".join(chunks)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _backend(self, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
            path, _, query = self.path.partition("?")
            env = {
                "GIT_PROJECT_ROOT": str(state.root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": "/dev/null",
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "REQUEST_METHOD": self.command,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_USER": "x-access-token",  # lets http-backend accept pushes
                "REMOTE_ADDR": "127.0.0.1",
                "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            }
            out = subprocess.run(
                [git_executable(), "http-backend"], input=body, env=env, capture_output=True,
                check=True,
            ).stdout  # fmt: skip
            head, _, payload = out.partition(b"\r\n\r\n")
            status, headers = 200, []
            for line in head.decode().splitlines():
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                else:
                    headers.append((name, value.strip()))
            return status, headers, payload

    with stub_server(Handler) as port:
        state.port = port
        yield state
