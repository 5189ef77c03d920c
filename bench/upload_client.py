"""Benchmark: `hbench jobs upload` against `tar czf` piped to `curl --data-binary`, each
sending the same real job to the same endpoint of the real service on loopback: a small
job, and a large one.

The small job is a real Harbor run of the demo dataset (5 tasks, 2 attempts each, sealed by
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

The large job is the same job with 300 MiB (`--large-mib`) of its agents' logs added and
sealed again; its figure is the throughput, MiB of the job per second of wall time, start
to exit, and its goal (issue 34) is `hbench jobs upload` at least 0.8x the baseline's.

    .venv/bin/python bench/upload_client.py
    .venv/bin/python bench/upload_client.py --repeat 15 --database-url postgresql+psycopg://…

Exits 1 when an upload is not accepted.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from report import Row, emit, median
from service import BIN, make_tokens, packed, run_demo_job, running_service

from hbench.jobs.manifest import load_manifest
from hbench.jobs.pack import pack
from hbench.jobs.sealing import seal

TOKEN_VARIABLE = "HBENCH_BENCH_TOKEN"  # noqa: S105 - the name of a variable, not a secret
CURL = shutil.which("curl")


GOAL_RATIO = 2.0
"""The demo job's goal: `hbench jobs upload` within this many times the baseline's wall time."""
LARGE_MIB = 300
LARGE_GOAL = 0.8
"""The large job's goal (issue 34): at least this share of the baseline's throughput."""
MIB = 1024 * 1024
LINES_PER_BATCH = 20_000
WORDS_PER_LINE = 12
LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN")
VOCABULARY = [
    "the",
    "a",
    "of",
    "to",
    "in",
    "and",
    "is",
    "for",
    "on",
    "with",
    "file",
    "test",
    "run",
    "step",
    "tool",
    "bash",
    "python",
    "pytest",
    "assert",
    "error",
    "line",
    "return",
    "import",
    "def",
    "class",
    "self",
    "value",
    "path",
    "src",
    "app",
    "tests",
    "build",
    "install",
    "pip",
    "passed",
    "failed",
    "ok",
    "diff",
    "patch",
    "git",
    "status",
    "commit",
    "output",
    "exit",
    "code",
    "0",
    "1",
    "2",
    "3",
    "7",
    "12",
    "42",
    "128",
    "256",
    "reading",
    "writing",
    "found",
    "missing",
    "expected",
    "got",
    "none",
    "true",
    "false",
    "list",
    "dict",
    "str",
    "int",
    "repository",
    "function",
    "module",
    "package",
    "version",
    "config",
    "json",
    "yaml",
    "http",
    "get",
    "post",
    "request",
]
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


def large_job(job: Path, folder: Path, mib: int) -> Path:
    """A copy of the sealed job whose trials' agents wrote `mib` MiB of logs between them,
    sealed again: a job of the size a long agent run leaves. The logs are lines as agents
    print them (a time, a level, a step, words of a tool's output), from a fixed seed, so
    they pack about as tightly as real logs do."""
    dest = folder / "large" / job.name
    shutil.copytree(job, dest)
    trials = sorted(p.parent for p in dest.glob("*/agent"))
    rng = random.Random(20261207)  # noqa: S311 - a log's words, not a secret
    each = mib * MIB // len(trials)
    step = 0
    for trial in trials:
        with (trial / "agent" / "session.log").open("w", encoding="utf-8") as out:
            written = 0
            while written < each:
                words = rng.choices(VOCABULARY, k=LINES_PER_BATCH * WORDS_PER_LINE)
                lines = []
                for n in range(LINES_PER_BATCH):
                    step += 1
                    text = " ".join(words[n * WORDS_PER_LINE : (n + 1) * WORDS_PER_LINE])
                    lines.append(
                        f"2026-12-07T10:{step // 60000 % 60:02d}:{step % 60000 / 1000:06.3f}"
                        f" {LEVELS[step % len(LEVELS)]} step={step} {text}\n"
                    )
                batch = "".join(lines)[: each - written]
                out.write(batch)
                written += len(batch)
    seal(dest, spec_digest=load_manifest(job).spec_digest)
    return dest


@dataclass(frozen=True)
class Timings:
    """A job's alternating uploads: (wall, CPU) seconds of each command, in run order."""

    ours: list[tuple[float, float]]
    baseline: list[tuple[float, float]]
    floor: list[tuple[float, float]]

    def wall_ms(self, runs: list[tuple[float, float]]) -> float:
        return median(wall for wall, _ in runs) * 1000

    def cpu_ms(self, runs: list[tuple[float, float]]) -> float:
        return median(cpu for _, cpu in runs) * 1000


def time_job(
    job: Path, repeat: int, *, endpoint: str, token: str, headers: Path, floor: Path | None
) -> Timings:
    """`repeat` uploads of the job by each command, alternating, after one of each unseen;
    the typer floor only when given one."""
    time_tar_curl(job, endpoint, headers)  # warms the service and the page cache
    time_hbench_upload(job, endpoint, token)
    if floor is not None:
        time_floor(floor, job, endpoint)
    timings = Timings([], [], [])
    for _ in range(repeat):
        timings.baseline.append(time_tar_curl(job, endpoint, headers))
        timings.ours.append(time_hbench_upload(job, endpoint, token))
        if floor is not None:
            timings.floor.append(time_floor(floor, job, endpoint))
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="uploads of the demo job by each")
    parser.add_argument("--large-mib", type=int, default=LARGE_MIB,
                        help="MiB of the large job, unpacked (0: none)")  # fmt: skip
    parser.add_argument("--large-repeat", type=int, default=3,
                        help="uploads of the large job by each command")  # fmt: skip
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
        large = None
        if args.large_mib:
            print(f"writing a {args.large_mib} MiB job …", flush=True)
            large = large_job(job, folder, args.large_mib)
            with Path(os.devnull).open("wb") as sink:  # its packed size, not held in memory
                large_size = pack(large, sink).size
        with running_service(folder / "state", database_url=args.database_url) as service:
            token = make_tokens(service.database_url, ["bench"])["bench"]
            headers = folder / "headers.txt"
            headers.touch(mode=0o600)
            headers.write_text(f"authorization: Bearer {token}\ncontent-type: application/gzip\n")
            endpoint = f"{service.url}/api/bench/uploads"
            floor = folder / "floor.py"
            floor.write_text(FLOOR, encoding="utf-8")
            timed = partial(time_job, endpoint=endpoint, token=token, headers=headers)
            small = timed(job, args.repeat, floor=floor)
            # The large job's figure is its throughput; the typer floor is the small job's.
            big = timed(large, args.large_repeat, floor=None) if large is not None else None
    load = os.getloadavg()[0]
    rows = small_rows(small, size, args.repeat, load)
    if big is not None:
        rows += large_rows(big, args.large_mib, large_size, args.large_repeat)
    emit(rows)
    return 0


def small_rows(t: Timings, size: int, repeat: int, load: float) -> list[Row]:
    ours_s, base_s, floor_s = t.wall_ms(t.ours), t.wall_ms(t.baseline), t.wall_ms(t.floor)
    ours_cpu, base_cpu, floor_cpu = t.cpu_ms(t.ours), t.cpu_ms(t.baseline), t.cpu_ms(t.floor)
    print(f"\njob: the demo dataset, 10 trials, {size / 1024:.1f} KiB packed; medians of "
          f"{repeat} alternating uploads (load average {load:.1f})\n")  # fmt: skip
    print(f"{'tar czf | curl':<22}{base_s:>8.0f} ms          CPU {base_cpu:>5.0f} ms")
    print(f"{'hbench jobs upload':<22}{ours_s:>8.0f} ms   {ours_s / base_s:.2f}x  "
          f"CPU {ours_cpu:>5.0f} ms")  # fmt: skip
    print(f"{'typer, doing nothing':<22}{floor_s:>8.0f} ms   {floor_s / base_s:.2f}x  "
          f"CPU {floor_cpu:>5.0f} ms")  # fmt: skip
    print(f"goal: hbench jobs upload within {GOAL_RATIO:.0f}x tar czf | curl")
    return [
        Row("upload client", "hbench jobs upload", ours_s, "ms", "tar czf | curl", base_s,
            goal=f"at most {GOAL_RATIO:.0f}x"),
        Row("upload client", "hbench jobs upload (CPU)", ours_cpu, "ms",
            "tar czf | curl (CPU)", base_cpu),
        Row("upload client", "typer command doing nothing", floor_s, "ms",
            "tar czf | curl", base_s),
    ]  # fmt: skip


def large_rows(t: Timings, mib: int, size: int, repeat: int) -> list[Row]:
    """Throughput in MiB of the job (unpacked) per second of wall time, start to exit."""
    ours = mib * 1000 / t.wall_ms(t.ours)
    base = mib * 1000 / t.wall_ms(t.baseline)
    ratio = ours / base
    print(f"\njob: {mib} MiB of the demo job and its agents' logs, {size / MIB:.1f} MiB "
          f"packed; medians of {repeat} alternating uploads\n")  # fmt: skip
    print(
        f"{'tar czf | curl':<22}{base:>8.1f} MiB/s       CPU {t.cpu_ms(t.baseline) / 1000:>6.1f} s"
    )
    print(f"{'hbench jobs upload':<22}{ours:>8.1f} MiB/s {ratio:.2f}x  "
          f"CPU {t.cpu_ms(t.ours) / 1000:>6.1f} s")  # fmt: skip
    verdict = "met" if ratio >= LARGE_GOAL else "MISSED"
    print(f"goal: hbench jobs upload at least {LARGE_GOAL}x the throughput of tar czf | curl "
          f"-> {verdict}")  # fmt: skip
    return [
        Row("upload client", f"hbench jobs upload, {mib} MiB job", ours, "MiB/s",
            "tar czf | curl", base, goal=f"at least {LARGE_GOAL}x"),
    ]  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
