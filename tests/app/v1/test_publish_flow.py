"""Publishing a real job puts it in the runs API as `validated`; withdrawing it rejects it."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.app.conftest import TokenFactory, bearer

from ..publish.conftest import (  # noqa: F401 - fixtures, used by name
    FakeClock,
    clock,
    publish,
    sealed,
    sealed_archive,
    uploaded,
)

pytestmark = pytest.mark.harbor


def test_a_published_job_is_a_validated_run_until_withdrawn(
    client: TestClient,
    make_token: TokenFactory,
    sealed_archive: bytes,  # noqa: F811 - the fixture imported above
    clock: FakeClock,  # noqa: F811 - the fixture imported above
) -> None:
    token = make_token("alice")
    job_id = uploaded(client, sealed_archive, token)
    assert publish(client, job_id, token).status_code == 200

    (run,) = client.get("/v1/runs").json()["data"]

    assert (run["benchmarkSlug"], run["harness"], run["status"]) == (
        "hbench-demo",
        "oracle",
        "validated",
    )
    assert (run["score"], run["metric"], run["userId"]) == (80.0, "accuracy", "alice")
    assert (run["modelSlug"], run["taskCount"]) == ("none", 5)
    withdrawn = client.post(f"/api/bench/jobs/{job_id}/withdraw", headers=bearer(token))
    assert withdrawn.status_code == 200, withdrawn.text
    assert client.get("/v1/runs").json()["data"] == []
    assert client.get(f"/v1/runs/{run['id']}").json()["data"]["status"] == "rejected"
