"""`hbench-app serve` with several worker processes (HBENCH_WORKERS): they answer on one
port, each builds the app from the environment with the state directory given on the
command line, and any of them answers a scrape with every worker's figures."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.app.http.test_serve import HBENCH_APP, free_port


def health_count(text: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == "hbench_http_requests_total" and labels.get("route") == "/api/health":
                return float(sample.value)
    return 0.0


@pytest.mark.timeout(180)
def test_two_workers_share_one_port_one_state_and_their_metrics(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBENCH_")}
    env.update(HBENCH_REGRADE_ENABLED="false", HBENCH_WORKERS="2")
    server = subprocess.Popen(
        [HBENCH_APP, "serve", "--port", str(port), "--state-dir", str(tmp_path / "state")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            deadline = time.monotonic() + 90
            while True:
                assert server.poll() is None, server.communicate()[0]
                try:
                    if client.get("/api/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "the service did not start within 90 s"
                time.sleep(0.2)
            before = health_count(client.get("/metrics").text)
            for _ in range(40):
                # A new connection each time, so both workers take some of them.
                assert httpx.get(f"http://127.0.0.1:{port}/api/health").status_code == 200
            after = health_count(client.get("/metrics").text)
            assert client.get("/api/bench/jobs").status_code == 200
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    assert after - before == 40, output
    assert output.count("Started server process") == 2, output
    assert (tmp_path / "state" / "hbench.sqlite3").is_file()
    assert (tmp_path / "state" / "metrics").is_dir()
