"""Benchmark: `hbench jobs upload` against `tar czf` piped to `curl --data-binary`, each
sending the same real job to the same endpoint of the real service on loopback.

The job is a real Harbor run of the demo dataset (5 tasks, 2 attempts each, sealed by
`hbench run`). `hbench jobs upload` verifies the job against its manifest, packs it and
streams it; the baseline only packs and sends, as a user with no client would. Both sign
in with the same API token and must be answered 201. Runs alternate; the figures are
medians of the wall time each command takes, start to exit, and of the CPU time it took
with all it ran (user and system: tar, gzip and curl for the baseline). The service's
time is in both; the goal is `hbench jobs upload` within 2x the baseline's wall time. On
a busy machine the CPU times say what each command costs without waiting for a core.

Beside them runs the floor of any client on the same typer: a command of the same
arguments and options that does nothing (typer builds a pydantic adapter for each
parameter, so it imports pydantic too).

    .venv/bin/python bench/upload_client.py
    .venv/bin/python bench/upload_client.py --repeat 15 --database-url postgresql+psycopg://…

Exits 1 when an upload is not accepted.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import Row, emit, median
from service import BIN, make_tokens, packed, run_demo_job, running_service

TOKEN_VARIABLE = "HBENCH_BENCH_TOKEN"  # noqa: S105 - the name of a variable, not a secret
CURL = shutil.which("curl")


GOAL_RATIO = 2.0
FLOOR = '''
from pathlib import Path
from typing import Annotated
import typer
app = typer.Typer(add_completion=False)

@app.command()
def upload(
    job_path: Annotated[Path, typer.Argument()],
    url: Annotated[str, typer.Option("--url")],
    token_env: Annotated[str | None, typer.Option("--token-env")] = None,
    header: Annotated[list[str] | None, typer.Option("--header", "-H")] = None,
) -> None:
    """Do nothing."""

app()
'''


def children_cpu() -> float:
    """The CPU time (user and system) of every child process ended so far, and of theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(
    command: list[str], env: dict[str, str] | None = None
) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Run a command: its wall time, its CPU time with all it ran, and how it ended."""
    cpu = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    return took, children_cpu() - cpu, done


def time_hbench_upload(job: Path, endpoint: str, token: str) -> tuple[float, float]:
    env = {**os.environ, TOKEN_VARIABLE: token}
    command = [str(BIN / "hbench"), "jobs", "upload", str(job), "--url", endpoint,
               "--token-env", TOKEN_VARIABLE]  # fmt: skip
    took, cpu, done = timed(command, env)
    if done.returncode != 0:
        raise RuntimeError(f"hbench jobs upload failed:\n{done.stdout}\n{done.stderr}")
    return took, cpu


def time_floor(floor: Path, job: Path, endpoint: str) -> tuple[float, float]:
    took, cpu, done = timed([sys.executable, str(floor), str(job), "--url", endpoint])
    if done.returncode != 0:
        raise RuntimeError(f"the typer floor failed: {done.stderr}")
    return took, cpu


def time_tar_curl(job: Path, endpoint: str, headers: Path) -> tuple[float, float]:
    """`tar czf` of the job folder piped to curl, the headers (the token) read from a file
    so they never show in the process list."""
    script = (
        'tar czf - -C "$1" "$2" | curl -sS -o /dev/null -w "%{http_code}" '
        '-H @"$3" --data-binary @- "$4"'
    )
    args = [str(job.parent), job.name, str(headers), endpoint]
    took, cpu, done = timed(["bash", "-c", script, "bash", *args])
    if done.returncode != 0 or done.stdout.strip() != "201":
        raise RuntimeError(f"tar | curl was answered {done.stdout!r}: {done.stderr}")
    return took, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="uploads by each command")
    parser.add_argument("--database-url", help="a PostgreSQL URL (default: SQLite)")
    args = parser.parse_args(argv)
    if CURL is None:
        print("curl is not installed; this benchmark compares with it")
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-client-") as scratch:
        folder = Path(scratch)
        print("running the demo job with hbench run …")
        job = run_demo_job(folder)
        size = len(packed(job))
        with running_service(folder / "state", database_url=args.database_url) as service:
            token = make_tokens(service.database_url, ["bench"])["bench"]
            headers = folder / "headers.txt"
            headers.touch(mode=0o600)
            headers.write_text(f"authorization: Bearer {token}\ncontent-type: application/gzip\n")
            endpoint = f"{service.url}/api/bench/uploads"
            time_tar_curl(job, endpoint, headers)  # warms the service and the page cache
            floor = folder / "floor.py"
            floor.write_text(FLOOR, encoding="utf-8")
            time_hbench_upload(job, endpoint, token)
            time_floor(floor, job, endpoint)
            ours, baseline, least = [], [], []
            for _ in range(args.repeat):
                baseline.append(time_tar_curl(job, endpoint, headers))
                ours.append(time_hbench_upload(job, endpoint, token))
                least.append(time_floor(floor, job, endpoint))
    runs = (ours, baseline, least)
    ours_s, base_s, floor_s = (median(wall for wall, _ in each) * 1000 for each in runs)
    ours_cpu, base_cpu, floor_cpu = (median(cpu for _, cpu in each) * 1000 for each in runs)
    load = os.getloadavg()[0]
    print(f"\njob: the demo dataset, 10 trials, {size / 1024:.1f} KiB packed; medians of "
          f"{args.repeat} alternating uploads (load average {load:.1f})\n")  # fmt: skip
    print(f"{'tar czf | curl':<22}{base_s:>8.0f} ms          CPU {base_cpu:>5.0f} ms")
    print(f"{'hbench jobs upload':<22}{ours_s:>8.0f} ms   {ours_s / base_s:.2f}x  "
          f"CPU {ours_cpu:>5.0f} ms")  # fmt: skip
    print(f"{'typer, doing nothing':<22}{floor_s:>8.0f} ms   {floor_s / base_s:.2f}x  "
          f"CPU {floor_cpu:>5.0f} ms")  # fmt: skip
    print(f"goal: hbench jobs upload within {GOAL_RATIO:.0f}x tar czf | curl")
    emit([
        Row("upload client", "hbench jobs upload", ours_s, "ms", "tar czf | curl", base_s,
            goal=f"at most {GOAL_RATIO:.0f}x"),
        Row("upload client", "hbench jobs upload (CPU)", ours_cpu, "ms",
            "tar czf | curl (CPU)", base_cpu),
        Row("upload client", "typer command doing nothing", floor_s, "ms",
            "tar czf | curl", base_s),
    ])  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
