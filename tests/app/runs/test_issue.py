"""`POST /api/local-runs`: the answer, the spec it carries, and the run it stores."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.auth.tokens import hash_token, is_run_token
from app.db.models import IssuedRunStatus
from app.settings import Settings
from hbench.digest import spec_digest
from hbench.sandbox import IMPORT_PATH
from registry.demo import BUNDLED_REGISTRY
from registry.placement import EntrySettings, entry_name

from ..conftest import REMOTE, TokenFactory, bearer
from .conftest import DEMO, START, FakeClock, issue, stored_runs


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def test_the_demo_runs_in_the_sandbox_when_asked_and_nowhere_else(
    client: TestClient, db: Session
) -> None:
    answer = issue(client, {**DEMO, "environment": IMPORT_PATH})
    assert answer.status_code == 201, answer.text
    assert answer.json()["spec"]["environment"] == {"import_path": IMPORT_PATH}
    assert (
        issue(client, {**DEMO, "environment": "docker"}).json()["spec"].get("environment") is None
    )
    elsewhere = issue(client, {**DEMO, "environment": "mypkg.env:Custom"})
    assert (elsewhere.status_code, elsewhere.json()["code"]) == (422, "run-environment-refused")
    assert "hbench-demo's runs run in one of: docker, hbench.sandbox" in elsewhere.json()["detail"]
    assert len(stored_runs(db)) == 2


def test_the_demo_board_answers_with_a_spec_that_runs_the_demo(
    client: TestClient, db: Session, settings: Settings, clock: FakeClock
) -> None:
    answer = issue(client, {**DEMO, "hardware": {"cpu": "8 cores", "gpu": "none"}})

    assert answer.status_code == 201, answer.text
    assert answer.headers["cache-control"] == "no-store"
    body = answer.json()
    entry = entry_name("local", EntrySettings(agent="oracle"))
    assert body["board"] == "hbench-demo"
    assert body["submission"] == entry
    assert re.fullmatch(rf"hbench-demo-{entry}-[0-9a-f]{{8}}", body["job_name"])
    # No file of the service's machine: the demo travels with hbench, which lays it out
    # where the run starts; the trials run in Harbor's docker environment.
    assert body["spec"] == {
        "job_name": body["job_name"],
        "n_attempts": 1,
        "agents": [{"name": "oracle"}],
        "datasets": [{"name": "hbench-demo", "version": "1.0", "registry_path": BUNDLED_REGISTRY}],
    }
    assert not (settings.state_dir / "demo").exists()
    assert body["spec_digest"] == spec_digest(body["spec"])
    assert body["prompt_template"] is None
    assert is_run_token(body["token"])
    assert body["issued_at"] == "2026-10-30T12:00:00Z"
    assert body["expires_at"] == "2026-11-01T12:00:00Z"
    assert body["environment"] == [
        {"name": "HARBOR_TELEMETRY", "value": "0", "secret": False,
         "description": "keeps Harbor's telemetry off"},
    ]  # fmt: skip

    (run,) = stored_runs(db)
    assert str(run.id) == body["run_id"]
    assert run.account_id is not None
    assert (run.board, run.entry, run.status) == ("hbench-demo", entry, IssuedRunStatus.ISSUED)
    assert run.spec == body["spec"]
    assert run.spec_digest == spec_digest(run.spec)
    assert run.token_hash == hash_token(body["token"])
    assert (run.issued_at, run.expires_at) == (START, START + timedelta(hours=48))
    assert run.provenance == {"hardware": {"cpu": "8 cores", "gpu": "none"}}
    # Only the hash of the token is kept.
    row_text = json.dumps([run.spec, run.provenance, run.entry, run.board, run.token_hash])
    assert body["token"] not in row_text


def test_a_model_board_names_the_model_and_the_key_its_provider_needs(
    client: TestClient,
) -> None:
    body = {"arena": "swe-bench-verified-gpt-5", "declarative": {"agent": "terminus-2"}}

    answer = issue(client, body)

    assert answer.status_code == 201, answer.text
    spec = answer.json()["spec"]
    assert spec["agents"] == [{"name": "terminus-2", "model_name": "openai/gpt-5"}]
    # Harbor's default registry: no registry in the spec, no task filter, no custom environment.
    assert spec["datasets"] == [{"name": "swebench-verified", "version": "1.0"}]
    assert "environment" not in spec
    assert answer.json()["environment"][1] == {
        "name": "OPENAI_API_KEY", "value": None, "secret": True,
        "description": "your OpenAI API key",
    }  # fmt: skip


def test_a_benchmark_and_model_find_their_board_and_a_subset_lists_its_tasks(
    client: TestClient,
) -> None:
    body = {
        "dataset": "hbench-demo@1.0",
        "task_set": "quick",
        "model": "none",
        "n_attempts": 3,
        "declarative": {"agent": "nop"},
    }

    answer = issue(client, body)

    assert answer.status_code == 201, answer.text
    assert answer.json()["board"] == "hbench-demo-quick"
    spec = answer.json()["spec"]
    assert spec["n_attempts"] == 3
    assert spec["datasets"][0]["task_names"] == ["hello-file", "sum-numbers"]


def test_a_model_may_be_named_by_its_harbor_name(client: TestClient) -> None:
    body = {
        "dataset": "swebench-verified@1.0",
        "model": "openai/gpt-5",
        "declarative": {"agent": "codex"},
    }
    answer = issue(client, body)
    assert answer.status_code == 201, answer.text
    assert answer.json()["board"] == "swe-bench-verified-gpt-5"


def test_a_template_and_instructions_go_in_the_spec_and_the_entry(client: TestClient) -> None:
    template = "You are careful.\n\n{{ instruction }}\n"
    passages = ["Keep answers short.", "Never use the network."]
    declarative: dict[str, Any] = {
        "agent": "oracle",
        "kwargs": {"seed": 7},
        "prompt_template": template,
        "extra_instructions": passages,
    }

    answer = issue(client, {"arena": "hbench-demo", "declarative": declarative})

    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["prompt_template"] == template
    assert body["spec"]["agents"] == [
        {"name": "oracle", "kwargs": {"seed": 7, "prompt_template_path": "prompt.j2"}}
    ]
    assert body["spec"]["extra_instructions"] == passages
    settings = EntrySettings(
        agent="oracle",
        options={"seed": 7},
        prompt_template_digest=sha(template),
        extra_instruction_digests=[sha(p) for p in passages],
    )
    assert body["submission"] == entry_name("local", settings)


def test_the_same_settings_join_the_same_entry_whatever_the_version(
    client: TestClient, make_token: TokenFactory
) -> None:
    def submission(kwargs: dict[str, Any], **headers: str) -> tuple[str, str]:
        body = {"arena": "hbench-demo", "declarative": {"agent": "oracle", "kwargs": kwargs}}
        answer = issue(client, body, **headers)
        assert answer.status_code == 201, answer.text
        return answer.json()["submission"], answer.json()["job_name"]

    first, first_job = submission({"version": "1.0"})
    again, again_job = submission({"version": "2.0"})
    other, _ = submission({"seed": 1})
    alices, _ = submission({"version": "1.0"}, **bearer(make_token("alice")))

    assert first == again == entry_name("local", EntrySettings(agent="oracle"))
    assert first_job != again_job
    assert len({first, other, alices}) == 3
    assert alices == entry_name("alice", EntrySettings(agent="oracle"))


def test_a_mirror_in_the_body_replaces_the_registry(client: TestClient) -> None:
    by_url = issue(client, {**DEMO, "registry": {"url": "https://mirror.example/registry.json"}})
    by_path = issue(client, {**DEMO, "registry": {"path": "/srv/mirror/registry.json"}})

    assert by_url.status_code == by_path.status_code == 201
    (url_dataset,) = by_url.json()["spec"]["datasets"]
    (path_dataset,) = by_path.json()["spec"]["datasets"]
    assert url_dataset == {
        "name": "hbench-demo", "version": "1.0",
        "registry_url": "https://mirror.example/registry.json",
    }  # fmt: skip
    assert path_dataset["registry_path"] == "/srv/mirror/registry.json"
    assert "registry_url" not in path_dataset


def test_an_api_token_issues_to_its_own_account(
    client: TestClient, db: Session, make_token: TokenFactory
) -> None:
    remote = TestClient(client.app, **REMOTE)

    answer = issue(remote, DEMO, **bearer(make_token("alice")))

    assert answer.status_code == 201, answer.text
    (run,) = stored_runs(db)
    assert run.entry == entry_name("alice", EntrySettings(agent="oracle"))
    mine = client.get("/api/local-runs").json()["runs"]
    theirs = remote.get("/api/local-runs", headers=bearer(make_token("alice"))).json()["runs"]
    assert mine == []
    assert [r["run_id"] for r in theirs] == [answer.json()["run_id"]]


def test_the_endpoints_are_on_the_api_page(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    issue_op = paths["/api/local-runs"]["post"]
    assert issue_op["responses"]["201"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/IssuedRunCreated"
    }
    refusals = " ".join(answer["description"] for answer in issue_op["responses"].values())
    for code in ("entry-name-generated", "run-agent-not-allowed", "run-limit-waiting"):
        assert f"`{code}`" in refusals
    assert "429" in issue_op["responses"]
    assert "get" in paths["/api/local-runs"]
    abandon = paths["/api/local-runs/{run_id}/abandon"]["post"]
    assert {"404", "409", "422", "500"} <= set(abandon["responses"])
