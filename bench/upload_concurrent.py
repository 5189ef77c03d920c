"""Benchmark: 50 concurrent uploads of a small real job to the real service on loopback.

The job is a real Harbor run of the demo dataset (5 trials, sealed by `hbench run`), the
size of a small benchmark run once packed. The service is `hbench-app serve` in its own
process, on SQLite in a fresh state directory (or on PostgreSQL with `--database-url`).
Every upload goes the whole way: streamed body, archive checks, the rule table,
redaction, the packed blob and the row. The figures are throughput and the p50/p99
latency of an upload as a client sees it, beside the same uploads sent one at a time to
the same service. Rounds alternate between the two (one at a time, then many at once),
so load from anything else on the machine weighs on both alike; the throughputs are the
medians of the rounds', the latencies over all of them. Before the first round, uploads
as many at once as the service has upload workers start every worker, so no round pays
for a worker's start.

    .venv/bin/python bench/upload_concurrent.py
    .venv/bin/python bench/upload_concurrent.py --uploads 500 --concurrency 50 --rounds 5
    .venv/bin/python bench/upload_concurrent.py --dir /dev/shm   # state on tmpfs
    .venv/bin/python bench/upload_concurrent.py --database-url postgresql+psycopg://…/bench

The goal (issue 20): many at a time answer at least 1.5x the uploads per second of one at
a time, on 2 cores. Exits 1 when any upload is not accepted or the goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from report import Row, emit
from service import make_tokens, run_demo_job, running_service

from hbench.jobs.pack import pack

WARM_UP = 5
GOAL = 1.5
"""Uploads per second 50 at a time, at least this many times those one at a time."""
UPLOAD_WORKERS = 2
"""The service's upload workers (`HBENCH_UPLOAD_WORKERS`' default): the warm-up uploads
this many at once, so each has started before a round is timed."""


@dataclass(frozen=True)
class Figures:
    uploads: int
    concurrency: int
    wall: float
    latencies: list[float]
    archive_bytes: int
    files: int
    failures: list[str]


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

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(uploads)))
        wall = time.perf_counter() - started
    return Figures(uploads, concurrency, wall, latencies, len(body), 0, failures)


async def warm_up(url: str, token: str, body: bytes) -> list[str]:
    """Uploads enough at once that every upload worker has started; their failures."""
    figures = await upload_all(url, token, body, WARM_UP * UPLOAD_WORKERS, UPLOAD_WORKERS)
    return figures.failures


def combined(rounds: list[Figures]) -> Figures:
    """The rounds as one: the median round's wall time, every latency and failure."""
    walls = sorted(r.wall for r in rounds)
    return Figures(
        uploads=rounds[0].uploads,
        concurrency=rounds[0].concurrency,
        wall=statistics.median(walls),
        latencies=[t for r in rounds for t in r.latencies],
        archive_bytes=rounds[0].archive_bytes,
        files=rounds[0].files,
        failures=[f for r in rounds for f in r.failures],
    )


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def report(figures: Figures, serial: Figures, backend: str, rounds: int) -> int:
    ms = [latency * 1000 for latency in figures.latencies]
    serial_ms = [latency * 1000 for latency in serial.latencies]
    serial_rate = serial.uploads / serial.wall
    print(f"\njob: the demo dataset, 5 trials, {figures.archive_bytes / 1024:.1f} KiB packed")
    print(f"service: hbench-app serve on loopback, {backend}")
    print(f"{figures.uploads} uploads, {figures.concurrency} at a time, and {serial.uploads} one "
          f"at a time, in each of {rounds} alternating rounds; throughput and wall are the "
          "median round's")  # fmt: skip
    print(f"{'throughput':<24}{figures.uploads / figures.wall:>10.1f} uploads/s")
    print(f"{'wall':<24}{figures.wall:>10.2f} s")
    print(f"{'latency p50':<24}{statistics.median(ms):>10.0f} ms")
    print(f"{'latency p99':<24}{percentile(ms, 0.99):>10.0f} ms")
    print(f"{'latency max':<24}{max(ms):>10.0f} ms")
    print(f"{'one at a time':<24}{serial_rate:>10.1f} uploads/s, "
          f"p50 {statistics.median(serial_ms):.0f} ms ({serial.uploads} uploads)")  # fmt: skip
    rate = figures.uploads / figures.wall
    met = rate >= GOAL * serial_rate
    verdict = "met" if met else "MISSED"
    print(f"\n{figures.concurrency} at a time answer {rate / serial_rate:.2f}x the uploads per "
          f"second of one at a time (goal: at least {GOAL}x) -> {verdict}")  # fmt: skip
    emit([
        Row("upload concurrency", f"{figures.concurrency} at a time: throughput", rate,
            "uploads/s", "one at a time", serial_rate, f"≥{GOAL}x"),
        Row("upload concurrency", f"{figures.concurrency} at a time: latency p50",
            statistics.median(ms), "ms", "one at a time", statistics.median(serial_ms)),
        Row("upload concurrency", f"{figures.concurrency} at a time: latency p99",
            percentile(ms, 0.99), "ms", "one at a time", percentile(serial_ms, 0.99)),
    ])  # fmt: skip
    failures = figures.failures + serial.failures
    if failures:
        print(f"\n{len(failures)} uploads failed, the first: {failures[0]}")
        return 1
    return 0 if met else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--serial", type=int, default=20, help="uploads sent one at a time")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of each")
    parser.add_argument("--database-url", help="a PostgreSQL URL (default: SQLite)")
    parser.add_argument("--dir", type=Path, help="where the state lives (default: $TMPDIR)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-upload-", dir=args.dir) as scratch:
        folder = Path(scratch)
        print("running the demo job with hbench run …")
        job = run_demo_job(folder, "bench-upload", n_attempts=1)
        out = io.BytesIO()
        pack(job, out)
        body = out.getvalue()
        serial_rounds, rounds = [], []
        with running_service(folder / "state", database_url=args.database_url) as service:
            token = make_tokens(service.database_url, ["bench"])["bench"]
            failures = asyncio.run(warm_up(service.url, token, body))
            if failures:
                print(f"the warm-up's uploads failed, the first: {failures[0]}")
                return 1
            for _ in range(args.rounds):
                serial_rounds.append(
                    asyncio.run(upload_all(service.url, token, body, args.serial, 1))
                )
                rounds.append(
                    asyncio.run(
                        upload_all(service.url, token, body, args.uploads, args.concurrency)
                    )
                )
    backend = "PostgreSQL" if args.database_url else "SQLite"
    where = f"{backend}, state in {args.dir or tempfile.gettempdir()}"
    return report(combined(rounds), combined(serial_rounds), where, args.rounds)


if __name__ == "__main__":
    raise SystemExit(main())
