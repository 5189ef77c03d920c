"""Every refusal of `POST /api/local-runs`: its code, its status, and that nothing is stored."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.auth.service import ensure_account
from app.registry import default_registry, get_registry
from app.runs.policy import check_request
from app.runs.schemas import IssueRequest
from hbench.errors import HbenchError

from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import DEMO, count_runs, issue


def oracle(**declarative: Any) -> dict[str, Any]:
    return {"agent": "oracle", **declarative}


# (case, body, code, status, path of the problem)
REFUSALS: list[tuple[str, dict[str, Any], str, int, str | None]] = [
    ("a name", {**DEMO, "name": "my-entry"}, "entry-name-generated", 422, "body.name"),
    ("a null name", {**DEMO, "name": None}, "entry-name-generated", 422, "body.name"),
    ("no target", {"declarative": oracle()}, "run-target-missing", 422, "body"),
    ("dataset without model", {"dataset": "hbench-demo@1.0", "declarative": oracle()},
     "run-target-missing", 422, "body"),
    ("unknown board", {"arena": "no-such-board", "declarative": oracle()},
     "run-board-unknown", 422, "body.arena"),
    ("board and another model", {**DEMO, "model": "gpt-5"}, "run-board-mismatch", 422,
     "body.model"),
    ("board and another task set", {**DEMO, "task_set": "quick"}, "run-board-mismatch", 422,
     "body.task_set"),
    ("unknown dataset", {"dataset": "nope@1.0", "model": "none", "declarative": oracle()},
     "run-dataset-unknown", 422, "body.dataset"),
    ("unknown task set",
     {"dataset": "hbench-demo@1.0", "task_set": "tiny", "model": "none", "declarative": oracle()},
     "run-task-set-unknown", 422, "body.task_set"),
    ("unknown model", {"dataset": "hbench-demo@1.0", "model": "gpt-9", "declarative": oracle()},
     "run-model-unknown", 422, "body.model"),
    ("no board for the cell",
     {"dataset": "hbench-demo@1.0", "model": "gpt-5", "declarative": {"agent": "codex"}},
     "run-no-board", 422, "body"),
    ("an agent not listed", {"arena": "hbench-demo", "declarative": {"agent": "terminus-2"}},
     "run-agent-not-allowed", 422, "body.declarative.agent"),
    ("2 attempts", {**DEMO, "n_attempts": 2}, "run-attempts-refused", 422, "body.n_attempts"),
    ("3 attempts where 1 only",
     {"arena": "swe-bench-verified-gpt-5", "n_attempts": 3, "declarative": {"agent": "codex"}},
     "run-attempts-refused", 422, "body.n_attempts"),
    ("a template path in kwargs",
     {"arena": "hbench-demo",
      "declarative": oracle(kwargs={"prompt_template_path": "/etc/passwd"})},
     "run-kwargs-reserved", 422, "body.declarative.kwargs.prompt_template_path"),
    ("a model in kwargs",
     {"arena": "hbench-demo", "declarative": oracle(kwargs={"model_name": "openai/gpt-5"})},
     "run-kwargs-reserved", 422, "body.declarative.kwargs.model_name"),
    ("a template without the instruction",
     {"arena": "hbench-demo", "declarative": oracle(prompt_template="Solve it.")},
     "run-prompt-template-invalid", 422, "body.declarative.prompt_template"),
    ("a template too long",
     {"arena": "hbench-demo",
      "declarative": oracle(prompt_template="{{ instruction }}" + "x" * 20_000)},
     "request-invalid", 422, "body.declarative.prompt_template"),
    ("nine passages", {"arena": "hbench-demo", "declarative": oracle(extra_instructions=["a"] * 9)},
     "request-invalid", 422, "body.declarative.extra_instructions"),
    ("a passage too long",
     {"arena": "hbench-demo", "declarative": oracle(extra_instructions=["x" * 4_001])},
     "request-invalid", 422, "body.declarative.extra_instructions.0"),
    ("kwargs too big", {"arena": "hbench-demo", "declarative": oracle(kwargs={"x": "y" * 20_000})},
     "request-invalid", 422, "body.declarative.kwargs"),
    ("nine hardware fields", {**DEMO, "hardware": {f"k{i}": "v" for i in range(9)}},
     "request-invalid", 422, "body.hardware"),
    ("a long hardware value", {**DEMO, "hardware": {"cpu": "x" * 201}},
     "request-invalid", 422, "body.hardware.cpu"),
    ("a registry with url and path",
     {**DEMO, "registry": {"url": "https://a.example/r.json", "path": "/r.json"}},
     "request-invalid", 422, "body.registry"),
    ("a registry over http", {**DEMO, "registry": {"url": "http://a.example/r.json"}},
     "request-invalid", 422, "body.registry.url"),
    ("an unknown field", {**DEMO, "board": "hbench-demo"}, "request-invalid", 422, "body.board"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(body, (code, status, path), id=case)
        for case, body, code, status, path in REFUSALS
    ],
)
def test_a_refusal_has_its_code_and_stores_nothing(
    client: TestClient, db: Session, body: dict[str, Any], expected: tuple[str, int, str | None]
) -> None:
    code, status, path = expected

    answer = issue(client, body)

    assert answer.status_code == status, answer.text
    envelope = answer.json()
    assert envelope["code"] == code
    assert envelope["detail"].endswith(f"({code})")
    assert envelope["errors"][0]["path"] == path
    assert count_runs(db) == 0


def test_every_failure_is_listed_with_the_name_first(client: TestClient, db: Session) -> None:
    body = {
        "name": "mine",
        "dataset": "hbench-demo@1.0",
        "model": "none",
        "n_attempts": 5,
        "declarative": {"agent": "claude-code", "kwargs": {"model_name": "x"}},
    }

    answer = issue(client, body)

    assert answer.status_code == 422
    codes = [problem["code"] for problem in answer.json()["errors"]]
    assert codes == [
        "entry-name-generated",
        "run-agent-not-allowed",
        "run-attempts-refused",
        "run-kwargs-reserved",
    ]
    assert "; and 3 more problems (entry-name-generated)" in answer.json()["detail"]
    assert count_runs(db) == 0


def test_messages_say_what_would_be_accepted(client: TestClient) -> None:
    agent = issue(client, {"arena": "hbench-demo", "declarative": {"agent": "terminus-2"}})
    assert "its agents: nop, oracle" in agent.json()["detail"]
    board = issue(client, {"arena": "nope", "declarative": {"agent": "oracle"}})
    assert "hbench-demo" in board.json()["detail"]
    task_set = issue(
        client,
        {"dataset": "hbench-demo@1.0", "task_set": "x", "model": "none", "declarative": oracle()},
    )
    assert "its sets: full, quick" in task_set.json()["detail"]


def test_two_boards_of_one_cell_must_be_told_apart(
    app: FastAPI, client: TestClient, db: Session
) -> None:
    registry = default_registry()
    twin = registry.boards["hbench-demo"].model_copy(update={"slug": "hbench-demo-twin"})
    with_twin = replace(registry, boards={**registry.boards, twin.slug: twin})
    app.dependency_overrides[get_registry] = lambda: with_twin
    body = {"dataset": "hbench-demo@1.0", "model": "none", "declarative": oracle()}

    answer = issue(client, body)

    assert answer.status_code == 422
    assert answer.json()["code"] == "run-board-ambiguous"
    assert "hbench-demo, hbench-demo-twin" in answer.json()["detail"]
    assert count_runs(db) == 0
    by_arena = issue(client, {**DEMO, "arena": "hbench-demo-twin"})
    assert by_arena.status_code == 201, by_arena.text


def test_a_denied_account_is_refused(
    client: TestClient, db: Session, make_token: TokenFactory
) -> None:
    token = make_token("mallory")
    ensure_account(db, "mallory").is_denied = True
    db.commit()

    answer = issue(TestClient(client.app, **REMOTE), DEMO, **bearer(token))

    assert answer.status_code == 403
    assert answer.json()["code"] == "account-denied"
    assert count_runs(db) == 0


def test_the_policy_itself_refuses_a_denied_account() -> None:
    request = IssueRequest.model_validate(DEMO)
    with pytest.raises(HbenchError) as refused:
        check_request(request, default_registry(), denied=True)
    assert [p.code for p in refused.value.problems] == ["account-denied"]


def test_without_a_sign_in_nothing_is_issued(client: TestClient, db: Session) -> None:
    answer = issue(TestClient(client.app, **REMOTE), DEMO)
    assert answer.status_code == 401
    assert answer.json()["code"] == "auth-required"
    assert count_runs(db) == 0
