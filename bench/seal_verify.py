"""Benchmark: seal and verify a synthetic job against `sha256sum` over the same files.

The goal (from the issue): sealing and verifying a job of about 500 MiB in 20,000
files each take at most 1.3x the time `sha256sum` takes over the same files, with
memory flat in the job's size. Every measurement reads from a warm page cache;
rounds of sha256sum, seal and verify are interleaved and the table shows medians.
Each seal and verify runs in a child process so its peak RSS (ru_maxrss) is its
own; a second job with as many files but a fifth of the bytes shows whether memory
grows with the bytes.

    .venv/bin/python bench/seal_verify.py                       # the full run, a few minutes
    .venv/bin/python bench/seal_verify.py --size-mib 50 --files 2000   # a quick one

Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from report import Row, emit

MIB = 1024 * 1024
GOAL_RATIO = 1.3
OPENSSL = shutil.which("openssl")
FLAT_MIB = 16
"""Peak memory may differ by at most this much between the small and the full job."""

TRIAL_FILES = [
    "config.json", "lock.json", "result.json", "trial.log", "exception.txt",
    "agent/trajectory.json", "agent/oracle.txt", "agent/setup/stdout.txt",
    "agent/setup/return-code.txt", "agent/command-0/stdout.txt", "agent/command-1/stdout.txt",
    "agent/episode-0/prompt.txt", "agent/episode-0/response.txt", "agent/episode-1/prompt.txt",
    "agent/episode-1/response.txt", "verifier/reward.txt", "verifier/test-stdout.txt",
    "verifier/ctrf.json", "artifacts/manifest.json", "artifacts/logs/artifacts/output.log",
]  # fmt: skip
BIG_FILES = 5
BIG_SHARE = 0.2
"""A few large files (agent recordings, core dumps) hold a fifth of the bytes, so a
reader that slurped whole files would show in the peak memory."""


def plan_sizes(total: int, count: int, rng: random.Random) -> list[int]:
    """File sizes summing to about `total`: a log-normal spread plus a few big files."""
    big = [int(total * BIG_SHARE / BIG_FILES)] * min(BIG_FILES, count)
    weights = [rng.lognormvariate(0, 1.5) for _ in range(count - len(big))]
    rest = total - sum(big)
    scale = rest / sum(weights) if weights else 0
    sizes = [int(w * scale) for w in weights] + big
    rng.shuffle(sizes)
    return sizes


def build_job(parent: Path, name: str, total: int, count: int, seed: int = 7) -> Path:
    """Write a Harbor-shaped job folder of `count` files holding about `total` bytes."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    pool = rng.randbytes(8 * MIB)
    job = parent / name
    job.mkdir(parents=True)
    (job / "config.json").write_text(json.dumps({"job_name": name, "n_attempts": 1}))
    (job / "lock.json").write_text(json.dumps({"harbor": {"version": "0.25.0"}}))
    (job / "result.json").write_text(json.dumps({"id": str(uuid.UUID(int=seed))}))
    paths = [
        f"task-{t // 5:04d}__{t:07d}/{f}"
        for t in range(-(-(count - 3) // len(TRIAL_FILES)))
        for f in TRIAL_FILES
    ][: count - 3]
    for path, size in zip(paths, plan_sizes(total, len(paths), rng), strict=True):
        target = job / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            # A distinct prefix per file, then bytes from the pool: no two files alike.
            out.write(path.encode()[:size])
            left = size - min(size, len(path))
            while left:
                start = rng.randrange(len(pool) - min(left, len(pool)) + 1)
                chunk = pool[start : start + min(left, len(pool))]
                out.write(chunk)
                left -= len(chunk)
    return job


def job_bytes(job: Path) -> tuple[int, int]:
    files = [p for p in job.rglob("*") if p.is_file() and p != job / "manifest.json"]
    return len(files), sum(p.stat().st_size for p in files)


def time_hasher(job: Path, command: str = "sha256sum") -> float:
    """One run of a hashing command over the job's files, found by `find` as a user would."""
    script = (
        'find "$1" -path "$1/manifest.json" -prune -o -type f -print0 '
        f"| xargs -0 {command} > /dev/null"
    )
    start = time.perf_counter()
    subprocess.run(["bash", "-c", script, "bash", str(job)], check=True)
    return time.perf_counter() - start


@dataclass(frozen=True)
class Run:
    """One seal or verify in its own interpreter: seconds, and RSS after imports and at peak."""

    seconds: float
    base_mib: float
    peak_mib: float

    @property
    def rss(self) -> str:
        return f"{self.base_mib:.0f} → {self.peak_mib:.0f} MiB"


def run_child(op: str, job: Path) -> Run:
    """Seal or verify `job` once in a fresh interpreter, so its peak RSS is its own."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", op, str(job)],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    return Run(**json.loads(out.stdout))


def child(op: str, job: Path) -> None:
    """In the child: time the operation and print it with the RSS before and after, as JSON."""
    from hbench.jobs.sealing import seal  # noqa: PLC0415 - imports count in the baseline
    from hbench.jobs.verification import verify  # noqa: PLC0415 - imports count in the baseline

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if op == "seal":
        seal(job)
    else:
        problems = verify(job)
        assert problems == [], problems
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "base_mib": base / 1024, "peak_mib": peak / 1024}))


@dataclass(frozen=True)
class Rounds:
    """Interleaved rounds, so that load from anything else on the machine weighs on all alike."""

    sha256sum: list[float]
    openssl: list[float]
    seal: list[Run]
    verify: list[Run]


def measure(full: Path, rounds: int) -> Rounds:
    result = Rounds([], [], [], [])
    for _ in range(rounds):
        result.sha256sum.append(time_hasher(full))
        # OpenSSL uses the CPU's SHA instructions, as hashlib does; coreutils' own
        # sha256sum may not. Shown for reference; the goal is set against sha256sum.
        if OPENSSL:
            result.openssl.append(time_hasher(full, f"{OPENSSL} dgst -sha256"))
        result.seal.append(run_child("seal", full))
        result.verify.append(run_child("verify", full))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=500)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5, help="rounds to take medians over")
    parser.add_argument("--child", nargs=2, metavar=("OP", "JOB"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0

    with tempfile.TemporaryDirectory(prefix="hbench-bench-") as scratch:
        print(f"building jobs of {args.files} files: {args.size_mib} MiB and a fifth of it …")
        full = build_job(Path(scratch), "full", args.size_mib * MIB, args.files)
        small = build_job(Path(scratch), "small", args.size_mib * MIB // 5, args.files, seed=8)
        n_files, n_bytes = job_bytes(full)
        time_hasher(full)  # warms the page cache, so every run below reads from memory
        time_hasher(small)
        rounds = measure(full, args.repeat)
        small_runs = {"seal": run_child("seal", small), "verify": run_child("verify", small)}

    mib = n_bytes / MIB
    sums = rounds.sha256sum
    base = statistics.median(sums)
    print(f"\njob: {mib:.0f} MiB in {n_files} files, {os.cpu_count()} cores, warm page cache, "
          f"medians of {args.repeat} interleaved rounds\n")  # fmt: skip
    print(f"{'':<12}{'seconds':>9}{'MiB/s':>9}{'vs sha256sum':>14}{'goal':>8}")
    print(f"{'sha256sum':<12}{base:>9.3f}{mib / base:>9.0f}{1:>13.2f}x")
    if rounds.openssl:
        took = statistics.median(rounds.openssl)
        ratio = statistics.median(o / s for o, s in zip(rounds.openssl, sums, strict=True))
        print(f"{'openssl':<12}{took:>9.3f}{mib / took:>9.0f}{ratio:>13.2f}x{'(reference)':>12}")
    missed = False
    rows = []
    for name, runs in (("seal", rounds.seal), ("verify", rounds.verify)):
        took = statistics.median(r.seconds for r in runs)
        # Each round's own ratio, so a busy moment slows both sides of it alike.
        ratio = statistics.median(r.seconds / s for r, s in zip(runs, sums, strict=True))
        ok = ratio <= GOAL_RATIO
        missed |= not ok
        verdict = f"≤{GOAL_RATIO}x " + ("ok" if ok else "MISSED")
        print(f"{name:<12}{took:>9.3f}{mib / took:>9.0f}{ratio:>13.2f}x{verdict:>12}")
        rows.append(Row("seal/verify", f"{name} {mib:.0f} MiB", took, "s", "sha256sum", base,
                        f"≤{GOAL_RATIO}x", ratio))  # fmt: skip

    print(f"\npeak RSS of the child (after imports → peak), same {n_files} files:")
    print(f"{'':<12}{f'{mib / 5:.0f} MiB job':>22}{f'{mib:.0f} MiB job':>22}{'growth':>9}")
    for name, runs in (("seal", rounds.seal), ("verify", rounds.verify)):
        full_run = max(runs, key=lambda r: r.peak_mib)
        growth = full_run.peak_mib - small_runs[name].peak_mib
        flat = growth <= FLAT_MIB
        missed |= not flat
        print(f"{name:<12}{small_runs[name].rss:>22}{full_run.rss:>22}{growth:>+7.1f}M "
              + ("flat" if flat else "GROWS"))  # fmt: skip
        rows.append(Row("seal/verify", f"{name} peak RSS", full_run.peak_mib, "MiB",
                        f"{mib / 5:.0f} MiB job", small_runs[name].peak_mib,
                        f"+{FLAT_MIB} MiB at most"))  # fmt: skip
    emit(rows)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
