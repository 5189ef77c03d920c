"""Request bodies: each endpoint's maximum, refused before it is buffered (with a
`Content-Length`, before a byte is read); JSON nested too deep; and the body guard's
refusals in the endpoint's own error shape, with nothing left behind."""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy import func
from sqlalchemy import select as sql_select
from sqlalchemy.orm import Session

from app.db.models import RateLimitHit, ReproducedRun
from app.http.bodies import (
    LIMITS,
    MAX_JSON_DEPTH,
    RUN_SUBMISSION,
    SMALL,
    BodyLimit,
    JsonDepth,
    Pace,
    limit_for,
)
from app.main import create_app
from app.settings import Settings
from app.v1.schemas import MAX_TASK_REWARDS, RunSubmission

from ..conftest import NO_REGRADES
from .conftest import connect, read_response, request_head, served

BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
WIDE = "\U0001f600"  # one character past the BMP: twelve bytes as a JSON escape
MIB = 1024 * 1024


def largest_submission() -> dict[str, Any]:
    """A valid `RunSubmission` with every field at its limit, in its widest characters."""
    return {
        "benchmarkSlug": "mmlu-pro",
        "model": WIDE * 200,
        "harness": WIDE * 100,
        "taskCount": 100_000,
        "nAttempts": 1000,
        "metric": WIDE * 50,
        "score": 99.99999999999997,
        "tokensUsed": 2**63 - 1,
        "costUsd": 1.2345678901234567e300,
        "harborVersion": WIDE * 50,
        "cliVersion": WIDE * 50,
        "resultsHash": "f" * 64,
        "taskRewards": [
            {"task": WIDE * 200, "reward": 0.30000000000000004} for _ in range(MAX_TASK_REWARDS)
        ],
        "notes": WIDE * 2000,
    }


def test_every_endpoint_that_takes_a_body_declares_its_maximum(app: FastAPI) -> None:
    routes = {
        (method, route.path)
        for route in iter_route_contexts(app.routes)
        for method in (getattr(route, "methods", None) or ())
        if method in BODY_METHODS
    }
    assert sorted(routes - set(LIMITS)) == [], "endpoints with no declared maximum"
    assert sorted(set(LIMITS) - routes) == [], "maxima declared for no endpoint"


def test_the_run_summarys_maximum_is_the_largest_valid_submission() -> None:
    body = json.dumps(largest_submission(), indent=2).encode()
    RunSubmission.model_validate_json(body)
    # The schema's own limits bound it from above, and no valid body falls far short.
    assert 0.99 * RUN_SUBMISSION <= len(body) <= RUN_SUBMISSION
    assert 11 * MIB < RUN_SUBMISSION < 12 * MIB


def test_the_largest_valid_submission_passes_and_one_byte_more_is_refused(
    remote: TestClient, db: Session
) -> None:
    body = json.dumps(largest_submission(), indent=2).encode()
    padded = body + b" " * (RUN_SUBMISSION - len(body))
    headers = {"content-type": "application/json"}

    taken = remote.post("/v1/runs", content=padded, headers=headers)
    assert taken.status_code == 201, taken.text[:300]

    refused = remote.post("/v1/runs", content=padded + b" ", headers=headers)
    assert refused.status_code == 413
    assert refused.json()["error"]["code"] == "request-body-too-large"


def test_a_declared_length_over_the_maximum_is_refused_before_the_endpoint_runs(
    remote: TestClient, db: Session
) -> None:
    answer = remote.post(
        "/v1/runs",
        content=b"{" + b" " * RUN_SUBMISSION + b"}",
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 413
    error = answer.json()["error"]
    assert error["code"] == "request-body-too-large"
    assert "over this endpoint's 11.8 MiB" in error["message"]
    # The endpoint never ran: no push counted against the address, no run stored.
    assert db.scalar(sql_select(func.count()).select_from(RateLimitHit)) == 0
    assert db.scalar(sql_select(func.count()).select_from(ReproducedRun)) == 0


def test_a_chunked_body_is_cut_off_where_it_passes_the_maximum(
    client: TestClient, db: Session
) -> None:
    sent = [0]

    def chunks() -> Iterator[bytes]:
        for _ in range(SMALL // 1024 * 4):
            sent[0] += 1024
            yield b" " * 1024

    answer = client.post(
        "/api/tokens", content=chunks(), headers={"content-type": "application/json"}
    )
    assert (answer.status_code, answer.json()["code"]) == (413, "request-body-too-large")
    assert "goes on, over this endpoint's 16.0 KiB" in answer.json()["detail"]


def test_json_nested_too_deep_is_refused_at_the_bracket_that_passes_the_bound(
    remote: TestClient, client: TestClient
) -> None:
    deep = b'{"notes": ' + b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1) + b"}"
    headers = {"content-type": "application/json"}

    runs = remote.post("/v1/runs", content=deep, headers=headers)
    assert runs.status_code == 400
    assert runs.json()["error"]["code"] == "request-json-too-deep"
    issue = client.post("/api/local-runs", content=deep, headers=headers)
    assert (issue.status_code, issue.json()["code"]) == (400, "request-json-too-deep")

    # Brackets inside a string are text, however many; a body at the bound is read.
    quoted = json.dumps({"notes": "[" * 1000 + '\\"{'}).encode()
    answer = remote.post("/v1/runs", content=quoted, headers=headers).json()
    assert answer["error"]["code"] == "validation_error"
    at_bound = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    answer = remote.post("/v1/runs", content=at_bound, headers=headers).json()
    assert answer["error"]["code"] == "validation_error"


def nesting(value: Any) -> int:
    """How deep a parsed JSON value nests arrays and objects."""
    if isinstance(value, dict):
        return 1 + max((nesting(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((nesting(v) for v in value), default=0)
    return 0


def test_nesting_is_counted_the_same_whatever_the_chunks() -> None:
    text = json.dumps({"a": [{"b": ['x\\"[[[', {"c": [[["\\\\"]]]}]}], "d": "]]]"}).encode()
    whole = JsonDepth().feed(text)
    assert whole == nesting(json.loads(text)) == 8
    for size in (1, 2, 3, 7):
        depth = JsonDepth()
        for at in range(0, len(text), size):
            deepest = depth.feed(text[at : at + size])
        assert deepest == whole, size


def test_an_upload_keeps_its_own_cap_and_code(settings: Settings) -> None:
    capped = settings.model_copy(update={"upload_max_bytes": 4096})
    limit = limit_for("POST", "/api/bench/uploads", capped)
    assert limit == BodyLimit(4096, json=False, code="upload-too-large", what="the upload")
    assert limit_for("POST", "/bench/upload", capped).max_bytes == 4096
    assert limit_for("GET", "/api/bench/jobs", capped).max_bytes == SMALL
    assert limit_for("POST", "/api/github/webhooks", capped).code == "webhook-too-large"


def test_the_deadline_is_the_grace_period_and_the_maximum_at_the_deadline_rate(
    settings: Settings,
) -> None:
    pace = Pace.of(settings, 95 * MIB)
    assert (pace.grace, pace.min_rate) == (10.0, 4096)
    assert pace.deadline == pytest.approx(10 + 95 * MIB / 65536)  # about 25 minutes


# The real server: memory stays bounded whatever is sent.


@pytest.fixture
def sqlite_settings(tmp_path: Path) -> Settings:
    """Settings on a SQLite file of their own (the database is not under test here)."""
    return Settings(state_dir=tmp_path / "state", **NO_REGRADES)


def peak_rss_growth(baseline: int) -> int:
    return rss_field("VmHWM") - baseline


def reset_peak_rss() -> int:
    """Reset this process's peak resident size to its current one (Linux), and return it."""
    Path("/proc/self/clear_refs").write_text("5")
    return rss_field("VmRSS")


def rss_field(name: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {name} in /proc/self/status")


def send_chunked_until_answered(sock: socket.socket, path: str, total: int) -> int:
    """Send a chunked body of up to `total` bytes, stopping as soon as an answer comes;
    returns how many body bytes were sent."""
    sock.sendall(
        request_head(
            "POST", path, {"content-type": "application/json", "transfer-encoding": "chunked"}
        )
    )
    piece = b" " * MIB
    sent = 0
    while sent < total:
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            return sent
        sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        sent += len(piece)
    sock.sendall(b"0\r\n\r\n")
    return sent


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
def test_an_over_large_body_to_a_real_server_leaves_its_memory_bounded(
    sqlite_settings: Settings,
) -> None:
    app = create_app(sqlite_settings)
    with served(app, sqlite_settings, log_level="warning") as address:
        baseline = reset_peak_rss()
        with connect(address) as sock:
            sent = send_chunked_until_answered(sock, "/v1/runs", 160 * MIB)
            status, _, body = read_response(sock)
        assert status == 413
        assert json.loads(body)["error"]["code"] == "request-body-too-large"
        # Cut off near the maximum (what the sockets' buffers hold aside), not at the end.
        assert sent < RUN_SUBMISSION + 32 * MIB

        with connect(address) as sock:
            # A declared length over the maximum is answered with no byte of the body sent.
            sock.sendall(
                request_head(
                    "POST",
                    "/v1/runs",
                    {"content-type": "application/json", "content-length": str(200 * MIB)},
                )
            )
            status, _, body = read_response(sock)
        assert status == 413
        assert json.loads(body)["error"]["code"] == "request-body-too-large"
        growth = peak_rss_growth(baseline)
    assert growth < 48 * MIB, f"the server grew by {growth / MIB:.0f} MiB"
