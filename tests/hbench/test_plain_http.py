"""The upload's one POST over the standard library (hbench.plain_http): the body streamed as
sent, any status the answer (a redirect too: it is not followed), https checked against
certifi's roots or SSL_CERT_FILE, and no answer a PostError with its cause; `send_archive`
sends through it without importing httpx."""

from __future__ import annotations

import datetime
import gzip
import ipaddress
import json
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from hbench.plain_http import PostError, post
from tests.hbench.cli.upload_server import upload_server
from tests.http_stub import StubHandler, stub_server

ROOT = Path(__file__).resolve().parents[2]
SEND = """
import json, sys
from pathlib import Path
from hbench.upload import send_archive
answer = send_archive(sys.argv[1], Path(sys.argv[2]), {"hpg-run-token": "hpr_0"})
modules = sorted(sys.modules)
print(json.dumps({"status": answer.status_code, "body": answer.body, "modules": modules}))
"""


@contextmanager
def redirecting() -> Iterator[tuple[str, list[str]]]:
    """An endpoint that answers every POST with a 307 to another path; yields its URL and
    the paths it was asked for."""
    asked: list[str] = []

    class Handler(StubHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            asked.append(self.path)
            self.send_response(307)
            self.send_header("location", "/elsewhere")
            self.send_header("content-length", "0")
            self.end_headers()

    with stub_server(Handler) as port:
        yield f"http://127.0.0.1:{port}/api/bench/uploads", asked


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key, and the key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@contextmanager
def tls_endpoint(cert_file: Path, key_file: Path) -> Iterator[str]:
    """An https endpoint answering 201 with the length of what it was sent."""

    class Handler(StubHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_json(201, {"received": len(body)})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/api/bench/uploads"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_send_archive_streams_the_archive_without_httpx(tmp_path: Path) -> None:
    archive = tmp_path / "job.tgz"
    archive.write_bytes(gzip.compress(b"a job" * 1000))
    with upload_server() as server:
        done = subprocess.run(
            [sys.executable, "-c", SEND, server.url, str(archive)],
            capture_output=True, text=True, check=True, cwd=ROOT,
        )  # fmt: skip
    answer = json.loads(done.stdout)
    assert answer["status"] == 201 and answer["body"]["status"] == "private"
    assert [m for m in answer["modules"] if m.split(".")[0] in ("httpx", "httpcore")] == []
    (received,) = server.received
    assert received.body == archive.read_bytes()
    assert received.headers["content-length"] == str(archive.stat().st_size)
    assert received.headers["hpg-run-token"] == "hpr_0"
    assert received.headers["user-agent"].startswith("hbench/")


def test_a_refusal_is_an_answer_with_its_body() -> None:
    with upload_server() as server:
        server.answer_status = 422
        server.answer_body = {"detail": "no (job-unfinished)", "code": "job-unfinished"}
        body = gzip.compress(b"job")
        status, content = post(server.url, [body], {"content-type": "application/gzip",
                                                    "content-length": str(len(body))})  # fmt: skip
    assert status == 422
    assert json.loads(content)["code"] == "job-unfinished"


def test_a_redirect_is_the_answer_not_followed() -> None:
    with redirecting() as (url, asked):
        status, _ = post(url, [b"x"], {"content-length": "1"})
    assert status == 307
    assert asked == ["/api/bench/uploads"]


def test_no_service_is_a_post_error_naming_its_cause() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(PostError, match=r"^ConnectionRefusedError: "):
        post(f"http://127.0.0.1:{port}/api/bench/uploads", [b"x"], {"content-length": "1"})


@pytest.mark.parametrize("url", ["ftp://example.org/up", "127.0.0.1:8000/api/bench/uploads"])
def test_an_address_not_over_http_is_refused_before_connecting(url: str) -> None:
    with pytest.raises(PostError, match=r"^UnsupportedProtocol: .* is not an http"):
        post(url, [b"x"], {"content-length": "1"})


def test_https_trusts_certifi_roots_or_the_ones_ssl_cert_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert_file, key_file = self_signed(tmp_path)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with tls_endpoint(cert_file, key_file) as url:
        with pytest.raises(PostError, match=r"^SSLCertVerificationError: "):
            post(url, [b"job"], {"content-length": "3"})
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_file))
        status, content = post(url, [b"job"], {"content-length": "3"})
    assert status == 201
    assert json.loads(content) == {"received": 3}
