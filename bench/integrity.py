"""Benchmark: what the integrity checks add to an upload's check, and what a regrade costs.

1. **Consistency and digests.** The service's upload check of a large job (unpack and hash
   the archive, read the manifest and the job, run the rule table), with the consistency
   checks (every trial's rewards against its verifier's files, the totals, the times, the
   plan and the task digests) and the comparison with pinned digests, against the same
   check without them, in the same run. Goal: at most 1.1x. The job is built from a real
   Harbor job of the demo dataset, its trials copied into 1,000 trials of 500 tasks with
   their files kept consistent and padded with agent logs, to about 500 MiB in 20,000 files.
2. **Regrade.** `harbor job regrade` of the demo job in the sandbox, as the service's worker
   runs it, against running the job itself with `harbor run`, in the same run (no goal).

Each measurement runs in a child process; the two sides alternate and the table shows
medians.

    .venv/bin/python bench/integrity.py              # 500 MiB in 20,000 files
    .venv/bin/python bench/integrity.py --quick      # 50 MiB in 2,000 files
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from report import Row, emit

ROOT = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024
GOAL_RATIO = 1.1
PADDING = ["agent/trajectory.json", "agent/episode-0/response.txt", "agent/episode-1/response.txt",
           "agent/command-0/stdout.txt", "agent/command-1/stdout.txt", "agent/setup/stdout.txt",
           "artifacts/app/notes.txt", "artifacts/app/output.log", "verifier/ctrf.json",
           "verifier/test-stderr.txt", "exception-context.txt"]  # fmt: skip
ENV = {**os.environ, "HARBOR_TELEMETRY": "0", "PYTHONPATH": str(ROOT)}


def harbor() -> str:
    return str(Path(sys.executable).with_name("harbor"))


def demo_job(work: Path, name: str) -> tuple[Path, Path, float]:
    """Run the demo dataset with the oracle in the sandbox; its folder, tasks and seconds."""
    from hbench.sandbox import IMPORT_PATH  # noqa: PLC0415
    from registry.demo import DATASET_REF, materialize  # noqa: PLC0415

    registry = materialize(work / "dataset")
    start = time.perf_counter()
    subprocess.run(
        [harbor(), "run", "-y", "-q", "-d", DATASET_REF, "--registry-path", str(registry),
         "--env", IMPORT_PATH, "-o", str(work / "jobs"), "--job-name", name],
        check=True, env=ENV, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return work / "jobs" / name, work / "dataset" / "tasks", time.perf_counter() - start


def _read(path: Path) -> Any:
    return json.loads(path.read_text())


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=4))


def grow(source: Path, dest: Path, tasks: int, size: int) -> int:
    """A consistent job of `tasks` tasks x 2 attempts from a real job's trials; its files."""
    from hbench.jobs.scoring import pass_at_k  # noqa: PLC0415

    rng = random.Random(11)  # noqa: S311 - reproducible test data
    text = " ".join(rng.choice(["step", "tool", "run", "ok", "file", "app", "read"])
                    for _ in range(MIB)).encode()  # fmt: skip
    templates = [p for p in sorted(source.iterdir()) if (p / "result.json").is_file()]
    dest.mkdir(parents=True)
    shutil.copy(source / "job.log", dest / "job.log")
    config, lock, totals = (_read(source / n) for n in ("config.json", "lock.json", "result.json"))
    config["n_attempts"] = 2
    started = datetime.fromisoformat(totals["started_at"])
    per_file = size // (tasks * 2 * len(PADDING))
    names: list[str] = []
    entries: list[Any] = []
    rewards: dict[str, list[str]] = {"1.0": [], "0.0": []}
    for index in range(tasks * 2):
        template = templates[index % len(templates)]
        task = f"task-{index // 2:04d}"
        name = f"{task}__{index:07d}"
        trial = dest / name
        shutil.copytree(template, trial)
        result, trial_lock = _read(trial / "result.json"), _read(trial / "lock.json")
        trial_lock["task"]["name"] = result["task_name"] = task
        trial_lock["task"]["digest"] = "sha256:" + f"{index // 2:064x}"
        result["trial_name"], result["id"] = name, str(uuid.UUID(int=index + 1))
        result["config"]["trial_name"] = name
        _write(trial / "result.json", result)
        _write(trial / "lock.json", trial_lock)
        entries.append(trial_lock)
        reward = result["verifier_result"]["rewards"]["reward"]
        rewards[f"{reward:.1f}"].append(name)
        names.append(name)
        for padding in PADDING:
            start = rng.randrange(len(text) - per_file)
            (trial / padding).parent.mkdir(parents=True, exist_ok=True)
            (trial / padding).write_bytes(name.encode() + text[start : start + per_file])
    lock["trials"] = entries
    group = next(iter(totals["stats"]["evals"].values()))
    mean = len(rewards["1.0"]) / len(names)
    outcomes = [(n.split("__")[0], {"reward": 1.0 if n in rewards["1.0"] else 0.0}) for n in names]
    passes = {str(k): v for k, v in pass_at_k(outcomes).items()}
    group.update(n_trials=len(names), metrics=[{"mean": mean}], reward_stats={"reward": rewards},
                 pass_at_k=passes)  # fmt: skip
    totals["stats"]["n_completed_trials"] = totals["n_total_trials"] = len(names)
    totals["finished_at"] = (started + timedelta(hours=1)).isoformat()
    for name, data in (("config.json", config), ("lock.json", lock), ("result.json", totals)):
        _write(dest / name, data)
    return sum(1 for p in dest.rglob("*") if p.is_file())


def check(archive: Path, out: Path, with_integrity: bool) -> float:
    """In a child: the upload check of the archive, timed from the first byte."""
    from app.bench.service import gather  # noqa: PLC0415
    from app.checks.store_checks import STORE_CHECKS  # noqa: PLC0415
    from app.checks.table import run_table  # noqa: PLC0415
    from app.uploads.archive import extract  # noqa: PLC0415
    from hbench.jobs.locks import task_digests  # noqa: PLC0415
    from registry.loader import load_registry  # noqa: PLC0415
    from registry.pins import differing_tasks  # noqa: PLC0415

    registry = load_registry()
    # The rules that decide storing; the board rules only note why a job fits no board.
    rules = tuple(r for r in STORE_CHECKS if with_integrity or r.name != "job-consistent")
    start = time.perf_counter()
    with archive.open("rb") as stream:
        job = extract(iter(lambda: stream.read(MIB), b""), out)
    evidence, _ = gather(job, "0.3.0", registry, None)
    report = run_table(rules, evidence)
    if with_integrity and evidence.job is not None:
        digests = task_digests(evidence.job)
        differing_tasks(digests, digests, digests)  # the pinned comparison, pins = the job's
    wall = time.perf_counter() - start
    failing = {p.code for p in report.problems} - {"job-attempts-out-of-range"}
    assert not failing, sorted(failing)
    return wall


def child(op: str, archive: Path, out: Path) -> None:
    print(json.dumps(check(archive, out, with_integrity=op == "full")))


def run_child(op: str, archive: Path, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    os.sync()
    result = subprocess.run(
        [sys.executable, __file__, "--child", op, str(archive), str(out)],
        check=True, stdout=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    return float(json.loads(result.stdout.splitlines()[-1]))


def regrade_seconds(job: Path, tasks: Path, out: Path) -> float:
    from hbench.sandbox import IMPORT_PATH  # noqa: PLC0415

    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(
        [harbor(), "job", "regrade", str(job), "-p", str(tasks), "-e", IMPORT_PATH,
         "-o", str(out), "--job-name", "regrade", "-n", "2"],
        check=True, env=ENV, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 MiB in 2,000 files")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--child", nargs=3, metavar=("OP", "ARCHIVE", "OUT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        op, archive, out = args.child
        child(op, Path(archive), Path(out))
        return 0
    sys.path.insert(0, str(ROOT))
    from hbench.jobs.pack import pack_to_path  # noqa: PLC0415
    from hbench.jobs.sealing import seal  # noqa: PLC0415

    tasks, size = (50, 50 * MIB) if args.quick else (500, 500 * MIB)
    with tempfile.TemporaryDirectory(prefix="hbench-integrity-") as tmp:
        work = Path(tmp)
        runs, regrades = [], []
        for attempt in range(args.repeat):
            job, task_dir, seconds = demo_job(work / f"run-{attempt}", f"demo-{attempt}")
            runs.append(seconds)
            regrades.append(regrade_seconds(job, task_dir, work / f"regrade-{attempt}"))
        big = work / "big" / "integrity-job"
        files = grow(job, big, tasks, size)
        seal(big)
        archive = work / "big.tgz"
        pack_to_path(big, archive)
        unpacked = sum(p.stat().st_size for p in big.rglob("*") if p.is_file()) / MIB
        shutil.rmtree(big.parent)
        base, full = [], []
        for _ in range(args.repeat):
            base.append(run_child("base", archive, work / "out"))
            full.append(run_child("full", archive, work / "out"))
    base_s, full_s = statistics.median(base), statistics.median(full)
    ratio = full_s / base_s
    run_s, regrade_s = statistics.median(runs), statistics.median(regrades)
    print(f"\njob: {unpacked:.0f} MiB in {files} files ({tasks * 2} trials); medians of "
          f"{args.repeat} alternating runs on {os.cpu_count()} cores\n")  # fmt: skip
    print(f"upload check without the integrity checks: {base_s:.2f} s")
    print(f"upload check with them: {full_s:.2f} s ({ratio:.3f}x, goal ≤{GOAL_RATIO}x)")
    print(f"harbor run of the demo job: {run_s:.2f} s")
    print(f"harbor job regrade of it: {regrade_s:.2f} s ({regrade_s / run_s:.2f}x)")
    emit([
        Row("integrity", f"upload check + consistency + digests, {unpacked:.0f} MiB",
            full_s, "s", "upload check alone", base_s, f"≤{GOAL_RATIO}x"),
        Row("integrity", "regrade of the demo job (sandbox)", regrade_s, "s",
            "running the demo job", run_s),
    ])  # fmt: skip
    return 0 if ratio <= GOAL_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
