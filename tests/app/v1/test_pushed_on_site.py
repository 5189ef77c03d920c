"""A pushed run reaches the site through the outbox: the data repository keeps its record,
the site gives it a page, counts it in the reproduced panels and the leaderboard as the
runs API does, and says that no job backs it."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.datarepo.service import rebuild_site
from app.main import create_app
from app.settings import Settings
from registry.datarepo import layout
from sitebuild import page
from sitebuild.audit import audit_data_repo
from sitebuild.runs import PROVES
from tests.app.conftest import LOCAL, NO_REGRADES

from ..publish.conftest import write_data_repository
from .conftest import summary

KEY = "sk-ant-api03-" + "Zq8xW3rT6yU1iO4pA7sD0fG2hJ5kL9zX" * 2 + "AA"


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Local mode with its writer off: the test runs it."""
    return Settings(
        state_dir=tmp_path / "state", database_url=database_url, writer_enabled=False,
        **NO_REGRADES,
    )  # fmt: skip


@pytest.fixture
def client(settings: Settings) -> TestClient:
    app: FastAPI = create_app(settings)
    with TestClient(app, **LOCAL) as client:
        yield client  # type: ignore[misc]


def test_a_pushed_run_gets_its_page_and_counts_where_the_api_counts_it(
    client: TestClient, settings: Settings
) -> None:
    first = client.post("/v1/runs", json=summary(score=84))
    second = client.post("/v1/runs", json=summary(score=90, notes=None, taskRewards=None))
    assert first.status_code == second.status_code == 201, first.text
    run = first.json()["data"]

    checkout = write_data_repository(settings)
    record = json.loads((checkout / layout.pushed_run_file(run["id"])).read_text())
    assert (record["benchmark"], record["score"], record["harness"]) == ("mmlu-pro", 84, "codex")
    assert record["taskRewards"] == [
        {"task": "mmlu-pro-0001", "reward": 1.0},
        {"task": "mmlu-pro-0002", "reward": 0.0},
    ]
    rebuild_site(settings)

    # The answer's address is the run's page, which the service serves once it is built.
    base = settings.public_url or str(client.base_url).rstrip("/")
    assert first.json()["url"] == f"{base}/site/{page.pushed_run(run['id'])}"
    shown = client.get(urlsplit(first.json()["url"]).path)
    assert shown.status_code == 200
    assert "84" in shown.text and "temperature 0; 1 attempt" in shown.text
    assert PROVES in shown.text and "mmlu-pro-0002" in shown.text
    listed = client.get(f"/site/{page.pushed_runs()}").text
    assert run["id"] in listed and second.json()["data"]["id"] in listed
    detail = client.get(f"/site/{page.run_detail()}")
    assert detail.status_code == 200 and 'id="run-detail"' in detail.text

    (api,) = client.get("/v1/bench/reproduced", params={"benchmark": "mmlu-pro"}).json()["data"]
    site_json = client.get("/site/" + page.benchmark("mmlu-pro").removesuffix(".html") + ".json")
    (panel,) = site_json.json()["reproduced"]
    assert (panel["runCount"], panel["median"]) == (api["runCount"], api["median"]) == (2, 87)
    assert panel["pushedCount"] == 2 and panel["modelSlug"] == api["modelSlug"]
    if api["modelSlug"] == run["modelSlug"] and run["modelSlug"] is not None:
        leaderboard = client.get("/site/leaderboard/index.json").json()
        (cell,) = [c for c in leaderboard["cells"] if c["model"] == run["modelSlug"]
                   and c["benchmark"] == "mmlu-pro"]  # fmt: skip
        assert cell["reproduced"] == {"runCount": 2, "pushedCount": 2, "median": 87}


def test_a_pushed_runs_text_is_redacted_before_it_is_stored_or_public(
    client: TestClient, settings: Settings
) -> None:
    body = summary(notes=f"ran with ANTHROPIC_API_KEY={KEY}")
    body["taskRewards"] = [{"task": f"task-{KEY}", "reward": 1}]
    pushed = client.post("/v1/runs", json=body)
    assert pushed.status_code == 201, pushed.text
    assert KEY not in pushed.text
    assert "[REDACTED]" in pushed.json()["data"]["notes"]

    checkout = write_data_repository(settings)
    rebuild_site(settings)
    written = [p.read_text() for p in checkout.rglob("*.json")]
    built = [
        p.read_text() for p in settings.site_dir.rglob("*.*") if p.suffix in {".html", ".json"}
    ]
    assert written and built
    assert not any(KEY in text for text in [*written, *built])


def test_a_maintainer_takes_a_pushed_run_off_the_site_and_out_of_the_counts(
    client: TestClient, settings: Settings
) -> None:
    kept = client.post("/v1/runs", json=summary(score=70)).json()["data"]
    bad = client.post("/v1/runs", json=summary(score=100, notes="trust me")).json()["data"]
    note = "the summary's rewards give 50, not 100"
    down = client.post(
        f"/api/admin/runs/{bad['id']}/take-down",
        json={"reason": "score-cannot-be-right", "note": note},
    )  # the local user is a maintainer
    assert down.status_code == 200, down.text
    assert down.json()["board"] is None and down.json()["run_id"] == bad["id"]
    again = client.post(
        f"/api/admin/runs/{bad['id']}/take-down", json={"reason": "breaks-terms", "note": "x"}
    )
    assert again.status_code == 409 or again.json()["code"] == "takedown-run-not-public"

    assert [r["id"] for r in client.get("/v1/runs").json()["data"]] == [kept["id"]]
    assert client.get(f"/v1/runs/{bad['id']}").json()["data"]["status"] == "rejected"
    checkout = write_data_repository(settings)
    record = json.loads((checkout / layout.pushed_run_file(bad["id"])).read_text())
    assert (record["status"], record["takeDownReason"], record["takeDownNote"]) == (
        "taken_down", "score-cannot-be-right", note,
    )  # fmt: skip
    assert "status" not in json.loads((checkout / layout.pushed_run_file(kept["id"])).read_text())
    (line,) = [
        json.loads(text)
        for log in (checkout / "audit").glob("*.jsonl")
        for text in log.read_text().splitlines()
        if json.loads(text).get("run") == bad["id"]
    ]
    assert (line["action"], line["reason"], line["note"]) == (
        "take_down",
        "score-cannot-be-right",
        note,
    )
    assert "board" not in line  # a pushed run is on no board
    assert audit_data_repo(checkout).agrees
    rebuild_site(settings)

    listed = client.get(f"/site/{page.pushed_runs()}").text
    assert kept["id"] in listed and bad["id"] not in listed
    shown = client.get(f"/site/{page.pushed_run(bad['id'])}").text
    assert "Taken down by the maintainers" in shown, shown[shown.find("<main") :][:1500]
    assert "rewards give 50, not 100" in shown
    panel_json = "/site/" + page.benchmark("mmlu-pro").removesuffix(".html") + ".json"
    (panel,) = client.get(panel_json).json()["reproduced"]
    assert (panel["runCount"], panel["median"]) == (1, 70)
    (api,) = client.get("/v1/bench/reproduced", params={"benchmark": "mmlu-pro"}).json()["data"]
    assert (api["runCount"], api["median"]) == (1, 70)
    audit_page = client.get(f"/site/{page.audit_month(line['time'][:7])}").text
    assert bad["id"] in audit_page and "pushed run" in audit_page
