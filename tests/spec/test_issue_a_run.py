"""Promises of "Issue a run first" (../shared/spec/hbench-issue-a-run.txt) that no other
test drove: the run token is answered once and opens nothing but its upload (not even the
abandoning of its own run: the Action abandons with the API token or the job's OIDC
token), and the hardware a run declares is kept with it and shown on no page."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.app.conftest import TokenFactory, bearer
from tests.app.runs.conftest import DEMO
from tests.app.web.conftest import submit

RUN_TOKEN = "hpg-run-token"
"""The header an upload sends a run token in."""


def test_the_run_token_is_answered_once_and_opens_nothing_else(
    remote: TestClient, make_token: TokenFactory
) -> None:
    api = bearer(make_token("alice"))
    issued = remote.post("/api/local-runs", json=DEMO, headers=api)
    assert issued.status_code == 201, issued.text
    answer = issued.json()
    token, run_id = answer["token"], answer["run_id"]
    assert token.startswith("hpr_")

    # Sent in the answer only: the list of runs, the way back to it, holds none.
    listed = remote.get("/api/local-runs", headers=api)
    assert listed.status_code == 200 and run_id in listed.text
    assert token not in listed.text

    # As a credential for anything but its upload, it signs in to nothing.
    other = remote.post("/api/local-runs", json=DEMO, headers=api).json()["run_id"]
    for how in (bearer(token), {RUN_TOKEN: token}):
        calls = [
            remote.get("/api/local-runs", headers=how),
            remote.post("/api/local-runs", json=DEMO, headers=how),
            remote.get("/api/bench/jobs", headers=how),
        ]
        assert [call.status_code for call in calls] == [401] * len(calls), [c.text for c in calls]
    for how in (bearer(token), {RUN_TOKEN: token}):
        for run in (run_id, other):
            given_up = remote.post(f"/api/local-runs/{run}/abandon", headers=how)
            assert given_up.status_code == 401, given_up.text
    statuses = {
        r["run_id"]: r["status"] for r in remote.get("/api/local-runs", headers=api).json()["runs"]
    }
    assert statuses == {run_id: "issued", other: "issued"}


def test_the_hardware_declared_is_kept_and_no_page_shows_it(client: TestClient) -> None:
    marker = "Marker-GPU-7731"
    issued = client.post("/api/local-runs", json={**DEMO, "hardware": {"gpu": marker}})
    assert issued.status_code == 201, issued.text
    on_page = submit(
        client, "/run", "/run",
        {"board": "hbench-demo", "agent": "oracle", "hardware": f"cpu={marker}-form"},
    )  # fmt: skip
    assert on_page.status_code == 200, on_page.text
    assert "Your run is issued" in on_page.text

    # Kept with each run, and answered to its owner by the API...
    runs = client.get("/api/local-runs").json()["runs"]
    assert sorted(run["hardware"].get("gpu") or run["hardware"]["cpu"] for run in runs) == [
        marker, f"{marker}-form",
    ]  # fmt: skip
    # ...but no page shows it: not the issued run's page, Your bench, nor the run's spec.
    assert marker not in on_page.text
    for page in ("/bench", "/run"):
        shown = client.get(page)
        assert shown.status_code == 200 and marker not in shown.text, page
    assert all(marker not in str(run["spec"]) for run in runs if "spec" in run)
