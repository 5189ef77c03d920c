"""Benchmark: `hbench jobs upload` against `tar czf` piped to `curl --data-binary`, each
sending the same real job to the same endpoint of the real service on loopback.

The job is a real Harbor run of the demo dataset (5 tasks, 2 attempts each, sealed by
`hbench run`). `hbench jobs upload` verifies the job against its manifest, packs it and
streams it; the baseline only packs and sends, as a user with no client would. Both sign
in with the same API token and must be answered 201. Runs alternate; the figures are
medians of the wall time each command takes, start to exit.

    .venv/bin/python bench/upload_client.py
    .venv/bin/python bench/upload_client.py --repeat 15 --database-url postgresql+psycopg://…

Exits 1 when an upload is not accepted.
"""

from __future__ import annotations

import argparse
import os
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


def time_hbench_upload(job: Path, endpoint: str, token: str) -> float:
    env = {**os.environ, TOKEN_VARIABLE: token}
    command = [str(BIN / "hbench"), "jobs", "upload", str(job), "--url", endpoint,
               "--token-env", TOKEN_VARIABLE]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"hbench jobs upload failed:\n{done.stdout}\n{done.stderr}")
    return took


def time_tar_curl(job: Path, endpoint: str, headers: Path) -> float:
    """`tar czf` of the job folder piped to curl, the headers (the token) read from a file
    so they never show in the process list."""
    script = (
        'tar czf - -C "$1" "$2" | curl -sS -o /dev/null -w "%{http_code}" '
        '-H @"$3" --data-binary @- "$4"'
    )
    args = [str(job.parent), job.name, str(headers), endpoint]
    start = time.perf_counter()
    done = subprocess.run(
        ["bash", "-c", script, "bash", *args], capture_output=True, text=True, check=False
    )
    took = time.perf_counter() - start
    if done.returncode != 0 or done.stdout.strip() != "201":
        raise RuntimeError(f"tar | curl was answered {done.stdout!r}: {done.stderr}")
    return took


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
            ours, baseline = [], []
            for _ in range(args.repeat):
                baseline.append(time_tar_curl(job, endpoint, headers))
                ours.append(time_hbench_upload(job, endpoint, token))
    ours_s, base_s = median(ours) * 1000, median(baseline) * 1000
    print(f"\njob: the demo dataset, 10 trials, {size / 1024:.1f} KiB packed; medians of "
          f"{args.repeat} alternating uploads\n")  # fmt: skip
    print(f"{'tar czf | curl':<22}{base_s:>8.0f} ms")
    print(f"{'hbench jobs upload':<22}{ours_s:>8.0f} ms   {ours_s / base_s:.2f}x")
    emit([Row("upload client", "hbench jobs upload", ours_s, "ms", "tar czf | curl", base_s)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
