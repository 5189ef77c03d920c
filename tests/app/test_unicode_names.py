"""Names over all of Unicode (tests/support/unicode_names.py) through the public places a
name enters: an issued run's agent and its options' names, a pushed run's model, harness
and task names, a report's entry and text, and a PR comment's command arguments. Each is
refused with a rule code and nothing stored, or taken and answered as it was sent; and
two spellings a page would show alike never stand as two things side by side."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import hypothesis
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import IssuedRun, Report, ReproducedRun
from app.github.commands import CODES, JOB_NAME, CommandError, Publish, parse_comment
from app.runs.policy import OPTION_NAME
from app.settings import Settings
from tests.support.unicode_names import (
    hostile_names,
    json_text,
    spellings_of,
)

EXAMPLES = hypothesis.settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
PUSH = {
    "benchmarkSlug": "mmlu-pro", "model": "openai/gpt-5", "harness": "codex", "taskCount": 1,
    "nAttempts": 1, "score": 50, "metric": "accuracy",
}  # fmt: skip


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The service's settings, with room for every example's push from one address."""
    return settings.model_copy(update={"runs_per_ip_per_day": 100_000})


@pytest.fixture
def local(client: TestClient) -> TestClient:
    """The app called from this machine, as the local user."""
    return client


def count(db: Session, table: Any) -> int:
    db.rollback()
    return db.scalar(select(func.count()).select_from(table)) or 0


def post_raw(client: TestClient, path: str, body: str) -> Any:
    return client.post(path, content=body.encode(), headers={"content-type": "application/json"})


def assert_refused(answer: Any, codes: set[str]) -> None:
    assert 400 <= answer.status_code < 500, answer.text
    body = answer.json()
    code = body["error"]["code"] if "error" in body else body["code"]
    assert code in codes, body


@EXAMPLES
@given(name=hostile_names(surrogates=True))
def test_an_options_name_is_an_agent_option_or_refused(
    local: TestClient, db: Session, name: str
) -> None:
    before = count(db, IssuedRun)
    kwargs = f"{{{json_text(name)}: 0}}"
    body = f'{{"arena": "hbench-demo", "declarative": {{"agent": "oracle", "kwargs": {kwargs}}}}}'
    answer = post_raw(local, "/api/local-runs", body)
    if OPTION_NAME.match(name) and name not in {"model_name", "prompt_template_path"}:
        # Taken, unless the board's limits are reached: abandon it again to free the slot.
        assert answer.status_code == 201, answer.text
        local.post(f"/api/local-runs/{answer.json()['run_id']}/abandon")
        return
    assert_refused(answer, {"run-kwargs-name-invalid", "run-kwargs-reserved", "request-invalid"})
    assert count(db, IssuedRun) == before


@EXAMPLES
@given(spelling=spellings_of("temperature"))
def test_an_option_spelled_to_look_like_another_is_refused(
    local: TestClient, db: Session, spelling: str
) -> None:
    if spelling == "temperature":
        return
    body = {"arena": "hbench-demo", "declarative": {"agent": "oracle", "kwargs": {spelling: 0}}}
    answer = local.post("/api/local-runs", json=body)
    assert_refused(answer, {"run-kwargs-name-invalid"})
    # The message shows the name with its hidden or foreign characters escaped.
    assert ascii(spelling[:40])[1:-1] in answer.json()["detail"]
    assert count(db, IssuedRun) == 0


@EXAMPLES
@given(agent=hostile_names(surrogates=True))
def test_an_agent_named_otherwise_than_the_boards_is_refused(
    local: TestClient, db: Session, agent: str
) -> None:
    if agent.strip() in {"oracle", "nop"}:
        return
    body = f'{{"arena": "hbench-demo", "declarative": {{"agent": {json_text(agent)}}}}}'
    answer = post_raw(local, "/api/local-runs", body)
    assert_refused(answer, {"run-agent-not-allowed", "request-invalid"})
    assert count(db, IssuedRun) == 0


def has_hidden(text: str) -> bool:
    categories = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    return any(unicodedata.category(c) in categories for c in text) or not text.strip()


@EXAMPLES
@given(field=st.sampled_from(["model", "harness", "task"]), name=hostile_names(surrogates=True))
def test_a_pushed_name_is_shown_as_sent_or_refused(
    client: TestClient, db: Session, field: str, name: str
) -> None:
    before = count(db, ReproducedRun)
    # What the service reads: a high and a low surrogate side by side, each escaped, are one
    # character to any JSON reader.
    received = json.loads(json_text(name))
    if field == "task":
        extra = f'"taskRewards": [{{"task": {json_text(name)}, "reward": 1}}]'
    else:
        extra = f"{json_text(field)}: {json_text(name)}"
    fields = {k: v for k, v in PUSH.items() if k != field}
    body = "{" + ", ".join(f"{json_text(k)}: {json_text(v) if isinstance(v, str) else v}"
                           for k, v in fields.items()) + f", {extra}}}"  # fmt: skip
    answer = post_raw(client, "/v1/runs", body)
    limit = 100 if field == "harness" else 200
    if has_hidden(received) or not 1 <= len(received) <= limit:
        assert_refused(answer, {"validation_error"})
        assert count(db, ReproducedRun) == before
        return
    assert answer.status_code == 201, answer.text
    stored = client.get(f"/v1/runs/{answer.json()['data']['id']}").json()["data"]
    shown = stored["taskRewards"][0]["task"] if field == "task" else stored[field]
    assert shown == received


@EXAMPLES
@given(spelling=spellings_of("gpt-5"))
def test_spellings_of_one_model_that_show_alike_count_as_one_or_are_refused(
    client: TestClient, spelling: str
) -> None:
    answer = client.post("/v1/runs", json={**PUSH, "model": spelling})
    if answer.status_code == 201:
        slug = answer.json()["data"]["modelSlug"]
        folded = unicodedata.normalize("NFKC", spelling)
        # A spelling that folds to the model's own is counted as it; a look-alike in
        # another script is another model's text, and says so by its slug.
        assert slug == "gpt-5" or folded != unicodedata.normalize("NFKC", "gpt-5"), answer.text
        assert slug is None or slug.isascii()
    else:
        assert_refused(answer, {"validation_error"})


@EXAMPLES
@given(entry=hostile_names(surrogates=True), text=hostile_names(surrogates=True))
def test_a_report_of_no_entry_on_a_board_is_refused_and_nothing_stored(
    local: TestClient, db: Session, entry: str, text: str
) -> None:
    # No board has an entry yet, so every name, however spelled, names none of them: a
    # look-alike of a real entry's name is found no more than any other text.
    body = f'{{"entry": {json_text(entry)}, "message": {json_text("the score is wrong: " + text)}}}'
    answer = post_raw(local, "/api/reports", body)
    assert_refused(
        answer,
        {"request-invalid", "report-message-length", "report-target-missing",
         "report-target-unknown"},
    )  # fmt: skip
    assert count(db, Report) == 0


@hypothesis.settings(max_examples=200, deadline=None)
@given(argument=hostile_names(), command=st.sampled_from(["publish", "withdraw", "delete"]))
def test_a_comment_commands_job_is_an_ascii_name_or_refused_with_a_code(
    argument: str, command: str
) -> None:
    for parsed in parse_comment(f"/hbench {command} {argument}"):
        if isinstance(parsed, CommandError):
            assert parsed.code in CODES
            continue
        job = getattr(parsed, "job", None)
        if job is not None:
            assert JOB_NAME.fullmatch(job.text) or job.id is not None, job
            assert job.id is not None or job.text.isascii()
        if isinstance(parsed, Publish) and parsed.board is not None:
            assert parsed.board.isascii()
