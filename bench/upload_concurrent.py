"""Benchmark: 50 concurrent uploads of a small real job to the real service on loopback.

The job is a real Harbor run of the demo dataset (5 trials, sealed by `hbench run`), the
size of a small benchmark run once packed. The service is `hbench-app serve` in its own
process, on SQLite in a fresh state directory (or on PostgreSQL with `--database-url`).
Every upload goes the whole way: streamed body, archive checks, the rule table,
redaction, the packed blob and the row. The figures are throughput and the p50/p99
latency of an upload as a client sees it, beside the same uploads sent one at a time.

    .venv/bin/python bench/upload_concurrent.py
    .venv/bin/python bench/upload_concurrent.py --uploads 500 --concurrency 50
    .venv/bin/python bench/upload_concurrent.py --dir /dev/shm   # state on tmpfs
    .venv/bin/python bench/upload_concurrent.py --database-url postgresql+psycopg://…/bench

Exits 1 when any upload is not accepted.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from report import Row, emit

from hbench.demo import demo_spec, materialize
from hbench.jobs.pack import pack

BIN = Path(sys.executable).parent
STARTUP_SECONDS = 60.0
WARM_UP = 5


@dataclass(frozen=True)
class Figures:
    uploads: int
    concurrency: int
    wall: float
    latencies: list[float]
    archive_bytes: int
    files: int
    failures: list[str]


def run_demo_job(folder: Path) -> Path:
    """Run the demo dataset with the oracle through `hbench run`, which seals the job."""
    registry = materialize(folder / "demo")
    spec = folder / "spec.json"
    spec.write_text(json.dumps(demo_spec(registry, "bench-upload")))
    subprocess.run(
        [str(BIN / "hbench"), "run", "--config", str(spec)],
        cwd=folder,
        env={**os.environ, "HARBOR_TELEMETRY": "0"},
        check=True,
        capture_output=True,
    )
    return folder / "jobs" / "bench-upload"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_service(state: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = state.parent / "service.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(BIN / "hbench-app"), "serve", "--port", str(port), "--state-dir", str(state)],
            env=env,
            stdout=sink,
            stderr=sink,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"hbench-app serve exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.1)
    process.terminate()
    raise SystemExit("hbench-app serve did not start")


def api_token(state: Path, env: dict[str, str]) -> str:
    made = subprocess.run(
        [
            str(BIN / "hbench-app"),
            "tokens",
            "create",
            "--login",
            "bench",
            "--state-dir",
            str(state),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()


async def upload_all(url: str, token: str, body: bytes, uploads: int, concurrency: int) -> Figures:
    headers = {"authorization": f"Bearer {token}", "content-type": "application/gzip"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    failures: list[str] = []
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=300) as client:

        async def one() -> None:
            async with gate:
                start = time.perf_counter()
                answer = await client.post("/api/bench/uploads", content=body, headers=headers)
                latencies.append(time.perf_counter() - start)
                if answer.status_code != 201:
                    failures.append(f"{answer.status_code}: {answer.text[:200]}")

        for _ in range(WARM_UP):
            await one()
        latencies.clear()
        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(uploads)))
        wall = time.perf_counter() - started
    return Figures(uploads, concurrency, wall, latencies, len(body), 0, failures)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def report(figures: Figures, serial: Figures, backend: str) -> int:
    ms = [latency * 1000 for latency in figures.latencies]
    serial_ms = [latency * 1000 for latency in serial.latencies]
    serial_rate = serial.uploads / serial.wall
    print(f"\njob: the demo dataset, 5 trials, {figures.archive_bytes / 1024:.1f} KiB packed")
    print(f"service: hbench-app serve on loopback, {backend}")
    print(f"{figures.uploads} uploads, {figures.concurrency} at a time, after {WARM_UP} warm-up")
    print(f"{'throughput':<24}{figures.uploads / figures.wall:>10.1f} uploads/s")
    print(f"{'wall':<24}{figures.wall:>10.2f} s")
    print(f"{'latency p50':<24}{statistics.median(ms):>10.0f} ms")
    print(f"{'latency p99':<24}{percentile(ms, 0.99):>10.0f} ms")
    print(f"{'latency max':<24}{max(ms):>10.0f} ms")
    print(f"{'one at a time':<24}{serial_rate:>10.1f} uploads/s, "
          f"p50 {statistics.median(serial_ms):.0f} ms ({serial.uploads} uploads)")  # fmt: skip
    rate = figures.uploads / figures.wall
    emit([
        Row("upload concurrency", f"{figures.concurrency} at a time: throughput", rate,
            "uploads/s", "one at a time", serial_rate),
        Row("upload concurrency", f"{figures.concurrency} at a time: latency p50",
            statistics.median(ms), "ms", "one at a time", statistics.median(serial_ms)),
        Row("upload concurrency", f"{figures.concurrency} at a time: latency p99",
            percentile(ms, 0.99), "ms", "one at a time", percentile(serial_ms, 0.99)),
    ])  # fmt: skip
    failures = figures.failures + serial.failures
    if failures:
        print(f"\n{len(failures)} uploads failed, the first: {failures[0]}")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--serial", type=int, default=20, help="uploads sent one at a time")
    parser.add_argument("--database-url", help="a PostgreSQL URL (default: SQLite)")
    parser.add_argument("--dir", type=Path, help="where the state lives (default: $TMPDIR)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-upload-", dir=args.dir) as scratch:
        folder = Path(scratch)
        print("running the demo job with hbench run …")
        job = run_demo_job(folder)
        out = io.BytesIO()
        pack(job, out)
        env = {**os.environ, "HARBOR_TELEMETRY": "0"}
        if args.database_url:
            env["HBENCH_DATABASE_URL"] = args.database_url
        state = folder / "state"
        process, url = start_service(state, env)
        try:
            token = api_token(state, env)
            serial = asyncio.run(upload_all(url, token, out.getvalue(), args.serial, 1))
            figures = asyncio.run(
                upload_all(url, token, out.getvalue(), args.uploads, args.concurrency)
            )
        finally:
            process.terminate()
            process.wait(timeout=30)
    backend = "PostgreSQL" if args.database_url else "SQLite"
    return report(figures, serial, f"{backend}, state in {args.dir or tempfile.gettempdir()}")


if __name__ == "__main__":
    raise SystemExit(main())
