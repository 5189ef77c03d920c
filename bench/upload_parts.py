"""Benchmark: a 300 MiB job uploaded in parts against one 95 MiB upload sent at once, to
the same real service on loopback, in the same run; and against the same 300 MiB sent at
once, which only a service whose one-request cap is raised takes.

The jobs are the real demo job (`hbench run` of the demo dataset) with a recording of
random bytes added to each trial and sealed again, so each archive is as large packed as
unpacked: about 300 MiB, and just under the 95 MiB one request may send. The service runs
as `hbench-app serve` with its default caps raised to 320 MiB sent and 1 GiB unpacked (a
board's `uploadMaxBytes` does the same for its issued runs' jobs in parts). The figures are
rates: archive MiB over the wall time from the first request to the accepting answer, in
parts (64 MiB each, `hbench.upload_parts.send_in_parts`, what `hbench jobs upload` uses, the
archive's sha256 included) and at once (`hbench.upload.send_archive`), each answered 201
after the service's full checks. Medians of rounds, whose order turns, after one upload
that starts the upload workers. The goal: in parts at least half the rate of the same job
sent at once; the parts are written to the blob store and read back, about twice the bytes
moved, on top of the checks both share.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from report import Row, emit, median
from service import make_tokens, run_demo_job, running_service, variant

from hbench.jobs.pack import pack_to_path
from hbench.jobs.sealing import seal
from hbench.upload import send_archive
from hbench.upload_parts import DEFAULT_PART_MIB, send_in_parts

MIB = 1024 * 1024
SINGLE_MIB = 94.5
"""The single upload's archive: just under the 95 MiB one request may send."""
GOAL_RATIO = 0.5
WRITE_CHUNK = 8 * MIB


def padded(job: Path, folder: Path, number: int, extra_bytes: int) -> Path:
    """A variant of the job (its own Harbor id, so each upload is a job of its own) with
    `extra_bytes` of random recordings over its trials, sealed again."""
    copy = variant(job, folder, number)
    trials = sorted(p for p in copy.iterdir() if (p / "result.json").is_file())
    each = -(-extra_bytes // len(trials))
    for trial in trials:
        target = trial / "agent" / "terminal-recording.bin"
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            left = each
            while left > 0:
                out.write(os.urandom(min(left, WRITE_CHUNK)))
                left -= min(left, WRITE_CHUNK)
    seal(copy)
    return copy


def archive_of(job: Path, folder: Path, target_bytes: int, number: int) -> Path:
    """A packed padded job of about `target_bytes`, written beside the job folder (which
    is then removed, to keep the disk it takes small)."""
    copy = padded(job, folder, number, target_bytes - 64 * 1024)
    archive = folder / f"{copy.name}-{number}.tgz"
    pack_to_path(copy, archive)
    shutil.rmtree(copy)
    return archive


def timed(upload: str, archive: Path, endpoint: str, token: str) -> float:
    headers = {"authorization": f"Bearer {token}"}
    started = time.perf_counter()
    if upload == "parts":
        answer = send_in_parts(endpoint, archive, headers, part_bytes=DEFAULT_PART_MIB * MIB)
    else:
        answer = send_archive(endpoint, archive, headers)
    took = time.perf_counter() - started
    if answer.status_code != 201:
        raise RuntimeError(f"the {upload} upload was answered {answer.status_code}: {answer.body}")
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="uploads of each kind")
    parser.add_argument("--mib", type=float, default=300.0, help="the job sent in parts, MiB")
    parser.add_argument("--database-url", help="a PostgreSQL URL (default: SQLite)")
    args = parser.parse_args(argv)
    settings = {"HBENCH_UPLOAD_MAX_BYTES": str(320 * MIB),
                "HBENCH_UNPACKED_MAX_BYTES": str(1024 * MIB)}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-parts-") as scratch:
        folder = Path(scratch)
        print("running the demo job with hbench run …", flush=True)
        job = run_demo_job(folder)
        rounds = []
        with running_service(folder / "state", database_url=args.database_url,
                             env=settings) as service:  # fmt: skip
            token = make_tokens(service.database_url, ["bench"])["bench"]
            endpoint = f"{service.url}/api/bench/uploads"
            # The first upload starts the upload workers (seconds): not a figure of either.
            warm = folder / "warm.tgz"
            pack_to_path(job, warm)
            timed("single", warm, endpoint, token)
            for number in range(args.repeat):
                rounds.append(
                    one_round(job, folder, number, mib=args.mib, endpoint=endpoint, token=token)
                )
                # The stored jobs: hundreds of MiB a round, of no use to the next.
                shutil.rmtree(service.state / "blobs" / "jobs", ignore_errors=True)
    parts, single, whole = (median(r[i] for r in rounds) for i in range(3))
    ratio = parts / whole
    print(f"\nmedians of {args.repeat} rounds (load average {os.getloadavg()[0]:.1f}):")
    print(f"{args.mib:.0f} MiB job in {DEFAULT_PART_MIB} MiB parts: {parts:.1f} MiB/s")
    print(f"{SINGLE_MIB} MiB job at once: {single:.1f} MiB/s ({parts / single:.2f}x)")
    print(f"{args.mib:.0f} MiB job at once: {whole:.1f} MiB/s ({ratio:.2f}x)")
    print(f"goal: in parts at least {GOAL_RATIO}x the rate of the same job at once")
    emit([
        Row("upload in parts", f"{args.mib:.0f} MiB in parts", parts, "MiB/s",
            f"{SINGLE_MIB} MiB at once", single),
        Row("upload in parts", f"{args.mib:.0f} MiB in parts", parts, "MiB/s",
            f"{args.mib:.0f} MiB at once", whole, goal=f"at least {GOAL_RATIO}x"),
    ])  # fmt: skip
    return 0 if ratio >= GOAL_RATIO else 1


def one_round(
    job: Path, folder: Path, number: int, *, mib: float, endpoint: str, token: str
) -> tuple[float, float, float]:
    """The rates (MiB/s) of the big job in parts, the 95 MiB one at once, and the big one
    at once; which goes first turns round by round, so none always finds caches warm."""
    big = archive_of(job, folder, int(mib * MIB), 3 * number + 1)
    again = archive_of(job, folder, int(mib * MIB), 3 * number + 2)
    single = archive_of(job, folder, int(SINGLE_MIB * MIB), 3 * number + 3)
    uploads = [("parts", big), ("single", single), ("single", again)]
    order = uploads[number % 3 :] + uploads[: number % 3]
    took = {archive: timed(kind, archive, endpoint, token) for kind, archive in order}
    rates = tuple(path.stat().st_size / MIB / took[path] for _, path in uploads)
    print(f"round {number + 1}: {mib:.0f} MiB in parts {took[big]:.1f} s, "
          f"{SINGLE_MIB} MiB at once {took[single]:.1f} s, "
          f"{mib:.0f} MiB at once {took[again]:.1f} s", flush=True)  # fmt: skip
    for path in (big, again, single):
        path.unlink()
    return rates[0], rates[1], rates[2]


if __name__ == "__main__":
    sys.exit(main())
