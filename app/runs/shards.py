"""Splitting an issued run's tasks into shards, and each shard's spec (docs/runs-api.md,
"Sharded runs").

Pure functions. The split is deterministic: the tasks sorted by name, then dealt out by
greedy longest-processing-time over their expected seconds where those are known (each
task, longest first, to the shard with the least time so far, the lower index on a tie),
which with no times known is round-robin. Any plan, ours or given, is checked by
`plan_problems`: disjoint, covering, no shard empty, and balanced, meaning no two shards'
expected times differ by more than the longest task's (which every greedy deal keeps).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

from pydantic import JsonValue

from hbench.errors import Problem

DEFAULT_SECONDS = 1.0
"""A task's weight when its expected time is unknown: all alike, so the deal is by count."""


def weight(task: str, seconds: Mapping[str, float] | None) -> float:
    known = (seconds or {}).get(task)
    return known if known is not None and known > 0 else DEFAULT_SECONDS


def split(
    tasks: Sequence[str], count: int, seconds: Mapping[str, float] | None = None
) -> list[list[str]]:
    """`count` disjoint shards covering `tasks`, each sorted, balanced by expected time."""
    ordered = sorted(set(tasks))
    by_length = sorted(ordered, key=lambda task: -weight(task, seconds))  # stable: name order
    loads = [0.0] * count
    shards: list[list[str]] = [[] for _ in range(count)]
    for task in by_length:
        lightest = min(range(count), key=lambda index: (loads[index], index))
        shards[lightest].append(task)
        loads[lightest] += weight(task, seconds)
    return [sorted(shard) for shard in shards]


def plan_problems(
    tasks: Sequence[str],
    shards: Sequence[Sequence[str]],
    seconds: Mapping[str, float] | None = None,
) -> list[Problem]:
    """Everything wrong with a plan of shards for `tasks`: `run-shards-overlap` for a task
    in two shards, one in none or one not of the run; `run-shards-unbalanced` for an empty
    shard, or two shards further apart in expected time than the longest task."""
    problems: list[Problem] = []
    wanted = set(tasks)
    seen: dict[str, int] = {}
    for index, shard in enumerate(shards):
        for task in shard:
            if task in seen:
                problems.append(overlap(f"the task {task} is in shards {seen[task] + 1} and "
                                        f"{index + 1}"))  # fmt: skip
            seen.setdefault(task, index)
    missing = sorted(wanted - seen.keys())
    foreign = sorted(seen.keys() - wanted)
    if missing:
        problems.append(overlap(f"no shard runs {', '.join(missing[:5])}"))
    if foreign:
        problems.append(overlap(f"{', '.join(foreign[:5])} is not a task of the run"))
    empty = [index + 1 for index, shard in enumerate(shards) if not shard]
    if empty:
        problems.append(
            Problem(
                "run-shards-unbalanced",
                f"{len(shards)} shards for {len(wanted)} tasks leave shard "
                f"{', '.join(map(str, empty))} with nothing to run; ask for at most "
                f"{len(wanted)} shards",
                "body.shards",
            )
        )
    elif shards:
        loads = [sum(weight(task, seconds) for task in shard) for shard in shards]
        longest = max((weight(task, seconds) for task in wanted), default=0.0)
        if max(loads) - min(loads) > longest + 1e-9:
            problems.append(
                Problem(
                    "run-shards-unbalanced",
                    f"the shards' expected times run from {min(loads):g} to {max(loads):g} "
                    f"seconds, further apart than the longest task ({longest:g} s)",
                    "body.shards",
                )
            )
    return problems


def overlap(detail: str) -> Problem:
    return Problem(
        "run-shards-overlap",
        f"the shards must run every task of the run once: {detail}",
        "body.shards",
    )


def shard_job_name(job_name: str, index: int, count: int) -> str:
    """`<run's job name>-<i>of<k>`, 1-based: each shard's job folder is its own."""
    return f"{job_name}-{index + 1}of{count}"


def shard_spec(
    spec: Mapping[str, JsonValue], tasks: Sequence[str], index: int, count: int
) -> dict[str, JsonValue]:
    """The run's spec for one shard: its own job name, and its dataset's tasks restricted
    to the shard's (Harbor's `task_names`; plain names, each matching itself as a glob)."""
    shard: dict[str, JsonValue] = copy.deepcopy(dict(spec))
    shard["job_name"] = shard_job_name(str(spec["job_name"]), index, count)
    datasets = shard.get("datasets")
    if not isinstance(datasets, list) or len(datasets) != 1 or not isinstance(datasets[0], dict):
        raise ValueError("an issued spec names one dataset")
    datasets[0]["task_names"] = list(tasks)
    return shard
