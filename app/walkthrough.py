"""The README's first command: the whole system on its embedded defaults, step by step.

Each step runs the real command a user would type and prints it first, so the
output reads as a tour: the demo dataset is run by `hbench run` in the bubblewrap
sandbox, sealed, verified and packed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from hbench.demo import DATASET_REF, demo_spec, materialize

HBENCH = str(Path(sys.executable).with_name("hbench"))


def step(title: str, argv: list[str], cwd: Path) -> None:
    """Print a step and its command, run it, and stop the tour if it fails."""
    shown = " ".join(shlex.quote(a) for a in ["hbench", *argv[1:]] if a)
    print(f"\n== {title}\n$ {shown}", flush=True)
    env = {**os.environ, "HARBOR_TELEMETRY": "0"}
    code = subprocess.run(argv, cwd=cwd, env=env, check=False).returncode
    if code != 0:
        sys.exit(f"walkthrough stopped: `{shown}` exited with status {code}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--state-dir", type=Path, default=Path("demo-run"))
    args = parser.parse_args(argv)
    state: Path = args.state_dir.resolve()
    state.mkdir(parents=True, exist_ok=True)

    registry = materialize(state / "dataset")
    print(f"== The demo dataset {DATASET_REF} is at {registry.parent}")
    job_name = time.strftime("demo-oracle-%Y%m%d-%H%M%S")
    run_dir = state / "runs" / job_name
    run_dir.mkdir(parents=True)
    spec = demo_spec(registry, job_name, n_attempts=2)
    (run_dir / "spec.json").write_text(json.dumps(spec, indent=2) + "\n")
    print(f"== A spec for the oracle agent is at {run_dir / 'spec.json'}")

    jobs = state / "jobs"
    job = jobs / job_name
    step("Run it with Harbor and seal the job", [
        HBENCH, "run", "--config", str(run_dir / "spec.json"), "--jobs-dir", str(jobs),
    ], cwd=run_dir)  # fmt: skip
    step("Verify the sealed job", [HBENCH, "jobs", "verify", "-p", str(job)], cwd=state)
    step("Pack it for upload", [
        HBENCH, "jobs", "pack", "-p", str(job), "-o", str(state / f"{job_name}.tgz"),
    ], cwd=state)  # fmt: skip
    print(f"\nDone: the sealed job is {job}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
