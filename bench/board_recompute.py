"""Recomputing every board from 10,000 published runs across 200 boards, against only
loading and parsing the same JSON files. Goal: recompute at most 2x the parse alone.

Run it with `make bench` or `.venv/bin/python bench/board_recompute.py [--runs N --boards N]`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import JsonValue
from report import Row, emit

from registry.datarepo import layout
from registry.datarepo.models import Provenance, PublishedRun, RunEntry, RunUsage, TrialTiming
from registry.datarepo.state import RepoState, recompute_all, registry_of
from registry.jsonfile import dumps
from registry.loader import DEFAULT_DIR
from registry.placement import EntrySettings, OpenBoard, entry_name

GOAL = 2.0
TASKS = [f"task-{i:03d}" for i in range(40)]
OWNERS = [f"owner-{i}" for i in range(12)]
AGENTS = ["terminus-2", "mini-swe-agent", "openhands"]


def build_repo(root: Path, n_runs: int, n_boards: int, seed: int = 7) -> None:
    """A data repository: the default registry, `n_boards` open boards, `n_runs` runs."""
    rnd = random.Random(seed)  # noqa: S311 - synthetic data, not secrets
    for path in DEFAULT_DIR.rglob("*.json"):
        _write(root / layout.REGISTRY / path.relative_to(DEFAULT_DIR), path.read_text())
    boards = []
    for b in range(n_boards):
        board = OpenBoard(
            slug=f"bench-set-1.0-model-{b:03d}-{b:06x}",
            dataset="bench-set@1.0",
            benchmark=None,
            tasks=TASKS,
            model=f"model-{b:03d}",
            settings={"agent_timeout_multiplier": 1 + b % 3},
            opened_by_job=f"job-{b}",
        )
        _write(root / layout.open_board_file(board.slug), dumps(board.to_json_dict()))
        boards.append(board)
    start = datetime(2026, 10, 1, tzinfo=UTC)
    for n in range(n_runs):
        board = boards[n % n_boards]
        # The run's config holds its board's settings where they differ from the defaults.
        config = {k: v for k, v in board.settings.items() if v != 1}
        run = _run(rnd, n, board.slug, start + timedelta(minutes=n), config)
        _write(root / layout.run_file(run.board, run.id), dumps(run.to_json_dict()))


def _run(
    rnd: random.Random,
    n: int,
    board: str,
    at: datetime,
    config: Mapping[str, JsonValue] | None = None,
) -> PublishedRun:
    owner = rnd.choice(OWNERS)
    settings = EntrySettings(agent=rnd.choice(AGENTS), options={"temperature": rnd.choice([0, 1])})
    attempts = rnd.choice([1, 3])
    skill = rnd.random()
    results = {task: _rewards(rnd, skill, attempts) for task in TASKS}
    tokens = rnd.randint(10_000, 900_000)
    return PublishedRun(
        id=f"run-{n:05d}",
        board=board,
        entry=RunEntry(owner=owner, name=entry_name(owner, settings), settings=settings),
        job_id=f"job-{n:05d}",
        issued=rnd.random() < 0.5,
        model="provider/model",
        agent_version="1.0.0",
        n_attempts=attempts,
        results=results,
        usage=RunUsage(input_tokens=tokens, output_tokens=4_000),
        harbor_version="0.25.0",
        hbench_version="0.3.0",
        provenance=Provenance(kind="local"),
        published_at=at,
        manifest_digest=f"{n:064x}",
        redactions={"agent/trajectory.json": 1} if rnd.random() < 0.1 else {},
        trials=_trials(rnd, results, at, tokens),
        config=dict(config or {}),
        download=f"/api/bench/jobs/{n:08x}-0000-4000-8000-000000000000/download",
    )


def _trials(
    rnd: random.Random, results: dict[str, list[float | None]], at: datetime, tokens: int
) -> list[TrialTiming]:
    """Each trial's times and tokens, as the publisher records them: four at a time over
    the hours before publication, from 20 seconds to 15 minutes each."""
    count = sum(map(len, results.values()))
    began = at - timedelta(hours=3)
    trials = []
    for task, rewards in results.items():
        for attempt in range(1, len(rewards) + 1):
            start = began + timedelta(seconds=rnd.randint(0, 7200))
            trials.append(
                TrialTiming(task=task, attempt=attempt, started_at=start,
                            finished_at=start + timedelta(seconds=rnd.randint(20, 900)),
                            input_tokens=tokens // count, output_tokens=4_000 // count)
            )  # fmt: skip
    return trials


def _rewards(rnd: random.Random, skill: float, attempts: int) -> list[float | None]:
    # About 3% of trials error (None); the rest pass with the entry's skill.
    return [None if rnd.random() < 0.03 else float(rnd.random() < skill) for _ in range(attempts)]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def read_files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.json"))}


def load_and_parse(root: Path) -> int:
    """The baseline: read every JSON file and parse it."""
    return len([json.loads(text) for text in read_files(root).values()])


def load_and_recompute(root: Path) -> int:
    """The full path: read every file, then recompute every board's rows."""
    state = RepoState(read_files(root))
    after = recompute_all(state, registry_of(state))
    return len(after.diff(state))


def median_seconds(fn: Callable[[Path], int], root: Path, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn(root)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--boards", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build_repo(root, args.runs, args.boards)
        boards = load_and_recompute(root)
        assert boards == args.boards, f"expected {args.boards} rows files, got {boards}"
        parse = median_seconds(load_and_parse, root, args.repeats)
        full = median_seconds(load_and_recompute, root, args.repeats)
    ratio = full / parse
    print(f"runs {args.runs}, boards {args.boards}, median of {args.repeats}")
    print(f"load + parse JSON:       {parse:.3f} s")
    print(f"load + recompute boards: {full:.3f} s")
    print(
        f"ratio: {ratio:.2f}x (goal: at most {GOAL:.0f}x) -> {'met' if ratio <= GOAL else 'MISSED'}"
    )
    emit([Row("board recompute", f"recompute {args.boards} boards", full, "s",
              "load + parse JSON", parse, f"≤{GOAL:.0f}x")])  # fmt: skip
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
