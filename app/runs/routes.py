"""The issued-run endpoints: `POST /api/local-runs`, `GET /api/local-runs` and
`POST /api/local-runs/{run_id}/abandon` (../shared/spec/hbench-issue-a-run.txt).

The router's lifespan writes the demo dataset under the state directory at start, so the
specs issued for the demo board can name its registry.json by absolute path.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response, status

from app.auth.dependencies import CurrentAccount
from app.auth.trusted import RunIssuerDep
from app.clock import ClockDep
from app.db.models import IssuedRun, IssuedRunStatus
from app.db.summary import JobSummary
from app.dependencies import SessionDep, SettingsDep
from app.errors import error_responses
from app.registry import RegistryDep
from app.runs import queries, service, waiting
from app.runs.schemas import (
    EnvironmentVariable,
    IssuedRunCreated,
    IssuedRunInfo,
    IssuedRunList,
    IssuedRunResult,
    IssuedShard,
    IssueRequest,
    ShardsInfo,
)
from app.runs.spec import Variable, execution_of, run_environment
from app.runs.status import effective_status
from hbench.codes import Area
from hbench.errors import HbenchError

DEFAULT_LIST_LIMIT = 100


router = APIRouter(prefix="/api/local-runs", tags=["issued runs"])


@router.post(
    "",
    summary="Issue a run (its run token is shown once)",
    description="Checks the request against the registry's policy (a known benchmark and "
    "task set, a model it names, an agent listed for that model, the board's attempts) and "
    "the board's limits, and answers with the spec to run and the run token. Leave `name` "
    "out: the service names the entry (`entry-name-generated`). A refusal lists every "
    "problem; a limit's says when a slot frees. A GitHub Actions workflow may sign in "
    "with its OIDC token (`authorization: Bearer <JWT>`, audience: the service's URL) "
    "in place of an API token: the run is then the account's its repository maps to, and "
    "records the workflow's repository, ref, commit and run.",
    status_code=status.HTTP_201_CREATED,
    response_model=IssuedRunCreated,
    responses=error_responses(
        Area.AUTH, Area.OIDC, Area.RUN, "github-not-configured", "request-invalid"
    ),
)
def issue_run(
    body: IssueRequest,
    *,
    issuer: RunIssuerDep,
    session: SessionDep,
    settings: SettingsDep,
    registry: RegistryDep,
    clock: ClockDep,
    response: Response,
) -> IssuedRunCreated:
    issued = service.issue_run(
        session,
        issuer.account,
        body,
        registry=registry,
        lifetime=settings.run_token_lifetime,
        now=clock(),
        claims=issuer.claims,
        trusted=issuer.trusted,
    )
    run = issued.run
    # The one answer that carries the run token must not be kept by any cache on the way.
    response.headers["cache-control"] = "no-store"
    shards = [
        IssuedShard(
            index=(shard.run.shard_index or 0) + 1,
            run_id=shard.run.id,
            job_name=str(shard.spec["job_name"]),
            tasks=shard.tasks,
            spec=shard.spec,
            spec_digest=shard.run.spec_digest,
            token=shard.token,
        )
        for shard in issued.shards
    ]
    return created(
        run, issued.token, prompt_template=issued.prompt_template,
        environment=issued.environment, shards=shards,
    )  # fmt: skip


@router.get(
    "",
    summary="List your issued runs, newest first",
    response_model=IssuedRunList,
    # `shards` and `problem` are left out where they don't apply (an unsharded run).
    response_model_exclude_none=True,
    responses=error_responses(Area.AUTH, "request-invalid"),
)
def list_runs(
    account: CurrentAccount,
    session: SessionDep,
    clock: ClockDep,
    limit: Annotated[int, Query(ge=1, le=1000, description="At most this many runs.")] = (
        DEFAULT_LIST_LIMIT
    ),
) -> IssuedRunList:
    now = clock()
    return IssuedRunList(
        runs=[
            info(run, now, queries.shards_of(session, run))
            for run in queries.list_runs(session, account, limit)
        ]
    )


@router.post(
    "/{run_id}/abandon",
    summary="Abandon one of your runs waiting for upload",
    description="The run counts as expired and frees its slot on the board at once. A run "
    "already abandoned, uploaded or expired is refused (`run-not-waiting`). With the owner's "
    "API token or session, or an OIDC token of a workflow of the repository that issued the "
    "run (as the Action gives up a run whose attempt failed); never with a run token, which "
    "serves its one upload only.",
    response_model=IssuedRunInfo,
    response_model_exclude_none=True,
    responses=error_responses(
        Area.AUTH,
        Area.OIDC,
        "run-not-found",
        "run-not-waiting",
        "run-shard-part",
        "request-invalid",
    ),
)
def abandon_run(
    run_id: uuid.UUID, *, issuer: RunIssuerDep, session: SessionDep, clock: ClockDep
) -> IssuedRunInfo:
    now = clock()
    run = waiting.abandon_run(session, issuer.account, run_id, now, issuer.claims)
    return info(run, now, queries.shards_of(session, run))


@router.post(
    "/{run_id}/resume",
    summary="Continue a stopped run from a new workflow run: a new run token",
    description="For a run a GitHub Actions workflow issued, with an OIDC token of the new "
    "workflow run (the same repository and the same release of the workflow): answers the "
    "run's spec and a new run token, shown once; the earlier token stops working. The "
    "upload is bound to the new workflow run, and a resumed run is never run on CI.",
    response_model=IssuedRunCreated,
    status_code=200,
    responses=error_responses(Area.OIDC, Area.ISSUED, "github-not-configured", "request-invalid"),
)
def resume_run(
    run_id: uuid.UUID,
    *,
    issuer: RunIssuerDep,
    session: SessionDep,
    clock: ClockDep,
    response: Response,
) -> IssuedRunCreated:
    if issuer.claims is None:
        raise HbenchError(
            "oidc-resume-mismatch",
            "resuming a run from a new workflow run needs that run's GitHub Actions OIDC token "
            "(`permissions: id-token: write`); a run stopped on your machine resumes there "
            "with `hbench jobs resume`",
        )
    run, token = waiting.resume_run(session, issuer.account, run_id, issuer.claims, clock())
    response.headers["cache-control"] = "no-store"
    # The template is not kept; the run's folder, saved with the job, holds prompt.j2.
    return created(run, token, prompt_template=None, environment=[])


@router.post(
    "/{run_id}/claim",
    summary="Take a shard's run token, for the job that runs it",
    description="For a shard of a sharded run (its `run_id` from the issuing answer's "
    "`shards`), with an OIDC token of a job of the workflow run that issued the run (the "
    "reusable workflow's matrix) or the owner's API token: answers the shard's spec and a "
    "new run token, shown once; the token issued with the run stops working. A job of "
    "another workflow run is refused (`run-shard-mixed`).",
    response_model=IssuedRunCreated,
    status_code=200,
    responses=error_responses(
        Area.OIDC, Area.ISSUED, "run-shard-mixed", "github-not-configured", "request-invalid"
    ),
)
def claim_shard(
    run_id: uuid.UUID,
    *,
    issuer: RunIssuerDep,
    session: SessionDep,
    clock: ClockDep,
    response: Response,
) -> IssuedRunCreated:
    shard, token = waiting.claim_shard(session, issuer.account, run_id, issuer.claims, clock())
    response.headers["cache-control"] = "no-store"
    execution = execution_of(shard.spec)
    agents = shard.spec.get("agents") or [{}]
    model = agents[0].get("model_name") if isinstance(agents[0], dict) else None
    where = None if ":" in execution.environment else execution.environment
    variables = run_environment(model if isinstance(model, str) else None, where)
    # The template is not kept; the reusable workflow issues none.
    return created(shard, token, prompt_template=None, environment=variables)


@router.get(
    "/{run_id}",
    summary="One of your runs, with its job once it has one",
    description="With the owner's API token or session, or an OIDC token of a workflow of the "
    "repository that issued the run (the reusable workflow's report job): the run as lists "
    "show it, and its job's id and score once uploaded (a sharded run's merged job, once "
    "every shard is).",
    response_model=IssuedRunResult,
    response_model_exclude_none=True,
    responses=error_responses(Area.AUTH, Area.OIDC, "run-not-found", "request-invalid"),
)
def get_run(
    run_id: uuid.UUID, *, issuer: RunIssuerDep, session: SessionDep, clock: ClockDep
) -> IssuedRunResult:
    now = clock()
    run = queries.run_for_reader(session, issuer.account, run_id, issuer.claims)
    job = queries.job_of(session, run)
    shown = info(run, now, queries.shards_of(session, run))
    return IssuedRunResult(
        **shown.model_dump(),
        job_id=job.id if job is not None else None,
        score=JobSummary.of(job).score if job is not None else None,
    )


def created(
    run: IssuedRun,
    token: str | None,
    *,
    prompt_template: str | None,
    environment: Sequence[Variable],
    shards: Sequence[IssuedShard] = (),
) -> IssuedRunCreated:
    """The answer that carries a run's token (issued, resumed or claimed): shown once."""
    return IssuedRunCreated(
        run_id=run.id,
        board=run.board,
        submission=run.entry,
        job_name=str(run.spec["job_name"]),
        spec=run.spec,
        spec_digest=run.spec_digest,
        prompt_template=prompt_template,
        token=token,
        issued_at=run.issued_at,
        expires_at=run.expires_at,
        environment=[EnvironmentVariable.model_validate(v) for v in environment],
        execution=execution_of(run.spec),
        shards=list(shards),
    )


def info(run: IssuedRun, now: datetime, shards: Sequence[IssuedRun] = ()) -> IssuedRunInfo:
    """A run as lists show it, with its status at `now` (expiry computed, not stored), and
    for a sharded run, how many of its `shards` are uploaded."""
    hardware = (run.provenance or {}).get("hardware") or {}
    status = effective_status(run.status, run.expires_at, now)
    progress, problem = None, None
    if shards:
        missing = [
            (shard.shard_index or 0) + 1
            for shard in shards
            if shard.status is not IssuedRunStatus.UPLOADED
        ]
        uploaded = len(shards) - len(missing)
        progress = ShardsInfo(count=len(shards), uploaded=uploaded, missing=missing)
        if status is IssuedRunStatus.EXPIRED and missing:
            problem = "run-shards-missing"
    return IssuedRunInfo(
        run_id=run.id,
        board=run.board,
        submission=run.entry,
        job_name=str(run.spec.get("job_name", "")),
        n_attempts=int(run.spec.get("n_attempts", 1)),
        status=status,
        issued_at=run.issued_at,
        expires_at=run.expires_at,
        spec_digest=run.spec_digest,
        hardware={str(k): str(v) for k, v in hardware.items()},
        execution=execution_of(run.spec),
        shards=progress,
        problem=problem,
    )
