"""The client side of an upload: headers, streaming the packed job, and reading the answer.

The service's answers share one envelope (`detail`, `code`, `errors`); a refusal's
`detail` already ends with its rule code, so the client prints it as it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hbench import __version__
from hbench.errors import HbenchError, Problem
from hbench.plain_http import CONNECT_TIMEOUT, TRANSFER_TIMEOUT, PostError, post
from hbench.service import service_problem

CHUNK = 1024 * 1024
REFUSED = "upload-refused"  # a refusal whose code this client does not know
RUN_TOKEN_HEADER = "hpg-run-token"  # noqa: S105 - a header name, not a secret
TIMEOUT = (CONNECT_TIMEOUT, TRANSFER_TIMEOUT, TRANSFER_TIMEOUT, CONNECT_TIMEOUT)
"""The same timeouts as httpx takes them (connect, read, write, pool), for a client that
speaks httpx: one job sent at once needs none of it (hbench.plain_http)."""


@dataclass(frozen=True)
class UploadAnswer:
    """What the service said: its status and its JSON body (or text, if it sent no JSON)."""

    status_code: int
    body: Any

    @property
    def accepted(self) -> bool:
        return 200 <= self.status_code < 300

    def problems(self) -> list[Problem]:
        """A refusal's failures as problems, using the service's own rule codes."""
        body = self.body if isinstance(self.body, dict) else {}
        listed = body.get("errors")
        if isinstance(listed, list) and listed:
            entries = [e for e in listed if isinstance(e, dict)]
            return [
                service_problem(e.get("code"), e.get("message"), refused=REFUSED) for e in entries
            ]
        return [
            service_problem(body.get("code"), body.get("detail") or str(self.body), refused=REFUSED)
        ]


def parse_header(raw: str) -> tuple[str, str]:
    """Split a curl-style `-H "name: value"` into its name and value."""
    name, sep, value = raw.partition(":")
    if not sep or not name.strip() or not value.strip():
        # The header may hold a token: say what is wrong without repeating it.
        raise HbenchError("upload-token-missing", 'write each header as -H "name: value"')
    return name.strip().lower(), value.strip()


def auth_headers(api_token: str | None, raw_headers: list[str]) -> dict[str, str]:
    """The request's headers: the API token as a bearer, or the headers given (a run token)."""
    headers = dict(parse_header(h) for h in raw_headers)
    if api_token:
        headers["authorization"] = f"Bearer {api_token}"
    if "authorization" not in headers and RUN_TOKEN_HEADER not in headers:
        raise HbenchError(
            "upload-token-missing",
            "no token to upload with: set the variable named by --token-env to an API token "
            f'(hpg_…), or pass -H "{RUN_TOKEN_HEADER}: $HPG_RUN_TOKEN" for an issued run',
        )
    return headers


def _chunks(path: Path, progress: Callable[[int], None] | None) -> Iterator[bytes]:
    with path.open("rb") as stream:
        while chunk := stream.read(CHUNK):
            if progress is not None:
                progress(len(chunk))
            yield chunk


def send_archive(
    url: str,
    archive: Path,
    headers: dict[str, str],
    *,
    progress: Callable[[int], None] | None = None,
) -> UploadAnswer:
    """Stream a packed job to the upload endpoint and return the service's answer."""
    request_headers = {
        **headers,
        "content-type": "application/gzip",
        "content-length": str(archive.stat().st_size),
        "user-agent": f"hbench/{__version__}",
    }
    try:
        status, content = post(url, _chunks(archive, progress), request_headers)
    except PostError as exc:
        raise HbenchError("upload-unreachable", f"could not upload to {url}: {exc}") from None
    try:
        body: Any = json.loads(content)
    except ValueError:
        body = content.decode("utf-8", errors="replace")
    return UploadAnswer(status_code=status, body=body)
