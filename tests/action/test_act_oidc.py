"""Why a job has no OIDC token, said precisely: the Action and the reusable workflow's
first step name act, a Gitea runner or a fork's pull request where the job shows it, ask
for `id-token: write` only where nothing else explains the missing token, and say the job
has the permission when its request to a real (loopback) token endpoint is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbench.action import oidc, workflow_source
from hbench.action.protocol import StepError
from tests.action.conftest import token_endpoint


def fork_event(tmp_path: Path) -> dict[str, str]:
    event = {"pull_request": {"head": {"repo": {"full_name": "fork/octo-repo"}},
                              "base": {"repo": {"full_name": "octo-org/octo-repo"}}}}  # fmt: skip
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    return {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(path)}


@pytest.mark.parametrize("where", ["act", "gitea", "fork", "plain"])
def test_a_missing_token_names_its_cause_and_only_then_the_permission(
    tmp_path: Path, where: str
) -> None:
    environ = {"GITHUB_ACTIONS": "true"}
    environ |= {"act": {"ACT": "true"}, "gitea": {"GITEA_ACTIONS": "true"},
                "fork": fork_event(tmp_path), "plain": {}}[where]  # fmt: skip

    with pytest.raises(StepError) as raised:
        oidc.request_id_token(environ, "https://hbench.example")
    with pytest.raises(workflow_source.SourceError) as source:
        workflow_source.request_token(environ)

    action, workflow = raised.value, str(source.value)
    assert action.code == source.value.code == "action-oidc-unavailable"
    cause = {"act": "runs under act", "gitea": "Gitea or Forgejo runner",
             "fork": "pull request from a fork", "plain": "id-token: write"}[where]  # fmt: skip
    assert cause in action.problems[0].message
    assert cause in workflow
    assert "whatever `api-token` says" in workflow
    asks = "id-token: write" in action.fix
    assert asks is (where == "plain")
    assert ("id-token: write" in workflow) is (where == "plain")


def test_a_refused_request_says_the_job_has_the_permission() -> None:
    with token_endpoint(lambda audience: "unused") as endpoint:
        environ = {**endpoint.environ(), "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "not-the-token"}
        with pytest.raises(workflow_source.SourceError) as source:
            workflow_source.request_token(environ)
        with pytest.raises(oidc.HbenchError) as raised:
            oidc.request_id_token(environ, "https://hbench.example")

    for text in (str(source.value), raised.value.problems[0].message):
        assert "refused this job's request token (HTTP 401)" in text
        assert "the job has `id-token: write`" in text
    assert source.value.code == raised.value.problems[0].code == "action-oidc-failed"
