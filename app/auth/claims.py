"""The claims of a verified GitHub Actions OIDC token that hbench uses (`ActionsClaims`),
and the releases of the reusable workflow the service trusts (`TrustedWorkflow`,
`is_trusted`). The token's verification is `app.auth.oidc`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.settings import REPOSITORY_PATTERN

LEEWAY = timedelta(seconds=30)
"""How far a token's times may be off the service's clock: verified that much past its
`exp`, and so remembered as used (`app.auth.jti`) that much longer."""
WORKFLOW_REF = re.compile(r"^[^/@\s]+/[^/@\s]+/\.github/workflows/[^@\s]+\.ya?ml@\S+$")


class ActionsClaims(BaseModel):
    """The claims of a verified GitHub Actions OIDC token that hbench uses."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    iss: str
    aud: str
    sub: str = Field(min_length=1)
    jti: str = Field(min_length=1, max_length=255)
    iat: int
    exp: int
    nbf: int | None = None
    repository: str = Field(pattern=REPOSITORY_PATTERN)
    repository_id: int = Field(gt=0)
    repository_owner: str = Field(min_length=1)
    repository_owner_id: int = Field(gt=0)
    workflow_ref: str = Field(pattern=WORKFLOW_REF.pattern)
    job_workflow_ref: str = Field(pattern=WORKFLOW_REF.pattern)
    job_workflow_sha: str = Field(pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$")
    ref: str = Field(min_length=1)
    sha: str = Field(pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$")
    run_id: int = Field(gt=0)
    run_attempt: int = Field(gt=0)
    runner_environment: str = Field(min_length=1)
    event_name: str = Field(min_length=1)
    actor: str = Field(min_length=1)
    actor_id: int = Field(gt=0)
    environment: str | None = None

    def provenance(self) -> dict[str, Any]:
        """What an issued run records of the workflow that asked for it."""
        return {
            "issuer": self.iss,
            "repository": self.repository,
            "repository_id": self.repository_id,
            "repository_owner": self.repository_owner,
            "repository_owner_id": self.repository_owner_id,
            "workflow_ref": self.workflow_ref,
            "job_workflow_ref": self.job_workflow_ref,
            "job_workflow_sha": self.job_workflow_sha,
            "ref": self.ref,
            "sha": self.sha,
            "run_id": self.run_id,
            "run_attempt": self.run_attempt,
            "runner_environment": self.runner_environment,
            "event_name": self.event_name,
            "actor": self.actor,
            "actor_id": self.actor_id,
            "environment": self.environment,
        }


GITHUB_HOSTED = "github-hosted"

SAME_JOB_CLAIMS = (
    "repository_id",
    "run_id",
    "run_attempt",
    "job_workflow_ref",
    "job_workflow_sha",
    "runner_environment",
)
"""The claims two tokens share when they are of one job (or one matrix) of one workflow
run: what binds an upload, and a shard's claim, to the workflow run that issued the run."""


@dataclass(frozen=True)
class TrustedWorkflow:
    """A release of the reusable workflow the service trusts: its ref, and the commit the
    ref named when it was released (`HBENCH_TRUSTED_WORKFLOWS`, `REF=SHA`)."""

    ref: str
    sha: str

    @property
    def path(self) -> str:
        """The workflow file, `OWNER/REPO/.github/workflows/FILE.yml`, whatever the ref."""
        return self.ref.split("@", 1)[0]

    @classmethod
    def parse(cls, entry: str) -> TrustedWorkflow:
        ref, _, sha = entry.rpartition("=")
        return cls(ref, sha)


def trusted_workflows(entries: Sequence[str]) -> tuple[TrustedWorkflow, ...]:
    return tuple(TrustedWorkflow.parse(entry) for entry in entries)


def is_trusted(claims: ActionsClaims, trusted: Sequence[TrustedWorkflow]) -> bool:
    """Whether the job ran a trusted release of the reusable workflow, exactly as released,
    on a runner GitHub hosts: what "run on CI" needs of the token that issued a run."""
    pinned = any(
        w.ref == claims.job_workflow_ref and w.sha == claims.job_workflow_sha for w in trusted
    )
    return pinned and claims.runner_environment == GITHUB_HOSTED


def differing_claims(
    issuing: dict[str, Any], claiming: dict[str, Any], names: Sequence[str]
) -> str:
    """The claims of `names` in which `claiming` differs from `issuing`, as an error message
    shows them (`name 'now', issued with 'then'; ...`); empty when they all agree."""
    return "; ".join(
        f"{name} {claiming.get(name)!r}, issued with {issuing.get(name)!r}"
        for name in names
        if issuing.get(name) != claiming.get(name)
    )
