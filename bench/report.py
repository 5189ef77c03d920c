"""The figures a benchmark hands to `bench/run_all.py`, beside the lines it prints.

Each script prints its own table for people, and calls `emit` with its rows. When the
variable `HBENCH_BENCH_ROWS` names a file, the rows are appended to it as JSON lines;
run alone, a script writes nothing. A row is one figure beside the baseline measured in
the same run, and their ratio.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROWS_VARIABLE = "HBENCH_BENCH_ROWS"


@dataclass(frozen=True)
class Row:
    """One figure: what was measured, its value and unit, and its same-run baseline.

    `ratio` is value / baseline_value; `goal` says what the ratio (or the value) must
    stay within, in words, when the benchmark has one.
    """

    benchmark: str
    figure: str
    value: float
    unit: str
    baseline_name: str | None = None
    baseline_value: float | None = None
    goal: str | None = None
    ratio: float | None = None

    def __post_init__(self) -> None:
        if self.ratio is None and self.baseline_value:
            object.__setattr__(self, "ratio", self.value / self.baseline_value)


def emit(rows: Iterable[Row]) -> None:
    """Append the rows to the file `HBENCH_BENCH_ROWS` names, if it names one."""
    target = os.environ.get(ROWS_VARIABLE)
    if not target:
        return
    with Path(target).open("a", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(asdict(row)) + "\n")


def read_rows(path: Path) -> list[Row]:
    """The rows a run appended, in order."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [Row(**json.loads(line)) for line in lines if line.strip()]


def percentile(values: Sequence[float], share: float) -> float:
    """The value below which `share` of the values lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))
