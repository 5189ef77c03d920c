"""`hbench-app serve` with several worker processes (HBENCH_WORKERS): they answer on one
port, each builds the app from the environment with the state directory given on the
command line, any of them answers a scrape with every worker's figures, and the
supervisor's one writer takes their changes to the data repository and the site."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.app.http.serving import serving
from tests.app.v1.conftest import summary


def health_count(text: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == "hbench_http_requests_total" and labels.get("route") == "/api/health":
                return float(sample.value)
    return 0.0


@pytest.mark.timeout(180)
def test_two_workers_share_one_port_one_state_and_their_metrics(tmp_path: Path) -> None:
    with serving(tmp_path, HBENCH_WORKERS="2") as served:
        before = health_count(served.client.get("/metrics").text)
        for _ in range(40):
            # A new connection each time, so both workers take some of them.
            assert httpx.get(f"{served.url}/api/health").status_code == 200
        after = health_count(served.client.get("/metrics").text)
        assert served.client.get("/api/bench/jobs").status_code == 200
        # The supervisor's writer takes the workers' changes to the data repository.
        pushed = served.client.post("/v1/runs", json=summary())
        assert pushed.status_code == 201
        page = urlsplit(pushed.json()["url"]).path
        deadline = time.monotonic() + 60
        while served.client.get(page).status_code != 200:
            assert time.monotonic() < deadline, "the run's page did not appear within 60 s"
            time.sleep(0.5)
    output = served.output
    assert after - before == 40, output
    assert output.count("Started server process") == 2, output
    assert (tmp_path / "state" / "hbench.sqlite3").is_file()
    assert (tmp_path / "state" / "metrics").is_dir()
