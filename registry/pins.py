"""Task digests pinned per benchmark version: writing them into a registry file, and
comparing a job's digests with them.

A benchmark's `harbor.taskDigests` names, for each task of its dataset version, the digest
Harbor records for the task's files in a job's `lock.json`. A board of that benchmark takes a
job only when every task it ran has exactly that digest, so jobs whose tests were softened or
whose tasks were edited land on no board of it (`task-digest-mismatch`). Pins are computed
from a dataset checkout by `hbench registry pin`; this module is the pure part.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from pydantic import ValidationError

from hbench.errors import HbenchError, Problem
from registry.jsonfile import dumps
from registry.schema import Benchmark

MISMATCH = "task-digest-mismatch"
MAX_NAMED = 5


def pinned(benchmark_text: str, digests: Mapping[str, str], pinned_from: str) -> str:
    """A benchmark file's text with `digests` pinned; `registry-pin-invalid` when they don't
    cover exactly the benchmark's tasks."""
    data = json.loads(benchmark_text)
    benchmark = _valid(data)
    listed = benchmark.full.tasks
    if listed is not None and set(listed) != set(digests):
        missing, extra = sorted(set(listed) - set(digests)), sorted(set(digests) - set(listed))
        raise HbenchError(
            "registry-pin-invalid",
            f"the tasks given are not {benchmark.slug}'s: missing {_named(missing) or 'none'}, "
            f"not in the benchmark {_named(extra) or 'none'}; pass the checkout of "
            f"{benchmark.harbor.dataset}",
        )
    if listed is None and len(digests) != benchmark.full.task_count:
        raise HbenchError(
            "registry-pin-invalid",
            f"{len(digests)} tasks were given, but {benchmark.slug} has "
            f"{benchmark.full.task_count}; pass the whole checkout of {benchmark.harbor.dataset}",
        )
    data["harbor"]["taskDigests"] = dict(sorted(digests.items()))
    data["harbor"]["pinnedFrom"] = pinned_from
    _valid(data)
    return dumps(data)


def _valid(data: object) -> Benchmark:
    try:
        return Benchmark.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the top level"
        raise HbenchError(
            "registry-pin-invalid", f"the benchmark file is invalid at {where}: {first['msg']}"
        ) from None


def differing_tasks(
    pins: Mapping[str, str], digests: Mapping[str, str], tasks: Iterable[str]
) -> list[str]:
    """The tasks among `tasks` whose digest in the job is not the pinned one (or is absent)."""
    return sorted(
        task for task in tasks if digests.get(task) is None or digests[task] != pins.get(task)
    )


def mismatch(
    what: str, pins: Mapping[str, str], digests: Mapping[str, str], tasks: list[str]
) -> Problem:
    """`task-digest-mismatch` naming the tasks whose files differ from `what` holds."""
    shown = [
        f"{task} ({_short(digests.get(task))}, pinned {_short(pins.get(task))})"
        for task in tasks[:MAX_NAMED]
    ]
    more = f" and {len(tasks) - MAX_NAMED} more" if len(tasks) > MAX_NAMED else ""
    return Problem(
        MISMATCH,
        f"the job ran other task files than {what}: {', '.join(shown)}{more}. The tasks' "
        "tests or files were edited, or another version of the dataset ran; the job stays on "
        "Your bench and fits no board of them. Run the benchmark's own tasks, unedited",
    )


def _short(digest: str | None) -> str:
    return "no digest" if digest is None else f"{digest[:15]}…"


def _named(items: list[str]) -> str:
    more = len(items) - MAX_NAMED
    return ", ".join(items[:MAX_NAMED]) + (f" and {more} more" if more > 0 else "")
