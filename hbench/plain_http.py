"""One streamed POST over the standard library, for `hbench jobs upload`.

The upload sends one request. httpx takes longer to import than a small job's whole
upload takes over loopback (docs/benchmarks.md, "The client"), so the upload uses
`urllib.request` and keeps what it relied on httpx for: proxies from the environment
(`HTTPS_PROXY`, `NO_PROXY`, …), certifi's roots for https (or `SSL_CERT_FILE`,
`SSL_CERT_DIR`), a short timeout to connect beside a long one for each read and write,
and no redirect followed: a 3xx is the answer, as any other status is.
"""

from __future__ import annotations

import http.client
import os
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import Any

CONNECT_TIMEOUT = 15.0
TRANSFER_TIMEOUT = 600.0  # each read and write of the socket, not the whole upload


class PostError(Exception):
    """The request got no answer: the reason, as `ErrorClass: message`."""


def post(url: str, body: Iterable[bytes], headers: dict[str, str]) -> tuple[int, bytes]:
    """POST the chunks of `body` to `url` with `headers` (which give its content-length);
    return the answer's status and body, whatever the status."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme not in ("http", "https"):
        raise PostError(f"UnsupportedProtocol: {url} is not an http:// or https:// address")
    opener = urllib.request.build_opener(_NoRedirect(), _Handler(), _TLSHandler())
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310 - the scheme is checked above
    try:
        with opener.open(request, timeout=CONNECT_TIMEOUT) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as answer:  # a status other than 2xx: still the answer
        with answer:
            return answer.code, answer.read()
    except urllib.error.URLError as exc:
        reason = exc.reason if isinstance(exc.reason, BaseException) else exc
        raise PostError(f"{reason.__class__.__name__}: {reason}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise PostError(f"{exc.__class__.__name__}: {exc}") from None


class _Connection(http.client.HTTPConnection):
    """Connects within CONNECT_TIMEOUT, then waits up to TRANSFER_TIMEOUT on each read."""

    def connect(self) -> None:
        super().connect()
        self.sock.settimeout(TRANSFER_TIMEOUT)


class _TLSConnection(http.client.HTTPSConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.settimeout(TRANSFER_TIMEOUT)


class _Handler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_Connection, req)


class _TLSHandler(urllib.request.HTTPSHandler):
    """https, its TLS context made for the first https request: making one costs more
    than an upload over http to loopback takes."""

    def __init__(self) -> None:
        urllib.request.AbstractHTTPHandler.__init__(self)  # not HTTPSHandler's: it makes one

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_TLSConnection, req, context=tls_context())


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def tls_context() -> ssl.SSLContext:
    """The roots httpx trusts: `SSL_CERT_FILE` or `SSL_CERT_DIR` when set, else certifi's."""
    if cert_file := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cert_file)
    if cert_dir := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=cert_dir)
    import certifi  # noqa: PLC0415 - only an https upload needs it

    return ssl.create_default_context(cafile=certifi.where())
