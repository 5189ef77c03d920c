"""`hbench-app serve` itself, as its own process: it believes no forwarded address by
default, and its access log keeps no sign-in code."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.app.v1.conftest import summary
from tests.hbench.cli.service import loopback_socket

HBENCH_APP = str(Path(sys.executable).with_name("hbench-app"))
CODE, STATE = "0c9a8b7e6f5d4c3b2a19", "Zq7Xw3Vt1Ur9Ys5Tp2Oq8Nm4Lk6Jh0Gf"


def free_port() -> int:
    with loopback_socket() as sock:
        port: int = sock.getsockname()[1]
    return port


def test_serve_believes_no_forwarded_address_and_logs_no_sign_in_code(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBENCH_")}
    env["HBENCH_REGRADE_ENABLED"] = "false"
    server = subprocess.Popen(
        [HBENCH_APP, "serve", "--port", str(port), "--state-dir", str(tmp_path / "state")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            deadline = time.monotonic() + 30
            while True:
                assert server.poll() is None, server.communicate()[0]
                try:
                    if client.get("/api/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "the service did not start within 30 s"
                time.sleep(0.1)
            statuses = [
                client.post(
                    "/v1/runs",
                    json=summary(),
                    headers={"x-forwarded-for": f"198.51.100.{n}", "forwarded": f"for=192.0.2.{n}"},
                ).status_code
                for n in range(31)
            ]
            client.get("/auth/github/callback", params={"code": CODE, "state": STATE})
    finally:
        server.terminate()
        output = server.communicate(timeout=15)[0]
    assert statuses == [201] * 30 + [429]
    assert "/auth/github/callback?[filtered]" in output
    assert CODE not in output and STATE not in output
