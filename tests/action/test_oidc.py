"""The OIDC path of the issue step: the token is requested from the runner's endpoint with
the service as its audience, masked, and sent to the service as the bearer."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hbench.action import issue
from hbench.action.oidc import request_url
from hbench.digest import spec_digest
from tests.action.runner import read_file_command
from tests.http_stub import StubHandler, stub_server

JWT = "eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJ4In0.c2lnbmF0dXJl"
REQUEST_TOKEN = "runner-request-token-1234"
RUN_TOKEN = "hpr_issued_run_token_5678"


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Endpoints:
    """The runner's token endpoint and the service's issue endpoint, on one loopback port."""

    url: str
    received: list[Recorded] = field(default_factory=list)


@contextmanager
def endpoints(answer: dict[str, Any] | None = None) -> Iterator[Endpoints]:
    """The runner's token endpoint and the service, answering `answer` (by default an
    issued run's) to every POST."""
    state = Endpoints(url="")

    class Handler(StubHandler):
        def record(self) -> Recorded:
            parts = urlsplit(self.path)
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length)) if length else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            recorded = Recorded(self.command, parts.path, parse_qs(parts.query), headers, body)
            state.received.append(recorded)
            return recorded

        def do_GET(self) -> None:
            self.record()
            self.send_json(200, {"count": 1, "value": JWT})

        def do_POST(self) -> None:
            self.record()
            self.send_json(201, answer or issued_answer())

    with stub_server(Handler) as port:
        state.url = f"http://127.0.0.1:{port}"
        yield state


def issued_answer() -> dict[str, Any]:
    spec = {"job_name": "hbench-demo-oracle-a3f9c1-00000001", "n_attempts": 1}
    return {
        "run_id": "0f0e0d0c-0b0a-4909-8807-060504030201",
        "board": "hbench-demo",
        "submission": "oracle-a3f9c1",
        "job_name": "hbench-demo-oracle-a3f9c1-00000001",
        "spec": spec,
        "spec_digest": spec_digest(spec),
        "prompt_template": None,
        "token": RUN_TOKEN,
        "issued_at": "2026-11-30T00:00:00Z",
        "expires_at": "2026-12-02T00:00:00Z",
        "environment": [{"name": "HARBOR_TELEMETRY", "value": "0", "secret": False,
                         "description": "keeps Harbor's telemetry off"}],
    }  # fmt: skip


def runner_environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "temp").mkdir()
    (tmp_path / "output").write_text("")
    return {
        "GITHUB_WORKSPACE": str(tmp_path / "workspace"),
        "RUNNER_TEMP": str(tmp_path / "temp"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "INPUT_BOARD": "hbench-demo",
        "INPUT_AGENT": "oracle",
        **extra,
    }


def test_the_oidc_token_is_requested_for_the_service_and_sent_as_the_bearer(
    tmp_path: Path,
) -> None:
    with endpoints() as server:
        service_url = f"{server.url}/hbench/"
        environ = runner_environ(
            tmp_path,
            INPUT_SERVICE_URL=service_url,
            ACTIONS_ID_TOKEN_REQUEST_URL=f"{server.url}/_apis/idtoken?api-version=2.0",
            ACTIONS_ID_TOKEN_REQUEST_TOKEN=REQUEST_TOKEN,
        )
        printed = io.StringIO()
        with redirect_stdout(printed):
            code = issue.main([], environ)

    assert code == 0, printed.getvalue()
    asked, issued = server.received
    assert (asked.method, asked.path) == ("GET", "/_apis/idtoken")
    assert asked.query == {"api-version": ["2.0"], "audience": [f"{server.url}/hbench"]}
    assert asked.headers["authorization"] == f"bearer {REQUEST_TOKEN}"
    assert (issued.method, issued.path) == ("POST", "/hbench/api/local-runs")
    assert issued.headers["authorization"] == f"Bearer {JWT}"
    assert issued.body == {"arena": "hbench-demo", "declarative": {"agent": "oracle"}}
    # Both tokens are masked before any other line; neither reaches the outputs.
    lines = printed.getvalue().splitlines()
    assert lines[:2] == [f"::add-mask::{JWT}", f"::add-mask::{RUN_TOKEN}"]
    assert all(JWT not in line and RUN_TOKEN not in line for line in lines[2:])
    outputs = read_file_command(tmp_path / "output")
    assert outputs["submission"] == "oracle-a3f9c1"
    assert all(RUN_TOKEN not in value and JWT not in value for value in outputs.values())
    assert Path(outputs["token-file"]).read_text() == RUN_TOKEN + "\n"
    assert Path(outputs["token-file"]).stat().st_mode & 0o777 == 0o600
    assert Path(outputs["token-file"]).is_relative_to(tmp_path / "temp")
    run_dir = Path(outputs["run-dir"])
    assert sorted(p.name for p in run_dir.iterdir()) == ["run.json", "spec.json"]


def test_an_api_token_skips_the_oidc_request(tmp_path: Path) -> None:
    with endpoints() as server:
        environ = runner_environ(
            tmp_path,
            INPUT_SERVICE_URL=server.url,
            INPUT_API_TOKEN="hpg_test_api_token",
            ACTIONS_ID_TOKEN_REQUEST_URL=f"{server.url}/_apis/idtoken?api-version=2.0",
            ACTIONS_ID_TOKEN_REQUEST_TOKEN=REQUEST_TOKEN,
        )
        with redirect_stdout(io.StringIO()):
            assert issue.main([], environ) == 0

    (issued,) = server.received
    assert issued.headers["authorization"] == "Bearer hpg_test_api_token"


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("https://r.example/idtoken?api-version=2.0", "https://r.example/idtoken?api-version=2.0&"),
        ("https://r.example/idtoken", "https://r.example/idtoken?"),
    ],
)
def test_the_audience_joins_the_request_url(base: str, expected: str) -> None:
    assert request_url(base, "https://hbench.example") == (
        expected + "audience=https%3A%2F%2Fhbench.example"
    )
