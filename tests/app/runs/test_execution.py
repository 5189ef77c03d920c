"""Execution options of an issued run: the environment type and the concurrent trials a
board's policy allows, written into the spec, recorded on the run, never comparability."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.checks.spec_match import spec_differences
from app.registry import default_registry, get_registry
from hbench.jobs.config import JobConfig
from registry.loader import Registry
from registry.placement import JobFacts, place
from registry.schema import HARBOR_ENVIRONMENT_TYPES, Board
from registry.settings import settings_from_config

from .conftest import DEMO, count_runs, issue, stored_runs

SANDBOXES = ["docker", "daytona", "modal"]


def with_policy(**policy: Any) -> Registry:
    """The default registry, its demo board given this policy."""
    registry = default_registry()
    board = registry.boards["hbench-demo"].model_copy(update=policy)
    return replace(registry, boards={**registry.boards, board.slug: board})


@pytest.fixture
def remote_board(app: FastAPI) -> Registry:
    """The demo board allowing Daytona and Modal besides Docker, and 16 trials at once."""
    registry = with_policy(environments=SANDBOXES, max_concurrent_trials=16)
    app.dependency_overrides[get_registry] = lambda: registry
    return registry


def test_a_default_request_runs_as_before(client: TestClient) -> None:
    answer = issue(client, DEMO)

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert "n_concurrent_trials" not in body["spec"]
    assert "environment" not in body["spec"]
    assert body["execution"] == {"environment": "docker", "n_concurrent_trials": 4}
    assert [v["name"] for v in body["environment"]] == ["HARBOR_TELEMETRY"]


def test_the_board_default_allows_fewer_trials_at_once_in_docker(client: TestClient) -> None:
    answer = issue(client, {**DEMO, "n_concurrent_trials": 2, "environment": "docker"})

    assert answer.status_code == 201, answer.text
    spec = answer.json()["spec"]
    assert spec["n_concurrent_trials"] == 2
    assert "environment" not in spec  # Harbor's default, left out as before
    assert answer.json()["execution"] == {"environment": "docker", "n_concurrent_trials": 2}


def test_harbors_default_concurrency_is_left_out_of_the_spec(client: TestClient) -> None:
    answer = issue(client, {**DEMO, "n_concurrent_trials": 4})

    assert answer.status_code == 201, answer.text
    assert "n_concurrent_trials" not in answer.json()["spec"]
    assert answer.json()["execution"]["n_concurrent_trials"] == 4


def test_an_allowed_sandbox_and_concurrency_go_into_the_spec_and_the_run(
    client: TestClient, db: Session, remote_board: Registry
) -> None:
    answer = issue(client, {**DEMO, "n_concurrent_trials": 16, "environment": "daytona"})

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["spec"]["n_concurrent_trials"] == 16
    assert body["spec"]["environment"] == {"type": "daytona"}
    assert body["execution"] == {"environment": "daytona", "n_concurrent_trials": 16}
    # The sandbox's key is named, never given, as the model providers' keys are.
    assert {
        key: value
        for key, value in next(
            v for v in body["environment"] if v["name"] == "DAYTONA_API_KEY"
        ).items()
        if key != "description"
    } == {"name": "DAYTONA_API_KEY", "value": None, "secret": True}
    (run,) = stored_runs(db)
    assert run.spec["environment"] == {"type": "daytona"}
    assert run.spec["n_concurrent_trials"] == 16
    (listed,) = client.get("/api/local-runs").json()["runs"]
    assert listed["execution"] == {"environment": "daytona", "n_concurrent_trials": 16}


def test_modal_names_both_its_token_variables(client: TestClient, remote_board: Registry) -> None:
    answer = issue(client, {**DEMO, "environment": "modal"})

    assert answer.status_code == 201, answer.text
    secrets = [v["name"] for v in answer.json()["environment"] if v["secret"]]
    assert secrets == ["MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"]


def test_a_board_listing_only_a_sandbox_runs_there_by_default(
    app: FastAPI, client: TestClient
) -> None:
    registry = with_policy(environments=["e2b"])
    app.dependency_overrides[get_registry] = lambda: registry

    answer = issue(client, DEMO)

    assert answer.status_code == 201, answer.text
    assert answer.json()["spec"]["environment"] == {"type": "e2b"}
    docker = issue(client, {**DEMO, "environment": "docker"})
    assert (docker.status_code, docker.json()["code"]) == (422, "run-environment-not-allowed")


def test_an_environment_the_board_does_not_allow_is_refused_and_nothing_stored(
    client: TestClient, db: Session
) -> None:
    answer = issue(client, {**DEMO, "environment": "modal"})

    assert answer.status_code == 422
    (error,) = answer.json()["errors"]
    assert (error["code"], error["path"]) == ("run-environment-not-allowed", "body.environment")
    assert (
        "the board hbench-demo runs its issued runs in docker; 'modal' is not one"
        in (error["message"])
    )
    assert count_runs(db) == 0


def test_more_trials_at_once_than_the_board_allows_are_refused_and_nothing_stored(
    client: TestClient, db: Session, remote_board: Registry
) -> None:
    answer = issue(client, {**DEMO, "n_concurrent_trials": 17, "environment": "ec2"})

    assert answer.status_code == 422
    codes = {(e["code"], e["path"]) for e in answer.json()["errors"]}
    assert codes == {
        ("run-concurrency-refused", "body.n_concurrent_trials"),
        ("run-environment-not-allowed", "body.environment"),
    }
    assert "runs at most 16 trials at once, not 17" in answer.json()["detail"]
    assert count_runs(db) == 0


@pytest.mark.parametrize("value", [0, -1, 10_000, "eight"])
def test_a_concurrency_that_is_no_count_is_an_invalid_request(
    client: TestClient, db: Session, value: object
) -> None:
    answer = issue(client, {**DEMO, "n_concurrent_trials": value})

    assert (answer.status_code, answer.json()["code"]) == (422, "request-invalid")
    assert count_runs(db) == 0


def job_config(spec: dict[str, Any], **ran: Any) -> JobConfig:
    """The config a job run from `spec` records, with what it ran with changed."""
    return JobConfig.model_validate({**spec, **ran})


def test_the_options_never_change_comparability_or_the_board(
    client: TestClient, remote_board: Registry
) -> None:
    plain = issue(client, DEMO).json()["spec"]
    remote = issue(client, {**DEMO, "n_concurrent_trials": 16, "environment": "modal"}).json()[
        "spec"
    ]

    assert settings_from_config(remote) == settings_from_config(plain) == {}
    demo = remote_board.benchmarks["hbench-demo"]
    tasks = demo.task_sets[0].tasks or []
    for environment in ("docker", "modal", "daytona"):
        facts = JobFacts(
            job_id="j",
            dataset="hbench-demo@1.0",
            task_names=tasks,
            model=None,
            n_attempts=1,
            agent="oracle",
            environment=environment,
            settings=settings_from_config(remote),
            task_digests=dict(demo.harbor.task_digests or {}),
        )
        assert place(facts, remote_board).fits == ("hbench-demo",)


def test_a_job_run_as_its_spec_says_matches_and_another_concurrency_does_not(
    client: TestClient, remote_board: Registry
) -> None:
    spec = issue(client, {**DEMO, "n_concurrent_trials": 16, "environment": "modal"}).json()["spec"]

    assert spec_differences(spec, job_config(spec)) == []
    (concurrency,) = spec_differences(spec, job_config(spec, n_concurrent_trials=4))
    assert (concurrency.field, concurrency.issued, concurrency.ran) == (
        "n_concurrent_trials",
        16,
        4,
    )
    (where,) = spec_differences(spec, job_config(spec, environment={"type": "docker"}))
    assert (where.field, where.issued, where.ran) == ("environment.type", "modal", "docker")


def test_a_default_spec_refuses_a_local_change_of_concurrency_or_environment(
    client: TestClient,
) -> None:
    spec = issue(client, DEMO).json()["spec"]

    changed = job_config(spec, n_concurrent_trials=8, environment={"type": "daytona"})
    fields = [d.field for d in spec_differences(spec, changed)]
    assert fields == ["environment.type", "n_concurrent_trials"]


def test_a_board_lists_only_harbors_environment_types() -> None:
    from harbor.models.environment_type import EnvironmentType  # noqa: PLC0415

    assert set(HARBOR_ENVIRONMENT_TYPES) == {member.value for member in EnvironmentType}
    board = default_registry().boards["hbench-demo"]
    assert (board.environments, board.max_concurrent_trials) == (["docker"], 4)
    fields = board.to_json_dict()
    with pytest.raises(ValidationError, match="not Harbor environment types"):
        Board.model_validate({**fields, "environments": ["docker", "my-cloud"]})
    with pytest.raises(ValidationError, match="listed once"):
        Board.model_validate({**fields, "environments": ["docker", "docker"]})
    with pytest.raises(ValidationError):
        Board.model_validate({**fields, "maxConcurrentTrials": 0})
    parsed = Board.model_validate({**fields, "environments": ["modal"], "maxConcurrentTrials": 32})
    assert (parsed.environments, parsed.max_concurrent_trials) == (["modal"], 32)
