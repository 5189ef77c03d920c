"""Docker: the demo job with Harbor's docker environment beside the same job in the
bubblewrap sandbox, and the runner image's build time (cold, then cached) and size.

Both jobs run in this run, one after the other, with the oracle agent and the same
flags; the figure is each `harbor run`'s wall time. The runner image is built on the
local Debian 13 base (tools/images.py) under its own tag: first with `--no-cache`
(every layer again, its packages downloaded from Debian and PyPI), then again with
nothing changed (every layer from the cache). Its size is shown beside its base's.

    .venv/bin/python bench/docker_env.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import Row, emit

from hbench.sandbox import IMPORT_PATH
from registry.demo import DATASET_REF, materialize

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/ is not installed
from tools import dockerhost, images

HARBOR = str(Path(sys.executable).with_name("harbor"))
TAG = "hbench-runner:bench"
NAME = "docker_env"


def harbor_job(root: Path, registry: Path, name: str, environment: list[str]) -> float:
    """Run the demo job once with the oracle; its wall time in seconds."""
    argv = [
        HARBOR, "run", "-y", "-q", "-d", DATASET_REF, "--registry-path", str(registry),
        *environment, "-a", "oracle", "-o", str(root / "jobs"), "--job-name", name,
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=900,
        env={**os.environ, "HARBOR_TELEMETRY": "0"},
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"harbor run ({name}) failed:\n{done.stdout}\n{done.stderr}")
    result = json.loads((root / "jobs" / name / "result.json").read_text())
    assert result["stats"]["n_completed_trials"] == 5, result["stats"]
    return seconds


def image_mb(docker: str, tag: str) -> float:
    size = subprocess.run(
        [docker, "image", "inspect", "-f", "{{.Size}}", tag],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return int(size) / 1e6


def timed_build(docker: str, log: Path, *, no_cache: bool) -> float:
    started = time.perf_counter()
    images.build_runner_image(docker, TAG, no_cache=no_cache, rebuild=True, log=log)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="jobs of each kind (median)")
    args = parser.parse_args(argv)
    lease = dockerhost.acquire((images.TASK_BASE, images.PYTHON_BASE))
    try:
        with tempfile.TemporaryDirectory(prefix="bench-docker-") as scratch:
            root = Path(scratch)
            registry = materialize(root / "demo")
            sandbox, docker_env = [], []
            for n in range(args.repeat):
                sandbox.append(harbor_job(root, registry, f"sandbox-{n}", ["--env", IMPORT_PATH]))
                docker_env.append(harbor_job(root, registry, f"docker-{n}", ["-e", "docker"]))
                print(f"job {n + 1}: sandbox {sandbox[-1]:.1f} s, docker {docker_env[-1]:.1f} s")
            cold = timed_build(lease.docker, root / "cold.log", no_cache=True)
            cached = timed_build(lease.docker, root / "cached.log", no_cache=False)
        size = image_mb(lease.docker, TAG)
        base = image_mb(lease.docker, images.PYTHON_BASE.tag)
    finally:
        lease.release()
    job_base = "demo job, bubblewrap sandbox"
    cold_name = "runner image build, cold (no cache)"
    rows = [
        Row(NAME, job_base, statistics.median(sandbox), "s"),
        Row(NAME, "demo job, Harbor's docker environment", statistics.median(docker_env), "s",
            job_base, statistics.median(sandbox)),
        Row(NAME, cold_name, cold, "s"),
        Row(NAME, "runner image build, cached", cached, "s", cold_name, cold),
        Row(NAME, "runner image size", size, "MB", f"its base, {images.PYTHON_BASE.tag}",
            base),
    ]  # fmt: skip
    for row in rows:
        beside = f" (beside {row.baseline_name}: {row.ratio:.2f}x)" if row.ratio else ""
        print(f"{row.figure}: {row.value:.1f} {row.unit}{beside}")
    emit(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
