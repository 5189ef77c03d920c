"""Building the Pages site of a data repository with 10,000 runs on 200 boards: in full,
and again after one new run, against only loading and parsing the same JSON files.
Goals: the full build at most 4x the loading; the rebuild after one run under 2 seconds.

Run it with `make bench` or `.venv/bin/python bench/site_build.py [--runs N --boards N]`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from board_recompute import _run, build_repo
from report import Row, emit

from registry.datarepo import layout
from registry.datarepo.models import AuditEvent
from registry.datarepo.state import Change, RepoState, publish_run, recompute_all
from registry.jsonfile import canonical
from sitebuild.build import build_site
from sitebuild.source import read_data_repo

FULL_GOAL = 4.0
REBUILD_GOAL = 2.0
START = datetime(2026, 10, 1, tzinfo=UTC)
WORKERS = os.cpu_count() or 1
MEMORY = Path("/dev/shm")  # noqa: S108 - a temporary folder is made inside it


def make_repo(root: Path, n_runs: int, n_boards: int) -> None:
    """`bench/board_recompute.py`'s runs, with each board's rows and a publish line per
    run in the audit log, as the data-repo writer leaves them."""
    build_repo(root, n_runs, n_boards)
    state = RepoState(read_data_repo(root))
    after = recompute_all(state)
    lines: dict[str, list[str]] = {}
    for path in sorted(state.files):
        board = layout.board_of_path(path)
        if board is None or not path.startswith(layout.runs_dir(board) + "/"):
            continue
        run_id = path.rsplit("/", 1)[1].removesuffix(".json")
        at = START + timedelta(minutes=int(run_id.removeprefix("run-")))
        event = AuditEvent(change=f"c-{run_id}", time=at, action="publish", board=board,
                           run=run_id)  # fmt: skip
        lines.setdefault(layout.audit_file(at), []).append(canonical(event.to_json_dict()))
    files = {**after.diff(state), **{p: "\n".join(ls) + "\n" for p, ls in lines.items()}}
    _write(root, files)


def _write(root: Path, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        target = root / path
        if text is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def publish_one(root: Path, n: int) -> None:
    """Publish one more run through the registry's state change, as the writer would."""
    state = RepoState(read_data_repo(root))
    boards = sorted({b for p in state.files if (b := layout.board_of_path(p)) is not None})
    board = boards[n % 7]
    at = START + timedelta(days=30, minutes=n)
    run = _run(random.Random(n), 90_000 + n, board, at)  # noqa: S311 - synthetic data
    after = publish_run(state, run, Change(f"new-{n}", at))
    _write(root, after.diff(state))


def load_only(root: Path) -> int:
    """The baseline: read every data file and parse its JSON."""
    parsed = 0
    for path, text in read_data_repo(root).items():
        if path.endswith(".jsonl"):
            parsed += len([json.loads(line) for line in text.splitlines()])
        else:
            json.loads(text)
            parsed += 1
    return parsed


def timed(fn: Callable[[], object]) -> float:
    """How long `fn` takes, in a new process (as `hbench-app site build` runs: nothing
    cached, and no heap left by an earlier build for forked workers to copy), its start
    and imports not counted; started with the disk idle, the last build's files written
    out first, so that their writing back does not share the CPUs with this one."""
    os.sync()
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as fresh:
        return fresh.submit(_timed, fn).result()


def _timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--boards", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--dir",
        type=Path,
        default=MEMORY if MEMORY.is_dir() else None,
        help=f"Where the data and the sites go, in a temporary folder (default: {MEMORY} "
        "where it exists, leaving the disk out, as the loading reads from memory too; "
        "docs/site.md has figures on disk).",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp) / "data"
        make_repo(root, args.runs, args.boards)
        # Each full build goes into a new folder, and the old ones stay until the end: on
        # ext4 without a journal, files made within half a minute of deleting many others
        # cost far more (the inode allocator skips every recently freed inode), which
        # would measure the benchmark's own clean-up rather than the build.
        sites = (Path(tmp) / f"site-{n}" for n in itertools.count())
        loads, serial, fulls, rebuilds = [], [], [], []
        for n in range(args.repeats):
            loads.append(timed(partial(load_only, root)))
            serial.append(timed(partial(build_site, root, next(sites))))
            out = next(sites)
            fulls.append(timed(partial(build_site, root, out, workers=WORKERS)))
            publish_one(root, n)
            report = build_site(root, out)
            assert report.units_rendered == 2, report  # the new run's board, and the rest
            publish_one(root, n + args.repeats)
            rebuilds.append(timed(partial(build_site, root, out)))
        pages = sum(1 for _ in out.rglob("*.html"))
    load, one, full, rebuild = (statistics.median(t) for t in (loads, serial, fulls, rebuilds))
    # Each build against the loading measured just before it: on a shared machine the
    # speed drifts between rounds, and a pair drifts together.
    ratios = [f / lo for f, lo in zip(fulls, loads, strict=True)]
    ratio = statistics.median(ratios)
    print(f"runs {args.runs}, boards {args.boards}, {pages} pages, median of {args.repeats}")
    # The figures are only comparable on a quiet machine: say how busy this one was.
    print(f"load average (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
          f" on {os.cpu_count()} CPUs")  # fmt: skip
    print(f"load + parse JSON:        {load:.3f} s")
    print(f"full build, 1 process:    {one:.3f} s ({one / load:.2f}x)")
    print(f"full build, {WORKERS} processes:  {full:.3f} s (as `hbench-app site build` runs)")
    print(f"rebuild after one run:    {rebuild:.3f} s")
    full_met = ratio <= FULL_GOAL
    rebuild_met = rebuild < REBUILD_GOAL
    where = "in memory" if args.dir == MEMORY else "on disk"
    baseline = ("load + parse JSON", load)
    emit([
        Row("site build", f"full build, {WORKERS} processes, {where}", full, "s", *baseline,
            f"≤{FULL_GOAL:.0f}x", ratio),
        Row("site build", "full build, 1 process", one, "s", *baseline),
        Row("site build", "rebuild after one run", rebuild, "s", *baseline,
            f"<{REBUILD_GOAL:.0f} s"),
    ])  # fmt: skip
    print(f"full / load, each round: {', '.join(f'{r:.2f}x' for r in ratios)}")
    print(f"full / load: {ratio:.2f}x, the rounds' median (goal: at most {FULL_GOAL:.0f}x) -> "
          f"{'met' if full_met else 'MISSED'}")  # fmt: skip
    print(f"rebuild: {rebuild:.3f} s (goal: under {REBUILD_GOAL:.0f} s) -> "
          f"{'met' if rebuild_met else 'MISSED'}")  # fmt: skip
    return 0 if full_met and rebuild_met else 1


if __name__ == "__main__":
    sys.exit(main())
