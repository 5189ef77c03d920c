"""The Action's last step: check the sealed job, upload it, and write the step summary.

An issued run uploads with its run token, read from the file the issue step left under
`RUNNER_TEMP`; any other job with the `api-token` input. Either is masked before anything
is printed. Beside a run token goes a fresh OIDC token of the same job, requested right
before the upload with the service as its audience (`authorization: Bearer <jwt>`): the
service checks it names the same workflow run, attempt, workflow release and runner as
the token that issued the run, which binds the upload to that run (`oidc-upload-mismatch`
otherwise). A job without `id-token: write` uploads with the run token alone. With `sign`,
the sealed manifest's digest is signed first, as a Sigstore bundle beside the manifest
(`hbench.action.sign`); a job that can't be signed is uploaded unsigned. A refusal
becomes one `::error::` annotation per problem, each ending with the service's rule code
and the fix.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hbench.action import abandon
from hbench.action.oidc import id_token_available, request_id_token
from hbench.action.protocol import Actions, Inputs, run_step
from hbench.action.sign import sign_job
from hbench.action.summary import job_summary
from hbench.errors import HbenchError, Problem
from hbench.issue import RUN_FILE, UPLOADS_PATH
from hbench.jobs.completeness import completeness_problems
from hbench.jobs.models import Job
from hbench.jobs.pack import pack_to_path
from hbench.jobs.reader import read_job
from hbench.jobs.verification import verify as verify_manifest
from hbench.limits import UPLOAD_MAX_BYTES
from hbench.upload import RUN_TOKEN_HEADER, send_archive

TITLE = "hbench: the upload was refused"
GITHUB_HOSTED = "github-hosted"
"""`runner.environment` on GitHub's own runners; `self-hosted` on anyone else's."""
JOB_PATH = "/api/bench/jobs/"


def read_token(path: Path) -> str:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        message = f"can't read the run token from {path}: {exc.strerror}"
        raise HbenchError("action-handoff-missing", message) from None
    if not token:
        raise HbenchError("action-handoff-missing", f"{path} holds no run token")
    return token


def auth_headers(actions: Actions, inputs: Inputs) -> dict[str, str]:
    """The run token from its file, else the API token; masked before use."""
    if (token_file := inputs.get("token-file")) is not None:
        token = read_token(Path(token_file))
        actions.mask(token)
        return {RUN_TOKEN_HEADER: token}
    if (api_token := inputs.get("api-token")) is not None:
        actions.mask(api_token)
        return {"authorization": f"Bearer {api_token}"}
    message = "pass `token-file` (the issue step's output) or `api-token` to upload with"
    raise HbenchError("upload-token-missing", message)


def checked_job(job_dir: Path) -> Job:
    """The job, unchanged since it was sealed, finished and complete; else every problem."""
    problems: list[Problem] = list(verify_manifest(job_dir))
    try:
        job = read_job(job_dir)
    except HbenchError as error:
        raise HbenchError.from_problems([*problems, *error.problems]) from None
    problems += completeness_problems(job)
    if problems:
        raise HbenchError.from_problems(problems)
    return job


def run_details(inputs: Inputs) -> dict[str, Any]:
    """What the issue step wrote about the run, when its folder is given."""
    run_dir = inputs.get("run-dir")
    if run_dir is None:
        return {}
    try:
        details = json.loads((Path(run_dir) / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return details if isinstance(details, dict) else {}


def binding_header(
    actions: Actions, environ: Mapping[str, str], service_url: str
) -> dict[str, str]:
    """A fresh OIDC token of this job for the service, as the bearer beside the run token;
    none without `id-token: write`, or when the runner won't give one (the upload then
    stands on the run token alone, and says so)."""
    if not id_token_available(environ):
        actions.log(
            "no OIDC token to bind the upload to this workflow run (the job lacks "
            "`permissions: id-token: write`): uploading with the run token alone"
        )
        return {}
    try:
        token = request_id_token(environ, service_url)
    except HbenchError as error:
        actions.warning(
            "hbench: the upload is not bound to this workflow run",
            f"{error.problems[0].detail}; uploading with the run token alone, so the job "
            "can't count as run on CI",
        )
        return {}
    actions.mask(token)
    return {"authorization": f"Bearer {token}"}


def send(
    job_dir: Path,
    url: str,
    headers: Callable[[], dict[str, str]],
    scratch: Path,
) -> Any:
    """Pack and send the job, in parts when it is over what one request may send; the
    accepted answer, or the service's refusal raised. The headers are made once the
    archive is packed, right before it is sent."""
    scratch.mkdir(mode=0o700, parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=scratch) as folder:
        archive = Path(folder) / f"{job_dir.name}.tgz"
        packed = pack_to_path(job_dir, archive)
        if packed.size > UPLOAD_MAX_BYTES:
            # Over what one request may send: in parts, up to the board's cap
            # (docs/uploads.md), each part with the same headers.
            from hbench.upload_parts import send_in_parts  # noqa: PLC0415

            answer = send_in_parts(url, archive, headers())
        else:
            answer = send_archive(url, archive, headers())
    if not answer.accepted:
        raise HbenchError.from_problems(answer.problems())
    return answer.body


def upload(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    job_dir = Path(inputs.required("job-dir"))
    wanted = inputs.boolean("upload", default=True)
    headers = auth_headers(actions, inputs) if wanted else {}
    service_url = inputs.required("service-url").rstrip("/")
    details = run_details(inputs)
    runner = inputs.get("runner-environment")
    job = checked_job(job_dir)
    actions.set_output("job-name", job.job_name)
    actions.set_output("score", f"{job.score:.4f}")
    if runner is not None and runner != GITHUB_HOSTED:
        actions.notice(
            "hbench: a self-hosted runner",
            f"this job ran on a {runner} runner: the service records the runner from the "
            "job's OIDC token, and only a run on a GitHub-hosted runner can count as run on CI",
        )
    if not wanted:
        actions.notice("hbench: not uploaded", f"`upload` is false; the job stays at {job_dir}")
        actions.summary(job_summary(job, details, None, None, runner=runner))
        return

    if inputs.boolean("sign", default=False):
        trust_config = inputs.get("sigstore-trust-config")
        sign_job(actions, job_dir, environ, Path(trust_config) if trust_config else None)

    def request_headers() -> dict[str, str]:
        if RUN_TOKEN_HEADER not in headers:
            return headers
        return {**headers, **binding_header(actions, environ, service_url)}

    scratch = actions.temp_dir() / "hbench"
    body = send(job_dir, service_url + UPLOADS_PATH, request_headers, scratch)
    job_id = str(body["id"])
    job_url = f"{service_url}{JOB_PATH}{job_id}"
    evidence = [str(level) for level in body.get("evidence") or []]
    actions.log(
        f"uploaded {job.job_name} as job {job_id}: score {body['score']:.4f}, private; "
        f"evidence: {', '.join(evidence) or 'none stated'}"
    )
    actions.set_output("job-id", job_id)
    actions.set_output("score", f"{float(body['score']):.4f}")
    actions.set_output("job-url", job_url)
    actions.set_output("evidence", " ".join(evidence))
    actions.summary(job_summary(job, details, job_id, job_url, runner=runner, evidence=evidence))


def upload_or_give_up(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    """The step; when it fails, its issued run is abandoned, or kept (`on-failure`)."""
    chosen = abandon.policy(inputs)
    try:
        upload(actions, inputs, environ)
    except HbenchError:
        abandon.give_up(actions, inputs, chosen, environ)
        raise


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Upload the job; 0 when the service took it (or `upload` is false), 1 otherwise."""
    del argv  # every setting arrives as an input variable
    step = upload_or_give_up
    return run_step(TITLE, lambda actions, env: step(actions, Inputs(env), env), environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
