"""Benchmark: how fast the `hbench` client starts, beside the interpreter starting alone.

Each command runs `--repeat` times, alternating with the others so a busy machine slows
all of them alike; the figures are medians of the wall time, start to exit:

- `python -c pass`: the baseline, an interpreter that imports nothing;
- `typer skeleton --help`: an app of one group and one command on the same typer, the
  least any typer command's --help costs (typer and rich format it);
- `typer skeleton group work --help`: the same app's command, the least a command's --help
  costs (typer builds a pydantic adapter for each of its parameters, so it imports
  pydantic too);
- `hbench --help`, `hbench push --help`, `hbench jobs upload --help`: the client.

It also prints the ten slowest imports of `hbench --help` (`python -X importtime`). The
goal, under 150 ms for `hbench --help`, holds on an idle machine of two cores; on a busy
one compare the ratio to the baseline, measured in the same loop.

    .venv/bin/python bench/client_start.py
    .venv/bin/python bench/client_start.py --repeat 40
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import Row, emit

GOAL_MS = 150.0
HBENCH = str(Path(sys.executable).with_name("hbench"))
SKELETON = '''
import typer
app = typer.Typer(name="x", help="An app.", no_args_is_help=True, add_completion=False)
group = typer.Typer(help="A group.", no_args_is_help=True)

@group.command()
def work(count: int = 1) -> None:
    """Do some work."""

app.add_typer(group, name="group")

@app.callback()
def main() -> None:
    """An app."""

app()
'''


def timed(command: list[str]) -> tuple[float, float]:
    """The command's wall time and its CPU time (user and system), in seconds."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def slowest_imports(count: int) -> list[tuple[float, str]]:
    """The imports of `hbench --help` that took longest, themselves and all they import."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", HBENCH, "--help"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            found.append((int(parts[1]) / 1000, parts[2].rstrip()))
    return sorted(found, reverse=True)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="runs of each command")
    args = parser.parse_args(argv)
    os.environ["COLUMNS"] = "100"
    with tempfile.TemporaryDirectory(prefix="bench-start-") as scratch:
        skeleton = Path(scratch) / "skeleton.py"
        skeleton.write_text(SKELETON, encoding="utf-8")
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "typer skeleton --help": [sys.executable, str(skeleton), "--help"],
            "typer skeleton group work --help": [
                sys.executable,
                str(skeleton),
                "group",
                "work",
                "--help",
            ],
            "hbench --help": [HBENCH, "--help"],
            "hbench push --help": [HBENCH, "push", "--help"],
            "hbench jobs upload --help": [HBENCH, "jobs", "upload", "--help"],
        }
        for command in commands.values():  # warm the file cache (and write .pyc files, if let)
            timed(command)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, command in commands.items():
                wall, cpu = timed(command)
                walls[name].append(wall)
                cpus[name].append(cpu)
    ms = {name: 1000 * statistics.median(values) for name, values in walls.items()}
    cpu_ms = {name: 1000 * statistics.median(values) for name, values in cpus.items()}
    load = os.getloadavg()[0]
    print(f"{args.repeat} runs each, alternating; medians of the wall time, start to exit, "
          f"and of the CPU time it took (user and system; load average {load:.1f})")  # fmt: skip
    base, skeleton_ms = ms["python -c pass"], ms["typer skeleton --help"]
    for name, value in ms.items():
        print(f"{name}: {value:.0f} ms ({value / base:.2f}x python -c pass), "
              f"CPU {cpu_ms[name]:.0f} ms")  # fmt: skip
    print(f"hbench --help above the typer skeleton: {ms['hbench --help'] - skeleton_ms:.0f} ms")
    command_ms = ms["typer skeleton group work --help"]
    upload_ms = ms["hbench jobs upload --help"]
    print(
        f"hbench jobs upload --help above the skeleton's command: {upload_ms - command_ms:.0f} ms"
    )
    idle = cpu_ms["hbench --help"]
    print(f"goal: hbench --help under {GOAL_MS:.0f} ms on an idle machine (its CPU time is "
          f"what it takes without waiting for a core: {idle:.0f} ms)")  # fmt: skip
    print("slowest imports of hbench --help (ms, with what they import):")
    for took, name in slowest_imports(10):
        print(f"  {took:7.1f}  {name}")
    rows = [Row("client_start", "python -c pass", base, "ms")]
    rows += [
        Row("client_start", name, value, "ms", "python -c pass", base,
            goal=f"under {GOAL_MS:.0f} ms idle" if name == "hbench --help" else None)
        for name, value in ms.items() if name != "python -c pass"
    ]  # fmt: skip
    cpu_base = cpu_ms["python -c pass"]
    rows += [
        Row("client_start", f"{name} (CPU)", value, "ms", "python -c pass (CPU)", cpu_base)
        for name, value in cpu_ms.items() if name != "python -c pass"
    ]  # fmt: skip
    emit(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
