"""`hbench bench list|show|publish|withdraw|delete` against the service, served for real
on a loopback port in this process."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from typer.testing import CliRunner

from hbench.cli.main import app as hbench

from ..bench.conftest import GZIP
from ..conftest import TokenFactory, bearer
from .conftest import NOW, FakeClock

runner = CliRunner()


@pytest.fixture
def served(app: FastAPI) -> Iterator[str]:
    """The app under uvicorn on a free loopback port; yields its base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


def upload(url: str, archive: bytes, token: str) -> dict[str, Any]:
    """Upload a job over HTTP; checking it takes seconds on a busy machine."""
    answer = httpx.post(
        f"{url}/api/bench/uploads", content=archive, headers={**GZIP, **bearer(token)},
        timeout=UPLOAD_TIMEOUT,
    )  # fmt: skip
    assert answer.status_code == 201, answer.text
    stored: dict[str, Any] = answer.json()
    return stored


UPLOAD_TIMEOUT = 120.0


def bench(url: str, token: str, *args: str) -> tuple[int, str]:
    """Run `hbench bench ARGS --url URL --token-env HPG_API_TOKEN` with the token set."""
    result = runner.invoke(
        hbench, ["bench", *args, "--url", url, "--token-env", "HPG_API_TOKEN"],
        env={"HPG_API_TOKEN": token, "COLUMNS": "200"},
    )  # fmt: skip
    return result.exit_code, result.output


def test_your_bench_from_the_terminal(
    served: str, make_token: TokenFactory, sealed_archive: bytes
) -> None:
    token = make_token("alice")
    stored = upload(served, sealed_archive, token)
    job_id = stored["id"]

    code, out = bench(served, token, "list")
    assert code == 0 and job_id in out and "private" in out and "hbench-demo" in out
    code, out = bench(served, token, "show", job_id, "--json")
    assert code == 0 and '"summary"' in out and '"actions"' in out
    code, out = bench(served, token, "show", job_id)
    assert code == 0 and "oracle-k2" in out and "boards: hbench-demo" in out
    assert actions(out) == {
        "publish": "✓",
        "withdraw": "✗ (job-not-published)",
        "delete": "✓",
        "download": "✓",
    }
    assert "is private: it has no score on a board to withdraw" in flat(out)

    code, out = bench(served, token, "delete", job_id, "--confirm", "wrong")
    assert code == 1 and "(delete-confirm-mismatch)" in out

    code, out = bench(served, token, "publish", job_id)
    assert code == 0 and f"published job {job_id} on hbench-demo" in out
    code, out = bench(served, token, "publish", job_id)
    assert code == 1 and "(job-already-published)" in out
    code, out = bench(served, token, "show", job_id)
    assert actions(out)["publish"] == "✗ (job-already-published)"
    assert actions(out)["withdraw"] == "✓"

    code, out = bench(served, token, "withdraw", job_id)
    assert code == 0 and "can't be published again" in out
    code, out = bench(served, token, "show", job_id)
    assert actions(out)["withdraw"] == "✗ (job-withdrawn)"
    assert actions(out)["publish"] == "✗ (job-withdrawn)"
    code, out = bench(served, token, "delete", job_id, "--confirm", "oracle-k2")
    assert code == 0 and f"deleted job {job_id}" in out and "score stays" not in out


def test_show_says_why_past_the_window_and_delete_keeps_a_published_score(
    served: str, make_token: TokenFactory, sealed_archive: bytes, clock: FakeClock
) -> None:
    token = make_token("alice")
    late, kept = (upload(served, sealed_archive, token)["id"] for _ in range(2))
    code, out = bench(served, token, "publish", kept)
    assert code == 0, out
    clock.now = NOW + timedelta(days=30)

    code, out = bench(served, token, "show", late)
    assert code == 0
    assert actions(out)["publish"] == "✗ (publish-window-passed)"
    assert actions(out)["download"] == "✗ (job-files-hidden)"
    assert "a job can be published until" in flat(out)

    code, out = bench(served, token, "delete", kept, "--confirm", "oracle-k2")
    assert code == 0 and "its score stays on hbench-demo" in out


def flat(out: str) -> str:
    """The output with its line wrapping undone."""
    return " ".join(out.split())


def actions(out: str) -> dict[str, str]:
    """What `show` lists under "what you can do:": action -> its tick, or its cross and
    rule code."""
    listed = flat(out.split("what you can do:")[1])
    return {
        name: mark if not code else f"{mark} ({code})"
        for mark, name, code in ACTION.findall(listed)
    }


ACTION = re.compile(
    r"([✓✗]) (publish|withdraw|delete|download)(?:: .*? \(([a-z-]+)\))?(?= [✓✗] |$)"
)


def test_a_missing_token_variable_is_named(served: str) -> None:
    result = runner.invoke(
        hbench, ["bench", "list", "--url", served, "--token-env", "NOT_SET_HERE"], env={}
    )
    assert result.exit_code == 1 and "(bench-token-missing)" in result.output


def test_an_unreachable_service_is_said_so() -> None:
    result = runner.invoke(hbench, ["bench", "list", "--url", "http://127.0.0.1:9"])
    assert result.exit_code == 1 and "(bench-unreachable)" in result.output
