"""The Run a benchmark page's execution options: trials at once and where they run, within
the board's policy, shown on the issued run's page; a request beyond it stores nothing."""

from __future__ import annotations

from dataclasses import replace

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import IssuedRun
from app.registry import default_registry, get_registry

from .conftest import submit

DEMO = {"board": "hbench-demo", "agent": "oracle"}


def allow_sandboxes(app: FastAPI) -> None:
    registry = default_registry()
    board = registry.boards["hbench-demo"].model_copy(
        update={"environments": ["docker", "daytona"], "max_concurrent_trials": 12}
    )
    with_policy = replace(registry, boards={**registry.boards, board.slug: board})
    app.dependency_overrides[get_registry] = lambda: with_policy


def stored(db: Session) -> list[IssuedRun]:
    db.rollback()  # see what the app committed
    return list(db.scalars(select(IssuedRun)))


def test_the_form_offers_the_boards_environments_and_limits(
    app: FastAPI, client: TestClient
) -> None:
    allow_sandboxes(app)

    html = client.get("/run").text

    assert '<option value="daytona">daytona (hbench-demo only)</option>' in html
    assert 'name="n_concurrent_trials"' in html
    assert '<span class="slug">hbench-demo</span> 12' in html


def test_a_run_in_an_allowed_sandbox_shows_where_and_how_many(
    app: FastAPI, client: TestClient, db: Session
) -> None:
    allow_sandboxes(app)

    answer = submit(
        client, "/run", "/run", {**DEMO, "environment": "daytona", "n_concurrent_trials": "12"}
    )

    assert answer.status_code == 200, answer.text
    assert '<code id="environment">daytona</code>' in answer.text
    assert '<span id="concurrent-trials">12</span> at once' in answer.text
    assert "DAYTONA_API_KEY" in answer.text  # named among the variables to set first
    (run,) = stored(db)
    assert run.spec["environment"] == {"type": "daytona"}
    assert run.spec["n_concurrent_trials"] == 12
    bench = client.get("/bench").text  # Your bench lists the run with where it runs
    assert "<td><code>daytona</code>, 12 at once</td>" in bench


def test_a_default_run_says_it_runs_in_docker_four_at_once(client: TestClient) -> None:
    answer = submit(client, "/run", "/run", DEMO)

    assert answer.status_code == 200, answer.text
    assert '<code id="environment">docker</code>' in answer.text
    assert '<span id="concurrent-trials">4</span> at once' in answer.text


def test_options_beyond_the_boards_policy_are_refused_and_nothing_stored(
    client: TestClient, db: Session
) -> None:
    answer = submit(
        client, "/run", "/run", {**DEMO, "environment": "modal", "n_concurrent_trials": "5"}
    )

    assert answer.status_code == 422
    assert "run-environment-not-allowed" in answer.text
    assert "run-concurrency-refused" in answer.text
    assert 'value="5"' in answer.text  # the form keeps what was typed
    bad = submit(client, "/run", "/run", {**DEMO, "n_concurrent_trials": "many"})
    assert bad.status_code == 422 and "request-invalid" in bad.text
    assert stored(db) == []


def test_the_limits_guide_lists_each_boards_environments_and_trials(
    app: FastAPI, client: TestClient
) -> None:
    allow_sandboxes(app)

    page = client.get("/guide/limits").text

    assert "<td>docker, daytona</td><td>12</td>" in page
    assert "run-concurrency-refused" in page
