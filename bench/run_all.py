"""Run every benchmark, each in its own process, and print their figures as one table.

Each script prints its own lines as it goes and hands its rows over through the file
`HBENCH_BENCH_ROWS` names (`bench/report.py`). A script that hands over none has its
printed `name: value unit` lines read instead, the first of them taken as the baseline
of the rest. The table is printed at the end and written to `build/bench.md`.

    .venv/bin/python bench/run_all.py                 # sizes that fit in about ten minutes
    .venv/bin/python bench/run_all.py --full          # each script's own, larger defaults
    .venv/bin/python bench/run_all.py --only issue_throughput --only load

Exits 1 when a script fails or misses one of its goals; the table is printed either way.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from report import ROWS_VARIABLE, Row, read_rows

HERE = Path(__file__).resolve().parent
OUTPUT = HERE.parent / "build" / "bench.md"


@dataclass(frozen=True)
class Script:
    """A benchmark script, and the arguments `make bench` runs it with."""

    name: str
    quick: tuple[str, ...] = ()


SCRIPTS = (
    Script("seal_verify", ("--size-mib", "100", "--files", "5000", "--repeat", "3")),
    Script("upload_check", ("--quick", "--repeat", "3")),
    Script("redaction", ("--quick",)),
    Script("upload_isolation", ("--mib", "6", "--uploads", "4")),
    Script("upload_client"),
    Script("upload_concurrent", ("--uploads", "100", "--concurrency", "50", "--serial", "10")),
    Script("upload_parts", ("--repeat", "1")),
    Script("issue_throughput"),
    Script("publish_outbox", ("--publishes", "300")),
    Script("board_recompute", ("--runs", "2000", "--boards", "40", "--repeats", "3")),
    Script("site_build", ("--repeats", "3")),
    Script("audit", ("--runs", "2000", "--boards", "40", "--repeats", "1")),
    Script("load"),
    Script("load", ("--replicas", "2", "--seconds", "30")),
    Script("docker_env"),
    Script("integrity", ("--quick", "--repeat", "3")),
    Script("blob_store", ("--mib", "32", "--repeat", "3", "--small", "100")),
    Script("client_start", ("--repeat", "10")),
    Script("registry_pull"),
    Script("shards", ("--merges", "3")),
    Script("request_cost"),
    Script("capacity_sim"),
    Script("capacity"),
)
FIGURE_LINE = re.compile(r"^\s*([A-Za-z][^:]*?):\s+(-?[0-9]+(?:\.[0-9]+)?)\s+([A-Za-z/%]+)\b")


@dataclass(frozen=True)
class Outcome:
    script: str
    returncode: int
    seconds: float
    rows: list[Row]


def run(script: Script, full: bool) -> Outcome:
    """Run one script, its output passed through as it comes; collect its rows."""
    path = HERE / f"{script.name}.py"
    args = () if full else script.quick
    print(f"\n== {script.name} {' '.join(args)}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-rows-") as scratch:
        rows_file = Path(scratch) / "rows.jsonl"
        env = {**os.environ, ROWS_VARIABLE: str(rows_file)}
        started = time.perf_counter()
        lines: list[str] = []
        with subprocess.Popen(
            [sys.executable, str(path), *args],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                print(line, end="", flush=True)
                lines.append(line)
        seconds = time.perf_counter() - started
        rows = read_rows(rows_file) or rows_from_lines(script.name, lines)
    return Outcome(script.name, process.returncode, seconds, rows)


def rows_from_lines(benchmark: str, lines: Sequence[str]) -> list[Row]:
    """Rows from printed `name: value unit` lines, for a script that emits none; the first
    is the baseline of the later ones in the same unit. Lines stating a goal are skipped:
    they repeat a figure."""
    found = [
        (m.group(1).strip(), float(m.group(2)), m.group(3))
        for line in lines
        if "goal" not in line and (m := FIGURE_LINE.match(line))
    ]
    if not found:
        return []
    (base_name, base_value, base_unit), rest = found[0], found[1:]
    rows = [Row(benchmark, base_name, base_value, base_unit)]
    for name, value, unit in rest:
        if unit == base_unit:
            rows.append(Row(benchmark, name, value, unit, base_name, base_value))
        else:
            rows.append(Row(benchmark, name, value, unit))
    return rows


def number(value: float | None) -> str:
    if value is None:
        return ""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


HEADER = ("benchmark", "figure", "value", "baseline", "baseline value", "ratio", "goal")


def cells(row: Row) -> tuple[str, ...]:
    base = f"{number(row.baseline_value)} {row.unit}" if row.baseline_value is not None else ""
    ratio = f"{row.ratio:.2f}x" if row.ratio is not None else ""
    return (row.benchmark, row.figure, f"{number(row.value)} {row.unit}",
            row.baseline_name or "", base, ratio, row.goal or "")  # fmt: skip


def text_table(rows: Sequence[Row]) -> str:
    table = [HEADER, *(cells(row) for row in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEADER))]
    right = {2, 4, 5}
    out = []
    for n, line in enumerate(table):
        out.append(
            "  ".join(
                cell.rjust(width) if i in right else cell.ljust(width)
                for i, (cell, width) in enumerate(zip(line, widths, strict=True))
            ).rstrip()
        )
        if n == 0:
            out.append("  ".join("-" * width for width in widths))
    return "\n".join(out)


def markdown_table(rows: Sequence[Row]) -> str:
    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    align = "|---|---|---:|---|---:|---:|---|"
    return "\n".join([line(HEADER), align, *(line(cells(row)) for row in rows)])


def summary(outcomes: Sequence[Outcome]) -> str:
    failed = [o for o in outcomes if o.returncode != 0]
    lines = [f"{o.script}: {o.seconds:.0f} s, exit {o.returncode}" for o in outcomes]
    verdict = (
        "every script met its goals" if not failed
        else "failed or missed a goal: " + ", ".join(o.script for o in failed)
    )  # fmt: skip
    return "\n".join([*lines, verdict])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="each script's own defaults")
    parser.add_argument("--only", action="append", help="run only this script (repeatable)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where the table goes")
    args = parser.parse_args(argv)
    chosen = [s for s in SCRIPTS if not args.only or s.name in args.only]
    unknown = set(args.only or ()) - {s.name for s in SCRIPTS}
    if unknown:
        parser.error(f"no benchmark named {', '.join(sorted(unknown))}")
    outcomes = [run(script, args.full) for script in chosen]
    rows = [row for outcome in outcomes for row in outcome.rows]
    cores = os.cpu_count()
    note = (
        f"{cores} cores; each value is the median (or the percentile named) of its "
        "script's runs, and its baseline was measured in the same run; ratio = value / "
        "baseline value"
    )
    print(f"\n{text_table(rows)}\n\n{note}\n{summary(outcomes)}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        f"# Benchmark figures\n\n{markdown_table(rows)}\n\n{note}.\n\n"
        + "\n".join(f"- {line}" for line in summary(outcomes).splitlines())
        + "\n",
        encoding="utf-8",
    )
    print(f"written to {args.output}")
    return 0 if all(o.returncode == 0 for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
