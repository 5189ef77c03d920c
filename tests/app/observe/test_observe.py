"""What an operator watches: `/metrics`, `/api/ready`, request ids, and the logs of
`hbench-app serve` as JSON lines with the app's own lines and the request ids in them."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.main import create_app
from app.settings import Settings
from tests.app.conftest import LOCAL, NO_REGRADES
from tests.app.http.serving import serving
from tests.app.v1.conftest import summary


def samples(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    found = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def requests_of(found: dict, route: str, status: str) -> float:  # type: ignore[type-arg]
    key = ("hbench_http_requests_total", (("method", "GET"), ("route", route), ("status", status)))
    return float(found.get(key, 0.0))


def test_requests_are_counted_by_route_template_never_by_path(client: TestClient) -> None:
    before = samples(client)
    for _ in range(3):
        assert client.get("/api/health").status_code == 200
    client.get("/api/bench/jobs/00000000-0000-0000-0000-000000000001")
    client.get("/no/such/page/ever")
    after = samples(client)

    assert requests_of(after, "/api/health", "200") - requests_of(before, "/api/health", "200") == 3
    template = "/api/bench/jobs/{job_id}"
    assert requests_of(after, template, "404") - requests_of(before, template, "404") == 1
    assert requests_of(after, "unmatched", "404") - requests_of(before, "unmatched", "404") == 1
    assert not any("00000000-0000" in str(labels) for _, labels in after)


def test_the_outbox_backlog_is_read_from_the_database_as_it_is_scraped(
    tmp_path: Path, database_url: str
) -> None:
    settings = Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_enabled=False,
        **NO_REGRADES,
    )  # fmt: skip
    with TestClient(create_app(settings), **LOCAL) as client:
        assert samples(client)[("hbench_outbox_pending", ())] == 0
        assert client.post("/v1/runs", json=summary()).status_code == 201
        assert client.post("/v1/runs", json=summary(score=50)).status_code == 201
        assert samples(client)[("hbench_outbox_pending", ())] == 2


def test_metrics_can_be_turned_off(tmp_path: Path, database_url: str) -> None:
    settings = Settings(
        state_dir=tmp_path / "state", database_url=database_url, metrics_enabled=False,
        **NO_REGRADES,
    )  # fmt: skip
    with TestClient(create_app(settings), **LOCAL) as client:
        assert client.get("/metrics").status_code == 404


def test_every_answer_carries_a_request_id_and_a_callers_well_formed_one_is_kept(
    client: TestClient,
) -> None:
    made = client.get("/api/health").headers["x-request-id"]
    assert len(made) == 32 and int(made, 16) >= 0
    assert client.get("/api/health").headers["x-request-id"] != made
    kept = client.get("/api/health", headers={"x-request-id": "edge-7f3a:91"})
    assert kept.headers["x-request-id"] == "edge-7f3a:91"
    forged = client.get("/api/health", headers={"x-request-id": "a\tb" + "x" * 100})
    assert forged.headers["x-request-id"] != "a\tb" + "x" * 100


def test_ready_names_each_part_and_refuses_with_the_one_that_failed(settings: Settings) -> None:
    # No writer, so nothing builds the site: its pages answer 404, and it is not ready.
    with TestClient(create_app(settings), **LOCAL) as client:
        unbuilt = client.get("/api/ready")
        assert client.get("/site/index.html").status_code == 404
    assert unbuilt.status_code == 503
    assert "not ready: site: its first build has not finished" in unbuilt.json()["detail"]

    settings = settings.model_copy(update={"writer_enabled": True})
    with TestClient(create_app(settings), **LOCAL) as client:
        deadline = time.monotonic() + 30  # the writer makes its checkout as it starts
        while (answer := client.get("/api/ready")).status_code != 200:
            assert time.monotonic() < deadline, answer.text
            time.sleep(0.1)
        parts = {p["name"]: p["ready"] for p in answer.json()["parts"]}
        assert parts == {
            "database": True,
            "blob store": True,
            "site": True,
            "data repository": True,
        }

        (settings.data_repository_dir / ".git").rename(settings.data_repository_dir / "moved")
        refused = client.get("/api/ready")
    assert refused.status_code == 503
    assert refused.json()["code"] == "service-unavailable"
    assert "data repository" in refused.json()["detail"]
    assert "database" not in refused.json()["detail"]


@pytest.mark.timeout(120)
def test_serve_logs_json_lines_with_the_apps_own_and_each_requests_id(tmp_path: Path) -> None:
    with serving(tmp_path, HBENCH_LOG_FORMAT="json") as served:
        served.client.get("/api/health", headers={"x-request-id": "probe-1234"})
        assert served.client.post("/v1/runs", json=summary()).status_code == 201
        # The writer's round pushes the run: an INFO line of the app's own. Only whole
        # lines are read: the server may be writing the last one.
        deadline = time.monotonic() + 60
        while not any(
            line.startswith("{") and json.loads(line)["logger"] == "app.datarepo.writer"
            for line in served.output.split("\n")[:-1]
        ):
            assert time.monotonic() < deadline, served.output
            time.sleep(0.2)
    output = served.output
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert lines, output
    assert all({"time", "level", "logger", "message", "request_id"} <= set(x) for x in lines)
    access = [x for x in lines if x["logger"] == "uvicorn.access"]
    assert any(x["request_id"] == "probe-1234" and "/api/health" in x["message"] for x in access)
    assert any(x["logger"].startswith("app.") and x["level"] == "INFO" for x in lines), output
    text = [line for line in output.splitlines() if not line.startswith("{")]
    assert not [line for line in text if "HTTP/1.1" in line or "outbox" in line]
