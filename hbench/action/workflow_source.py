"""Where the reusable workflow's own code is: the repository and the commit its job runs,
read from the job's OIDC token (`job_workflow_ref`, `job_workflow_sha`), never from the
caller's inputs.

The first step of `.github/workflows/run-benchmark.yml` runs this file as it is, before
anything is checked out (tests/action/test_workflow.py holds the step to this source), so
it needs nothing but Python's standard library. It writes the outputs `repository`,
`sha`, `ref`, `workflow` and `runner-environment`; the next step checks out `repository`
at `sha`, which GitHub itself resolved when the caller named this workflow's ref.
The token comes from the runner's own endpoint and goes nowhere else, so its payload is
read without checking its signature; its audience names no service, so it opens none.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

AUDIENCE = "hbench-workflow-source"
JOB_WORKFLOW_REF = re.compile(
    r"^(?P<repository>[A-Za-z0-9-]+/[A-Za-z0-9._-]+)/(?P<path>\.github/workflows/[^@]+)@(?P<ref>\S+)$"
)
SHA = re.compile(r"^[0-9a-f]{40}$")
TIMEOUT_SECONDS = 30
TITLE = "hbench: this workflow can't find its own code"


class SourceError(Exception):
    """A failure with its rule code (each in hbench/codes.py and docs/rule-codes.md)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code


def fork_pull_request(environ: dict[str, str]) -> bool:
    """Whether the job runs for a pull request from a fork (its event payload says so)."""
    if not environ.get("GITHUB_EVENT_NAME", "").startswith("pull_request"):
        return False
    try:
        event = json.loads(Path(environ.get("GITHUB_EVENT_PATH", "")).read_text(encoding="utf-8"))
        head = event["pull_request"]["head"]["repo"]["full_name"]
        base = event["pull_request"]["base"]["repo"]["full_name"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return bool(head) and head != base


def missing_token_cause(environ: dict[str, str]) -> str:
    """Why GitHub gave this job no OIDC token, as far as the job can tell, and the fix."""
    if environ.get("ACT") == "true":
        return (
            "this job runs under act, which gives jobs no GitHub OIDC token; run the Action "
            "(action.yml) in a job of your own with `api-token` instead"
        )
    if "true" in (environ.get("GITEA_ACTIONS"), environ.get("FORGEJO_ACTIONS")):
        return (
            "this job runs on a Gitea or Forgejo runner, which gives it no GitHub OIDC token; "
            "run the Action (action.yml) in a job of your own with `api-token` instead"
        )
    if fork_pull_request(environ):
        return (
            "this job runs for a pull request from a fork, which GitHub never gives an OIDC "
            "token, whatever the calling job grants; run the benchmark from a branch of the "
            "repository itself"
        )
    return "the job that calls this workflow must grant `permissions: id-token: write`"


def request_token(environ: dict[str, str]) -> str:
    """The job's OIDC token, asked of the runner with this module's audience."""
    url = environ.get("ACTIONS_ID_TOKEN_REQUEST_URL", "")
    bearer = environ.get("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "")
    if not url or not bearer:
        raise SourceError(
            "action-oidc-unavailable",
            "GitHub gave this job no OIDC token (ACTIONS_ID_TOKEN_REQUEST_URL is not set), and "
            "this workflow can't run without one, whatever `api-token` says: it learns from it "
            f"which commit of its own it runs. {missing_token_cause(environ)}",
        )
    separator = "&" if "?" in url else "?"
    query = urllib.parse.urlencode({"audience": AUDIENCE})
    request = urllib.request.Request(  # noqa: S310 - the runner's own https endpoint
        f"{url}{separator}{query}", headers={"Authorization": f"bearer {bearer}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:  # noqa: S310
            value = json.loads(answer.read()).get("value")
    except urllib.error.HTTPError as exc:
        raise SourceError("action-oidc-failed", request_refused(exc.code)) from None
    except (OSError, ValueError, AttributeError) as exc:
        raise SourceError(
            "action-oidc-failed",
            f"the job may have an OIDC token (ACTIONS_ID_TOKEN_REQUEST_URL is set), but its "
            f"request to the runner's token endpoint failed ({exc}); re-run the job",
        ) from None
    if not isinstance(value, str) or value.count(".") != 2:
        raise SourceError("action-oidc-failed", "the runner answered with no OIDC token")
    return value


def request_refused(status: int) -> str:
    """What an HTTP error of the runner's token endpoint means; the job has the permission."""
    if status in {401, 403}:
        return (
            f"the runner's token endpoint refused this job's request token (HTTP {status}): "
            "the job has `id-token: write` (the request variables are set), but the request "
            "token was not taken, as when it outlived its job; re-run the job"
        )
    return (
        f"the runner's token endpoint answered HTTP {status} to a job that has "
        "`id-token: write`: a failure on GitHub's side; re-run the job"
    )


def claims_of(token: str) -> dict[str, object]:
    """The token's payload (its middle part, base64url without padding)."""
    payload = token.split(".")[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except ValueError:
        claims = None
    if not isinstance(claims, dict):
        raise SourceError("action-oidc-failed", "the OIDC token's payload is not JSON claims")
    return claims


def workflow_source(claims: dict[str, object]) -> dict[str, str]:
    """The outputs: the repository holding the workflow, the commit, the ref, the file."""
    ref, sha = claims.get("job_workflow_ref"), claims.get("job_workflow_sha")
    match = JOB_WORKFLOW_REF.match(ref) if isinstance(ref, str) else None
    if match is None or not isinstance(sha, str) or not SHA.match(sha):
        raise SourceError(
            "action-workflow-source-unknown",
            f"the job's OIDC token names no workflow and commit it runs (job_workflow_ref "
            f"{ref!r}, job_workflow_sha {sha!r}): call this workflow from a job's `uses:`",
        )
    return {
        "repository": match["repository"],
        "sha": sha,
        "ref": match["ref"],
        "workflow": f"{match['repository']}/{match['path']}@{match['ref']}",
        "runner-environment": str(claims.get("runner_environment") or "unknown"),
    }


def write_outputs(path: str, outputs: dict[str, str]) -> None:
    with Path(path).open("a", encoding="utf-8") as stream:
        stream.writelines(f"{name}={value}\n" for name, value in outputs.items())


def main(environ: dict[str, str]) -> int:
    """Write the outputs; 0, or 1 with an `::error::` annotation that ends with its code."""
    try:
        token = request_token(environ)
        print(f"::add-mask::{token}", flush=True)
        outputs = workflow_source(claims_of(token))
        write_outputs(environ["GITHUB_OUTPUT"], outputs)
    except SourceError as error:
        text = f"{error} — see docs/rule-codes.md#{error.code}"
        print(f"::error title={TITLE.replace(':', '%3A')}::{text}", flush=True)
        return 1
    print(f"this job runs {outputs['workflow']} at {outputs['sha']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(dict(os.environ)))
