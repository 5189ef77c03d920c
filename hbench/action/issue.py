"""The Action's first step: issue a run from the service and write its folder, or take up
a run an earlier attempt left (`resume-dir`) and ask the service for a new token for it.

The service is called with the `api-token` input, or else with the workflow's GitHub
OIDC token. The run token in the answer is masked before anything is printed and handed
to the upload step in a file under `RUNNER_TEMP` that only the runner's user can read;
it is never a step output. The run's folder (spec.json, prompt.j2, run.json) goes under
the workspace, where the runner container sees it at the same path.

Resuming (`POST /api/local-runs/{run_id}/resume`) answers a new run token for the same
issued run, and the old one stops working; the run's folder, spec and partial job come
from the earlier attempt's artifact, which never holds a token.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hbench.action.oidc import request_id_token
from hbench.action.protocol import Actions, Inputs, run_step
from hbench.digest import spec_digest
from hbench.errors import HbenchError
from hbench.issue import (
    PROMPT_FILE,
    RUN_FILE,
    RUNS_PATH,
    SPEC_FILE,
    Service,
    check_folder_free,
    issue_body,
    parse_kwargs,
    write_new,
)

RUNS_FOLDER = "hbench-runs"
"""Under the workspace: each issued run's folder, named after its job."""
HANDOFF_FOLDER = "hbench"
"""Under `RUNNER_TEMP`: the run tokens, one file per run, owner-only."""
TITLE = "hbench: the run was not issued"


def request_body(inputs: Inputs) -> dict[str, Any]:
    """`POST /api/local-runs`'s body from the inputs: a board, or a dataset and model."""
    board, dataset = inputs.get("board"), inputs.get("dataset")
    if board is None and dataset is None:
        message = "set the input `board`, or `dataset` with `model` (and `task-set`, `attempts`)"
        raise HbenchError("action-input-invalid", message)
    return issue_body(
        agent=inputs.required("agent"),
        board=board,
        dataset=dataset,
        task_set=inputs.get("task-set"),
        model=inputs.get("model"),
        attempts=inputs.integer("attempts"),
        kwargs=agent_kwargs(inputs.get("agent-kwargs")),
        environment=inputs.get("environment"),
        concurrent_trials=inputs.integer("concurrent-trials"),
        shards=inputs.integer("shards"),
    )


def agent_kwargs(text: str | None) -> dict[str, Any]:
    return parse_kwargs(
        text, option="`agent-kwargs`", code="action-input-invalid", example='{"temperature": 0}'
    )


def write_run(run_dir: Path, token_file: Path, answer: dict[str, Any]) -> None:
    """The run's folder without its token, and the token alone in its owner-only file."""
    check_folder_free(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_new(run_dir / SPEC_FILE, json.dumps(answer["spec"], indent=2) + "\n")
    if answer.get("prompt_template") is not None:
        write_new(run_dir / PROMPT_FILE, answer["prompt_template"])
    details = {key: value for key, value in answer.items() if key not in {"token", "spec"}}
    write_new(run_dir / RUN_FILE, json.dumps(details, indent=2) + "\n")
    token_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_new(token_file, answer["token"] + "\n", mode=0o600)


def service_token(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> str:
    """The API token of the inputs, else the job's OIDC token for the service; masked."""
    token = inputs.get("api-token")
    if token is None:
        token = request_id_token(environ, inputs.required("service-url"))
    actions.mask(token)
    return token


def issue(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    if (api_token := inputs.get("api-token")) is not None:
        actions.mask(api_token)
    service_url = inputs.required("service-url")
    if inputs.get("resume-dir") is not None:
        resume(actions, inputs, environ)
        return
    if inputs.get("shard") is not None:
        claim(actions, inputs, environ)
        return
    body = request_body(inputs)
    workspace, temp = actions.workspace(), actions.temp_dir()
    token = service_token(actions, inputs, environ)
    answer = Service(service_url, token).call("POST", RUNS_PATH, body)
    for shard in answer.get("shards") or []:
        actions.mask(shard["token"])  # each shard's job claims a token of its own
    if answer.get("shards"):
        sharded(actions, answer, workspace / RUNS_FOLDER / answer["job_name"])
        return
    actions.mask(answer["token"])  # before any line that follows can print it
    job_name = answer["job_name"]
    run_dir = workspace / RUNS_FOLDER / job_name
    token_file = temp / HANDOFF_FOLDER / f"{job_name}.run-token"
    try:
        write_run(run_dir, token_file, answer)
    except OSError as exc:
        message = (
            f"the run {answer['run_id']} was issued, but its files could not be written "
            f"({exc.strerror}: {exc.filename}); abandon it with "
            f"`hbench runs abandon {answer['run_id']}` and run the job again"
        )
        raise HbenchError("runs-folder-invalid", message) from None
    execution = answer.get("execution") or {}
    actions.log(
        f"issued run {answer['run_id']} on {answer['board']} as entry {answer['submission']}; "
        f"its spec is in {run_dir / SPEC_FILE}, its token works until {answer['expires_at']}; "
        f"its trials run in {execution.get('environment')}, "
        f"{execution.get('n_concurrent_trials')} at once"
    )
    set_outputs(actions, answer, run_dir, token_file)


def sharded(actions: Actions, answer: dict[str, Any], run_dir: Path) -> None:
    """A sharded run's folder (its whole spec and details, no token) and the `shards`
    output: each shard's place, id, job name and tasks, for the matrix of jobs that run
    them. The shards' tokens stay out of it: each job claims its shard's own."""
    shards = [
        {key: shard[key] for key in ("index", "run_id", "job_name", "tasks")}
        for shard in answer["shards"]
    ]
    check_folder_free(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_new(run_dir / SPEC_FILE, json.dumps(answer["spec"], indent=2) + "\n")
    hidden = {"token", "spec", "shards"}
    details = {key: value for key, value in answer.items() if key not in hidden}
    write_new(run_dir / RUN_FILE, json.dumps({**details, "shards": shards}, indent=2) + "\n")
    actions.log(
        f"issued run {answer['run_id']} on {answer['board']} as entry {answer['submission']}, "
        f"in {len(shards)} shards: "
        + "; ".join(f"{s['index']}: {', '.join(s['tasks'])}" for s in shards)
    )
    for name, value in {
        "submission": answer["submission"],
        "board": answer["board"],
        "job-name": answer["job_name"],
        "run-id": str(answer["run_id"]),
        "run-dir": str(run_dir),
        "shards": json.dumps(shards, separators=(",", ":")),
    }.items():
        actions.set_output(name, value)


def claim(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    """Take the shard's own run token (`POST /api/local-runs/{shard}/claim`) and write its
    folder as an issued run's, for the run and upload steps that follow."""
    shard_id = inputs.required("shard")
    token = service_token(actions, inputs, environ)
    answer = Service(inputs.required("service-url"), token).call(
        "POST", f"{RUNS_PATH}/{shard_id}/claim", {}
    )
    actions.mask(answer["token"])  # before any line that follows can print it
    job_name = answer["job_name"]
    run_dir = actions.workspace() / RUNS_FOLDER / job_name
    token_file = actions.temp_dir() / HANDOFF_FOLDER / f"{job_name}.run-token"
    write_run(run_dir, token_file, answer)
    actions.log(
        f"claimed shard {shard_id} ({job_name}) of a run on {answer['board']} as entry "
        f"{answer['submission']}; its token works until {answer['expires_at']}"
    )
    set_outputs(actions, answer, run_dir, token_file)


def set_outputs(
    actions: Actions, details: Mapping[str, Any], run_dir: Path, token_file: Path
) -> None:
    for name, value in {
        "submission": details["submission"],
        "board": details["board"],
        "job-name": details["job_name"],
        "run-id": str(details["run_id"]),
        "run-dir": str(run_dir),
        "token-file": str(token_file),
    }.items():
        actions.set_output(name, value)


def earlier_run(folder: Path, workspace: Path) -> Path:
    """The run's folder in what an earlier attempt's artifact unpacked to: the folder
    itself when it holds run.json, else its one subfolder that does."""
    folder = folder.resolve()
    if not folder.is_relative_to(workspace.resolve()):
        message = f"`resume-dir` {folder} must be inside the workspace {workspace}"
        raise HbenchError("action-input-invalid", message + ", the only folder the run sees")
    if (folder / RUN_FILE).is_file():
        return folder
    found = sorted(p.parent for p in folder.glob(f"*/{RUN_FILE}")) if folder.is_dir() else []
    if len(found) != 1:
        what = "no run's folder" if not found else f"{len(found)} runs' folders"
        raise HbenchError(
            "action-input-invalid",
            f"`resume-dir` {folder} holds {what} (a folder with {RUN_FILE}): download the "
            "earlier attempt's artifact there, as the reusable workflow's `resume` does",
        )
    return found[0]


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        message = f"can't read {path}, from the earlier attempt's artifact: {exc}"
        raise HbenchError("action-input-invalid", message) from None


def resume_mismatch(run_dir: Path, run_id: str) -> HbenchError:
    return HbenchError(
        "action-resume-mismatch",
        f"{run_dir / SPEC_FILE} is not the spec the service issued for run {run_id}: the "
        "artifact was changed, or is another run's. Resume from the artifact of the "
        "workflow run that issued it, unchanged",
    )


def resume(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    """Ask for a new token for the run an earlier attempt left, and hand it on."""
    workspace, temp = actions.workspace(), actions.temp_dir()
    run_dir = earlier_run(Path(inputs.required("resume-dir")), workspace)
    details = read_json(run_dir / RUN_FILE)
    if not isinstance(details, dict) or not details.get("run_id") or not details.get("job_name"):
        raise HbenchError("action-input-invalid", f"{run_dir / RUN_FILE} names no issued run")
    run_id = str(details["run_id"])
    spec = read_json(run_dir / SPEC_FILE)
    # Checked before the service is asked, since its answer retires the earlier token.
    if spec_digest(spec) != details.get("spec_digest"):
        raise resume_mismatch(run_dir, run_id)
    token = service_token(actions, inputs, environ)
    answer = Service(inputs.required("service-url"), token).call(
        "POST", f"{RUNS_PATH}/{run_id}/resume", {}
    )
    actions.mask(answer["token"])  # before any line that follows can print it
    # By digest: the service keeps the spec redacted, and its digest as issued.
    if answer.get("spec_digest") != details["spec_digest"] or (
        answer.get("job_name") != details["job_name"]
    ):
        raise resume_mismatch(run_dir, run_id)
    # The rest (the entry, the variables the run needs) stays as the issue step wrote it.
    details["expires_at"] = answer.get("expires_at")
    token_file = temp / HANDOFF_FOLDER / f"{details['job_name']}.run-token"
    token_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_new(token_file, answer["token"] + "\n", mode=0o600)
    (run_dir / RUN_FILE).write_text(json.dumps(details, indent=2) + "\n", encoding="utf-8")
    actions.log(
        f"resuming run {run_id} on {details['board']} as entry {details['submission']}, "
        f"from {run_dir}; its new token works until {details.get('expires_at')}, the "
        "earlier attempt's no longer"
    )
    set_outputs(actions, details, run_dir, token_file)


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Issue the run; 0 when it was issued, 1 with `::error::` annotations when not."""
    del argv  # every setting arrives as an input variable
    return run_step(TITLE, lambda actions, env: issue(actions, Inputs(env), env), environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
