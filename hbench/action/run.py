"""The Action's second step: `hbench run --config spec.json` inside the hbench runner image,
or `hbench jobs resume` of the job an earlier attempt left in the run's folder.

`hbench.action.run_plan` decides the command and the variables, `hbench.action.image` finds
or builds the runner image, and `hbench.action.container` runs it and cleans up after it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from hbench.action import abandon
from hbench.action.container import container_name, docker_run, execute, remove_leftovers
from hbench.action.image import runner_image
from hbench.action.protocol import Actions, Inputs, run_step
from hbench.action.run_plan import plan
from hbench.errors import HbenchError

TITLE = "hbench: the run failed"


def run(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    workspace = actions.workspace().resolve()
    planned = plan(inputs, workspace, environ)
    for secret in planned.secrets:
        actions.mask(secret)
    env = {**environ, **planned.values}
    image = runner_image(actions, inputs, env)
    if planned.resumed:
        actions.log(f"resuming the job an earlier attempt left in {planned.job_dir}")
    name = container_name(planned)
    argv = docker_run(planned, workspace, image, name)
    actions.log("running: " + " ".join(argv))
    what = "hbench jobs resume" if planned.resumed else "hbench run"
    execute(argv, env, what, lambda docker: remove_leftovers(docker, name, planned.job_dir))
    if not (planned.job_dir / "manifest.json").is_file():
        message = f"the run ended without a sealed job at {planned.job_dir}"
        raise HbenchError("action-run-failed", message)
    actions.set_output("job-dir", str(planned.job_dir))
    actions.set_output("job-name", planned.job_dir.name)
    actions.set_output("resumed", "true" if planned.resumed else "false")


def run_or_give_up(actions: Actions, inputs: Inputs, environ: Mapping[str, str]) -> None:
    """The step; when it fails, its issued run is abandoned, or kept (`on-failure`)."""
    chosen = abandon.policy(inputs)
    try:
        run(actions, inputs, environ)
    except HbenchError:
        abandon.give_up(actions, inputs, chosen, environ)
        raise


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the issued spec; 0 when a sealed job folder exists, 1 with annotations if not."""
    del argv  # every setting arrives as an input variable
    step = run_or_give_up
    return run_step(TITLE, lambda actions, env: step(actions, Inputs(env), env), environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
