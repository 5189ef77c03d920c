"""The Action's first step: issue a run from the service and write its folder.

The service is called with the `api-token` input, or else with the workflow's GitHub
OIDC token. The run token in the answer is masked before anything is printed and handed
to the upload step in a file under `RUNNER_TEMP` that only the runner's user can read;
it is never a step output. The run's folder (spec.json, prompt.j2, run.json) goes under
the workspace, where the runner container sees it at the same path.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hbench.action.oidc import request_id_token
from hbench.action.protocol import Actions, Inputs, run_step
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


def issue(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    api_token = inputs.get("api-token")
    if api_token is not None:
        actions.mask(api_token)
    service_url = inputs.required("service-url")
    body = request_body(inputs)
    workspace, temp = actions.workspace(), actions.temp_dir()
    if api_token is None:
        api_token = request_id_token(environ, service_url)
        actions.mask(api_token)
    answer = Service(service_url, api_token).call("POST", RUNS_PATH, body)
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
    actions.log(
        f"issued run {answer['run_id']} on {answer['board']} as entry {answer['submission']}; "
        f"its spec is in {run_dir / SPEC_FILE}, its token works until {answer['expires_at']}"
    )
    for name, value in {
        "submission": answer["submission"],
        "board": answer["board"],
        "job-name": job_name,
        "run-id": str(answer["run_id"]),
        "run-dir": str(run_dir),
        "token-file": str(token_file),
    }.items():
        actions.set_output(name, value)


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Issue the run; 0 when it was issued, 1 with `::error::` annotations when not."""
    del argv  # every setting arrives as an input variable
    return run_step(TITLE, lambda actions, env: issue(actions, Inputs(env), env), environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
