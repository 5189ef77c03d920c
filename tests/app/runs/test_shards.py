"""Sharded issued runs: the split (deterministic, disjoint, covering, balanced), one run and
K shards issued in one transaction, each with its spec and token, refused whole."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from dataclasses import replace

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import JsonValue
from sqlalchemy.orm import Session

from app.auth.tokens import hash_token
from app.db.models import IssuedRunStatus
from app.registry import default_registry, get_registry
from app.runs.shards import plan_problems, shard_spec, split
from hbench.digest import spec_digest
from hbench.errors import Problem

from .conftest import DEMO, FakeClock, count_runs, issue, stored_runs

TASKS = ["count-lines", "hello-file", "prime-factor", "reverse-words", "sum-numbers"]


def codes(problems: Sequence[Problem]) -> list[str]:
    return [p.code for p in problems]


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_a_split_is_disjoint_covering_balanced_and_the_same_every_time(count: int) -> None:
    shards = split(list(reversed(TASKS)), count)

    assert shards == split(TASKS, count)  # the order the tasks come in changes nothing
    assert sorted(itertools.chain(*shards)) == TASKS
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    assert all(shard == sorted(shard) for shard in shards)
    assert plan_problems(TASKS, shards) == []


def test_with_no_times_known_the_tasks_are_dealt_round_robin() -> None:
    assert split(TASKS, 3) == [
        ["count-lines", "reverse-words"],
        ["hello-file", "sum-numbers"],
        ["prime-factor"],
    ]


def test_known_times_deal_the_longest_first_to_the_least_loaded_shard() -> None:
    seconds = {"count-lines": 60, "hello-file": 10, "prime-factor": 50, "reverse-words": 30,
               "sum-numbers": 30}  # fmt: skip

    shards = split(TASKS, 2, seconds)

    # 60 -> A; 50 -> B; 30 (reverse-words) -> B (80); 30 (sum-numbers) -> A (90); 10 -> B.
    assert shards == [
        ["count-lines", "sum-numbers"],
        ["hello-file", "prime-factor", "reverse-words"],
    ]
    assert plan_problems(TASKS, shards, seconds) == []


def test_a_plan_that_overlaps_misses_or_strays_is_refused_with_every_reason() -> None:
    plan = [["count-lines", "hello-file"], ["hello-file", "nope"], ["prime-factor"]]

    problems = plan_problems(TASKS, plan)

    assert codes(problems) == ["run-shards-overlap"] * 3
    text = " ".join(p.message for p in problems)
    assert "hello-file is in shards 1 and 2" in text
    assert "no shard runs reverse-words, sum-numbers" in text
    assert "nope is not a task of the run" in text


def test_an_empty_or_lopsided_plan_is_unbalanced() -> None:
    empty = plan_problems(TASKS, [TASKS, []])
    lopsided = plan_problems(TASKS, [TASKS[:4], TASKS[4:]])

    assert codes(empty) == ["run-shards-unbalanced"]
    assert "shard 2 with nothing to run" in empty[0].message
    assert codes(lopsided) == ["run-shards-unbalanced"]


def test_a_shard_spec_is_the_runs_with_its_own_name_and_tasks() -> None:
    spec: dict[str, JsonValue] = {
        "job_name": "run-x",
        "n_attempts": 1,
        "agents": [{"name": "oracle"}],
        "datasets": [{"name": "hbench-demo", "version": "1.0"}],
    }

    shard = shard_spec(spec, ["hello-file"], 1, 3)

    assert shard["job_name"] == "run-x-2of3"
    assert shard["datasets"] == [
        {"name": "hbench-demo", "version": "1.0", "task_names": ["hello-file"]}
    ]
    assert spec["datasets"] == [{"name": "hbench-demo", "version": "1.0"}]  # not changed


def test_a_sharded_run_is_one_run_with_a_spec_and_token_per_shard(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    answer = issue(client, {**DEMO, "shards": 3})

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["token"] is None
    assert "task_names" not in body["spec"]["datasets"][0]
    shards = body["shards"]
    assert [s["index"] for s in shards] == [1, 2, 3]
    assert [s["tasks"] for s in shards] == split(TASKS, 3)
    assert len({s["token"] for s in shards}) == 3
    for shard in shards:
        assert shard["job_name"] == f"{body['job_name']}-{shard['index']}of3"
        assert shard["spec"]["datasets"][0]["task_names"] == shard["tasks"]
        assert shard["spec_digest"] == spec_digest(shard["spec"])
        assert {k: v for k, v in shard["spec"].items() if k not in {"job_name", "datasets"}} == {
            k: v for k, v in body["spec"].items() if k not in {"job_name", "datasets"}
        }
    runs = stored_runs(db)
    (parent,) = [run for run in runs if run.parent_id is None]
    assert (parent.id, parent.shard_count) == (uuid.UUID(body["run_id"]), 3)
    children = sorted(
        (r for r in runs if r.parent_id == parent.id), key=lambda r: r.shard_index or 0
    )
    assert [(str(r.id), r.shard_index, r.shard_count) for r in children] == [
        (s["run_id"], s["index"] - 1, 3) for s in shards
    ]

    listed = client.get("/api/local-runs").json()["runs"]
    assert [run["run_id"] for run in listed] == [body["run_id"]]  # the run, not its shards
    assert listed[0]["shards"] == {"count": 3, "uploaded": 0, "missing": [1, 2, 3]}
    assert "problem" not in listed[0]


def test_a_sharded_run_takes_one_slot_of_the_boards_limits(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    waiting = default_registry().boards["hbench-demo"].limits.runs_waiting
    for _ in range(waiting):  # each a run of three shards: four rows, one slot
        assert issue(client, {**DEMO, "shards": 3}).status_code == 201

    next_one = issue(client, DEMO)

    assert (next_one.status_code, next_one.json()["code"]) == (429, "run-limit-waiting")
    assert f"{waiting} of your runs" in next_one.json()["detail"]
    assert count_runs(db) == waiting * 4


@pytest.mark.parametrize(
    ("shards", "code"), [(9, "run-shards-too-many"), (6, "run-shards-unbalanced")]
)
def test_too_many_shards_or_more_than_tasks_are_refused_and_nothing_is_stored(
    client: TestClient, db: Session, clock: FakeClock, shards: int, code: str
) -> None:
    answer = issue(client, {**DEMO, "shards": shards})

    assert (answer.status_code, answer.json()["code"]) == (422, code)
    assert answer.json()["errors"][0]["path"] == "body.shards"
    assert count_runs(db) == 0


def test_abandoning_the_run_abandons_its_shards_and_a_shard_alone_is_refused(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    body = issue(client, {**DEMO, "shards": 2}).json()

    alone = client.post(f"/api/local-runs/{body['shards'][0]['run_id']}/abandon")
    assert (alone.status_code, alone.json()["code"]) == (409, "run-shard-part")
    assert body["run_id"] in alone.json()["detail"]

    whole = client.post(f"/api/local-runs/{body['run_id']}/abandon")
    assert whole.status_code == 200, whole.text
    assert {run.status for run in stored_runs(db)} == {IssuedRunStatus.ABANDONED}


def test_a_sharded_run_expiring_with_a_shard_missing_says_so(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    body = issue(client, {**DEMO, "shards": 2}).json()
    clock.advance(hours=49)

    (run,) = client.get("/api/local-runs").json()["runs"]

    assert run["run_id"] == body["run_id"]
    assert (run["status"], run["problem"]) == ("expired", "run-shards-missing")
    assert run["shards"]["missing"] == [1, 2]


def test_a_shard_is_claimed_with_a_new_token_and_the_run_read_back(
    client: TestClient, db: Session, clock: FakeClock
) -> None:
    body = issue(client, {**DEMO, "shards": 2}).json()
    shard = body["shards"][1]

    claimed = client.post(f"/api/local-runs/{shard['run_id']}/claim")

    assert claimed.status_code == 200, claimed.text
    answer = claimed.json()
    assert (answer["run_id"], answer["job_name"]) == (shard["run_id"], shard["job_name"])
    assert answer["spec"] == shard["spec"] and answer["spec_digest"] == shard["spec_digest"]
    assert answer["token"] != shard["token"]  # the issued one stops working
    (row,) = [run for run in stored_runs(db) if str(run.id) == shard["run_id"]]
    assert row.token_hash == hash_token(answer["token"])
    assert claimed.headers["cache-control"] == "no-store"

    whole = client.post(f"/api/local-runs/{body['run_id']}/claim")
    assert (whole.status_code, whole.json()["code"]) == (409, "run-shard-part")

    read = client.get(f"/api/local-runs/{body['run_id']}")
    assert read.status_code == 200, read.text
    assert read.json()["shards"] == {"count": 2, "uploaded": 0, "missing": [1, 2]}
    assert "job_id" not in read.json()  # none until every shard is uploaded
    missing = client.get(f"/api/local-runs/{uuid.uuid4()}")
    assert (missing.status_code, missing.json()["code"]) == (404, "run-not-found")


def test_the_registrys_expected_times_balance_the_split(
    app: FastAPI, client: TestClient, clock: FakeClock
) -> None:
    registry = default_registry()
    seconds = {"count-lines": 60.0, "hello-file": 10.0, "prime-factor": 50.0,
               "reverse-words": 30.0, "sum-numbers": 30.0}  # fmt: skip
    benchmark = registry.benchmarks["hbench-demo"]
    timed = benchmark.model_copy(
        update={"harbor": benchmark.harbor.model_copy(update={"task_seconds": seconds})}
    )
    app.dependency_overrides[get_registry] = lambda: replace(
        registry, benchmarks={**registry.benchmarks, "hbench-demo": timed}
    )

    answer = issue(client, {**DEMO, "shards": 2})

    assert answer.status_code == 201, answer.text
    assert [s["tasks"] for s in answer.json()["shards"]] == split(TASKS, 2, seconds)
    assert split(TASKS, 2, seconds) != split(TASKS, 2)
