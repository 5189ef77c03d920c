"""`hbench push`: a summary from a real Harbor job folder, or from a file, sent to the real
service's runs API on a loopback port, on each database."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.auth.service import create_api_token, ensure_account
from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from hbench import __version__
from tests.app.conftest import NO_REGRADES, database_url, migrated_database_url  # noqa: F401 - both databases
from tests.conftest import HarborJobFactory
from tests.hbench.cli.helpers import hbench
from tests.hbench.cli.service import serving

pytestmark = pytest.mark.harbor


@pytest.fixture(scope="module")
def demo_job(harbor_job: HarborJobFactory) -> Path:
    """The oracle on the demo dataset, two attempts a task: it solves four tasks of five."""
    return harbor_job("oracle-k2", "-k", "2")


@pytest.fixture
def service(tmp_path: Path, database_url: str) -> Iterator[tuple[str, str]]:  # noqa: F811 - the fixture
    """The service's base URL, and an API token of alice's."""
    settings = Settings(
        mode="local", state_dir=tmp_path / "state", database_url=database_url, **NO_REGRADES
    )
    database = Database(database_url)
    try:
        with database.session() as session:
            _, token = create_api_token(session, ensure_account(session, "alice"), "push")
        with serving(create_app(settings)) as url:
            yield url, token
    finally:
        database.dispose()


def test_dry_run_prints_the_summary_of_a_job_folder(tmp_path: Path, demo_job: Path) -> None:
    shown = hbench(
        "push", str(demo_job), "--model", "none", "--notes", "oracle; 2 attempts",
        "--dry-run", "--url", "http://127.0.0.1:9", cwd=tmp_path,
    )  # fmt: skip

    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    rewards = body.pop("taskRewards")
    assert body == {
        "benchmarkSlug": "hbench-demo", "model": "none", "harness": "oracle", "taskCount": 5,
        "nAttempts": 2, "score": 80.0, "metric": "accuracy", "tokensUsed": None,
        "costUsd": None, "harborVersion": body["harborVersion"], "cliVersion": __version__,
        "resultsHash": hashlib.sha256((demo_job / "result.json").read_bytes()).hexdigest(),
        "notes": "oracle; 2 attempts",
    }  # fmt: skip
    assert body["harborVersion"].startswith("0.25")
    assert len(rewards) == 10
    assert sorted({r["task"] for r in rewards}) == [
        "count-lines", "hello-file", "prime-factor", "reverse-words", "sum-numbers",
    ]  # fmt: skip
    assert sum(r["reward"] for r in rewards) == 8


def test_a_job_folder_is_pushed_and_read_back(
    tmp_path: Path, demo_job: Path, service: tuple[str, str]
) -> None:
    url, token = service
    pushed = hbench(
        "push", str(demo_job), "--model", "none", "--url", url, "--token-env", "MY_TOKEN",
        cwd=tmp_path, env={"MY_TOKEN": token},
    )  # fmt: skip

    assert pushed.returncode == 0, pushed.stderr
    run_url = pushed.stdout.strip().splitlines()[-1]
    # The address printed is the run's page on the service's site.
    assert run_url.startswith(f"{url}/site/runs/run_") and run_url.endswith(".html")
    run_id = run_url.rsplit("/", 1)[-1].removesuffix(".html")
    run = httpx.get(f"{url}/v1/runs/{run_id}").json()["data"]
    assert run["id"] == run_id
    assert (run["benchmarkSlug"], run["modelSlug"], run["score"]) == ("hbench-demo", "none", 80.0)
    assert (run["userId"], run["status"]) == ("alice", "uploaded")
    assert token not in pushed.stdout + pushed.stderr
    reproduced = httpx.get(f"{url}/v1/bench/reproduced", params={"benchmark": "hbench-demo"})
    assert reproduced.json()["data"][0]["runCount"] == 1


def test_a_refused_summary_prints_the_message_and_code(
    tmp_path: Path, service: tuple[str, str]
) -> None:
    url, _ = service
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({
        "benchmarkSlug": "hbench-demo", "model": "none", "harness": "oracle", "taskCount": 5,
        "nAttempts": 1, "score": 101, "metric": "accuracy",
    }))  # fmt: skip

    refused = hbench("push", str(summary), "--url", url, cwd=tmp_path)

    assert refused.returncode == 1
    assert "Invalid input (HTTP 400) (validation_error)" in refused.stderr
    assert "score" in refused.stderr
    assert httpx.get(f"{url}/v1/runs").json()["data"] == []


def test_an_agent_that_calls_no_model_is_pushed_with_the_model_none(
    tmp_path: Path, demo_job: Path
) -> None:
    shown = hbench("push", str(demo_job), "--dry-run", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["model"] == "none"
