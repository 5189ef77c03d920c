"""The reusable workflow's last job for a sharded run: read the run from the service once its
matrix of shard jobs is done, and report its one merged job (its score, its page) in the
step summary, with each shard's state.

The service is asked with the `api-token` input, or else with the job's GitHub OIDC token
(`GET /api/local-runs/{run_id}`, which answers a job of the repository that issued the
run). A run with a shard missing is reported, and the step fails with the run's problem
code (`run-shards-missing` once its window has closed).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from hbench.action.issue import service_token
from hbench.action.protocol import Actions, Inputs, run_step
from hbench.action.summary import cell
from hbench.errors import HbenchError
from hbench.issue import RUNS_PATH, Service

TITLE = "hbench: the sharded run is not complete"
JOB_PAGE = "/bench/jobs/"
JOB_PATH = "/api/bench/jobs/"


def run_summary(run: Mapping[str, Any], service_url: str) -> str:
    """The merged run as the step summary shows it: its entry, score, page and shards."""
    shards = run.get("shards") or {}
    lines = [f"### hbench: {cell(run['job_name'])}", "", "| | |", "|---|---|"]
    lines.append(f"| entry | `{cell(run['submission'])}` on board `{cell(run['board'])}` |")
    lines.append(f"| run | {cell(run['run_id'])}, {cell(run['status'])} |")
    count, uploaded = shards.get("count", 0), shards.get("uploaded", 0)
    lines.append(f"| shards | {uploaded} of {count} uploaded |")
    if shards.get("missing"):
        missing = ", ".join(str(index) for index in shards["missing"])
        lines.append(f"| missing | shard {cell(missing)} |")
    if run.get("job_id") is not None:
        page = f"{service_url}{JOB_PAGE}{run['job_id']}"
        lines.append(f"| score | {float(run['score'] or 0):.3f}, the merged run's |")
        lines.append(f"| job | [{cell(run['job_id'])}]({page}), private until you publish it |")
    else:
        lines.append("| job | none yet: the run has a job once every shard is uploaded |")
    return "\n".join(lines) + "\n"


def report(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    service_url = inputs.required("service-url").rstrip("/")
    run_id = inputs.required("run-id")
    token = service_token(actions, inputs, environ)
    run = Service(service_url, token).call("GET", f"{RUNS_PATH}/{run_id}")
    actions.summary(run_summary(run, service_url))
    if run.get("job_id") is None:
        code = run.get("problem") or "run-shards-missing"
        missing = ", ".join(str(i) for i in (run.get("shards") or {}).get("missing") or [])
        raise HbenchError(
            code,
            f"the run {run_id} has no job: shard {missing or '?'} was not uploaded. Its shard "
            "jobs' logs say why; run the workflow again (a re-run of a failed job is a new "
            "attempt, which can't claim a shard of this one)",
        )
    job_id = str(run["job_id"])
    actions.log(f"run {run_id}: merged job {job_id}, score {float(run['score'] or 0):.4f}")
    actions.set_output("job-id", job_id)
    actions.set_output("score", f"{float(run['score'] or 0):.4f}")
    actions.set_output("job-url", f"{service_url}{JOB_PATH}{job_id}")
    actions.set_output("page", f"{service_url}{JOB_PAGE}{job_id}")


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Report the run; 0 when it has its merged job, 1 with an `::error::` otherwise."""
    del argv  # every setting arrives as an input variable
    return run_step(TITLE, lambda actions, env: report(actions, Inputs(env), env), environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
