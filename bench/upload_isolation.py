"""Benchmark: reading Your bench while hostile uploads are checked, against an idle service.

The figure is the p99 latency of `GET /api/bench/jobs` on `hbench-app serve` while four
adversarial uploads are processed, beside the same p99 on the same service idle, in the
same run (before the uploads and after them). The goal: at most 3x. An upload's checks,
redaction and packing are CPU-bound; where they hold the server's interpreter, every
other request waits for them.

An adversarial upload is a real demo job (the oracle over the demo dataset, sealed by
`hbench run`) with two large text files added to a trial's agent folder and sealed
again: texts made of nothing but strings redaction's rules match, each checked on its
own (`app.uploads.redaction.adversarial.dense`: `ghp_` tokens of low entropy, which are
kept, and random values assigned to key-like names, which are replaced). They redact at
1 to 8 MiB/s where ordinary text goes at 100 and more (docs/redaction.md): seconds of
CPU per upload, not minutes, and fewer replacements than the service's cap.

    .venv/bin/python bench/upload_isolation.py
    .venv/bin/python bench/upload_isolation.py --mib 6 --uploads 4   # smaller uploads
    .venv/bin/python bench/upload_isolation.py --env HBENCH_UPLOAD_WORKERS=1

Exits 1 when an upload is not accepted or the goal is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from report import Row, emit, percentile
from service import make_tokens, run_demo_job, running_service

from app.uploads.redaction.adversarial import dense
from hbench.jobs.manifest import load_manifest
from hbench.jobs.pack import pack
from hbench.jobs.sealing import seal

MIB = 1024 * 1024
GOAL_RATIO = 3.0
REPLACED_SHARE = 0.2
"""Of an upload's added text, the share of replaced values (about 53 bytes each): 2 MiB
of 10 is some 40,000 replacements, under the cap of 100,000."""
LIST = "/api/bench/jobs"


@dataclass(frozen=True)
class Phase:
    """One stretch of reads: each request's latency, in seconds."""

    latencies: list[float]

    def ms(self, share: float) -> float:
        return percentile(self.latencies, share) * 1000


def adversarial_job(job: Path, folder: Path, mib: float) -> Path:
    """A copy of the sealed job with `mib` MiB of dense matches in a trial's agent
    folder, sealed again with the same spec digest."""
    dest = folder / "adversarial" / job.name
    shutil.copytree(job, dest)
    agent = next(path for path in sorted(dest.glob("*/agent")) if path.is_dir())
    kept, replaced = dense()
    total = int(mib * MIB)
    (agent / "tokens.txt").write_bytes(kept.text(int(total * (1 - REPLACED_SHARE))))
    (agent / "environment.txt").write_bytes(replaced.text(int(total * REPLACED_SHARE)))
    seal(dest, spec_digest=load_manifest(job).spec_digest)
    return dest


def packed(job: Path) -> bytes:
    out = io.BytesIO()
    pack(job, out)
    return out.getvalue()


async def read_while(client: httpx.AsyncClient, done: asyncio.Event, pause: float) -> Phase:
    """`GET /api/bench/jobs`, one at a time with `pause` between, until `done` is set."""
    latencies: list[float] = []
    while not done.is_set():
        started = time.perf_counter()
        answer = await client.get(LIST)
        latencies.append(time.perf_counter() - started)
        answer.raise_for_status()
        await asyncio.sleep(pause)
    return Phase(latencies)


async def read_for(client: httpx.AsyncClient, seconds: float, pause: float) -> Phase:
    done = asyncio.Event()
    asyncio.get_running_loop().call_later(seconds, done.set)
    return await read_while(client, done, pause)


@dataclass(frozen=True)
class Figures:
    idle: Phase
    loaded: Phase
    uploads: list[tuple[int, float]]
    """Each adversarial upload's status and seconds."""
    archive_bytes: int


async def measure(
    url: str, token: str, *, plain: bytes, hostile: bytes, uploads: int, idle: float, pause: float
) -> Figures:
    headers = {"authorization": f"Bearer {token}"}
    gzip = {**headers, "content-type": "application/gzip"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=900) as client:
        # Warm up: the first upload starts whatever the service starts on first use.
        (await client.post("/api/bench/uploads", content=plain, headers=gzip)).raise_for_status()
        await read_for(client, 1.0, pause)
        before = await read_for(client, idle, pause)

        done = asyncio.Event()

        async def one() -> tuple[int, float]:
            started = time.perf_counter()
            answer = await client.post("/api/bench/uploads", content=hostile, headers=gzip)
            return answer.status_code, time.perf_counter() - started

        async def all_uploads() -> list[tuple[int, float]]:
            try:
                return list(await asyncio.gather(*(one() for _ in range(uploads))))
            finally:
                done.set()

        sent, loaded = await asyncio.gather(all_uploads(), read_while(client, done, pause))
        after = await read_for(client, idle, pause)
    return Figures(Phase(before.latencies + after.latencies), loaded, sent, len(hostile))


def report(figures: Figures, uploads: int, mib: float) -> int:
    idle, loaded = figures.idle, figures.loaded
    ratio = loaded.ms(0.99) / idle.ms(0.99)
    seconds = [s for _, s in figures.uploads]
    print(f"\n{uploads} adversarial uploads of the demo job with {mib:g} MiB of dense matches "
          f"added ({figures.archive_bytes / MIB:.1f} MiB packed)")  # fmt: skip
    print(f"{'idle: requests':<34}{len(idle.latencies):>10}")
    print(f"{'idle: GET jobs p50':<34}{idle.ms(0.5):>10.1f} ms")
    print(f"{'idle: GET jobs p99':<34}{idle.ms(0.99):>10.1f} ms")
    print(f"{'during uploads: requests':<34}{len(loaded.latencies):>10}")
    print(f"{'during uploads: GET jobs p50':<34}{loaded.ms(0.5):>10.1f} ms")
    print(f"{'during uploads: GET jobs p99':<34}{loaded.ms(0.99):>10.1f} ms")
    print(f"{'during uploads: GET jobs max':<34}{max(loaded.latencies) * 1000:>10.1f} ms")
    print(f"{'adversarial upload p50':<34}{statistics.median(seconds):>10.2f} s")
    print(f"{'all adversarial uploads':<34}{max(seconds):>10.2f} s")
    print(f"p99 during uploads / idle p99: {ratio:.2f}x (goal: at most {GOAL_RATIO:g}x)")
    goal = f"at most {GOAL_RATIO:g}x"
    emit([
        Row("upload isolation", f"GET jobs p99 during {uploads} adversarial uploads",
            loaded.ms(0.99), "ms", "idle p99", idle.ms(0.99), goal),
        Row("upload isolation", f"GET jobs p50 during {uploads} adversarial uploads",
            loaded.ms(0.5), "ms", "idle p50", idle.ms(0.5)),
        Row("upload isolation", "adversarial upload, p50", statistics.median(seconds), "s"),
    ])  # fmt: skip
    refused = [status for status, _ in figures.uploads if status != 201]
    if refused:
        print(f"{len(refused)} adversarial uploads were not accepted: {refused}")
        return 1
    return 0 if ratio <= GOAL_RATIO else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=4, help="adversarial uploads at once")
    parser.add_argument("--mib", type=float, default=10.0, help="dense text added per upload")
    parser.add_argument("--idle-seconds", type=float, default=5.0, help="each idle stretch")
    parser.add_argument("--pause", type=float, default=0.01, help="seconds between reads")
    parser.add_argument("--dir", type=Path, help="where the state lives (default: $TMPDIR)")
    parser.add_argument(
        "--env", action="append", default=[], help="a NAME=value setting for the service"
    )
    args = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    with tempfile.TemporaryDirectory(prefix="bench-isolation-", dir=args.dir) as scratch:
        folder = Path(scratch)
        print("running the demo job with hbench run …")
        job = run_demo_job(folder, "bench-isolation", n_attempts=1)
        hostile = packed(adversarial_job(job, folder, args.mib))
        with running_service(folder / "state", env=env) as service:
            token = make_tokens(service.database_url, ["bench"])["bench"]
            figures = asyncio.run(
                measure(
                    service.url, token, plain=packed(job), hostile=hostile,
                    uploads=args.uploads, idle=args.idle_seconds, pause=args.pause,
                )
            )  # fmt: skip
    return report(figures, args.uploads, args.mib)


if __name__ == "__main__":
    raise SystemExit(main())
