"""Where an issued run comes from, as its row keeps it (`IssuedRun.provenance`): what the
issuer declared, the verified claims of the workflow that issued it, whether that workflow
is a trusted release on a GitHub-hosted runner, and the workflow run that resumed it."""

from __future__ import annotations

from typing import Any

from app.auth.claims import ActionsClaims
from app.runs.schemas import IssueRequest

TRUSTED_WORKFLOW = "trusted_workflow"
"""The provenance's record of whether a trusted release issued the run on a GitHub-hosted
runner: what a bound upload needs for "run on CI" (app/bench/uploader.py)."""


def provenance_of(
    request: IssueRequest, claims: ActionsClaims | None, *, trusted: bool = False
) -> dict[str, Any] | None:
    """Where a run comes from: what its issuer declared, and the verified claims of the
    workflow that issued it, under `oidc` (publishing reads them there)."""
    declared = declared_provenance(request)
    if claims is None:
        return declared
    return {**(declared or {}), "oidc": claims.provenance(), TRUSTED_WORKFLOW: trusted}


def declared_provenance(request: IssueRequest) -> dict[str, Any] | None:
    """What the person issuing the run declared about it: the hardware, for now.

    It sits beside the OIDC claims a workflow's run will carry (under their own key), in
    the row's one JSON column for where a run comes from; none of it is verified.
    """
    return {"hardware": dict(request.hardware)} if request.hardware else None


RESUMED_BY = "resumed_by"
"""The claims of the workflow run that continued the run (`POST …/resume`): the upload is
bound to that run, and a resumed run is never *run on CI* (its first trials came through an
artifact, from another workflow run)."""
