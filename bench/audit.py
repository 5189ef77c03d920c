"""`hbench audit` of a data repository of 10,000 published runs across 200 boards, against
only loading and parsing the same JSON files. The audit recomputes every board, checks
every run and builds the site twice (as the checkout has it, and as its runs give it),
in as many processes as CPUs, as the command does; it must find nothing to report.

Run it with `make bench` or `.venv/bin/python bench/audit.py [--runs N --boards N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from board_recompute import build_repo, load_and_parse, median_seconds
from report import Row, emit

from registry.datarepo import layout
from registry.datarepo.models import AuditEvent, IssuedRuns, PublishedRun
from registry.datarepo.state import RepoState, recompute_all, registry_of
from registry.jsonfile import canonical, dumps
from sitebuild.audit_checkout import audit_files
from sitebuild.source import read_data_repo

HBENCH = Path(sys.executable).with_name("hbench")
SHM = Path("/dev/shm")  # noqa: S108 - a temporary folder is made inside it
"""Where the data goes by default, as the loading reads from memory too (the page cache)."""


def complete_repo(root: Path) -> None:
    """What the writer keeps beside the runs `build_repo` writes: each board's issued
    counts, an audit line per publishing, and the boards' rows."""
    runs = [
        PublishedRun.model_validate_json(path.read_bytes())
        for path in sorted((root / "boards").glob("*/runs/*.json"))
    ]
    issued: dict[str, dict[str, list[str]]] = defaultdict(dict)
    log: dict[str, list[str]] = defaultdict(list)
    for run in runs:
        if run.issued:
            issued[run.board].setdefault(run.entry.key, []).append(f"issue-{run.id}")
        event = AuditEvent(change=f"change-{run.id}", time=run.published_at, action="publish",
                           board=run.board, run=run.id)  # fmt: skip
        log[layout.audit_file(run.published_at)].append(canonical(event.to_json_dict()))
    for board, entries in issued.items():
        write(root / layout.issued_file(board), dumps(IssuedRuns(entries=entries).to_json_dict()))
    for path, lines in log.items():
        write(root / path, "\n".join(lines) + "\n")
    files = {
        p.relative_to(root).as_posix(): p.read_text()
        for folder in ("registry", "boards")
        for p in (root / folder).rglob("*.json")
    }
    state = RepoState(files)
    for path, text in recompute_all(state, registry_of(state)).diff(state).items():
        assert text is not None
        write(root / path, text)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def hbench_audit(root: Path) -> dict[str, object]:
    """`hbench audit --json` in a new process, as a reader runs it, its temporary folder
    (where it builds the sites) beside the data, as the loading reads from memory too."""
    done = subprocess.run(
        [str(HBENCH), "audit", "--data-repo", str(root), "--json"],
        capture_output=True, text=True, check=False, timeout=3600,
        env={**os.environ, "TMPDIR": str(root.parent)},
    )  # fmt: skip
    report: dict[str, object] = json.loads(done.stdout)
    report["exit"] = done.returncode
    return report


def timed_audit(root: Path, repeats: int) -> tuple[float, dict[str, object]]:
    times, report = [], {}
    for _ in range(repeats):
        began = time.perf_counter()
        report = hbench_audit(root)
        times.append(time.perf_counter() - began)
    return sorted(times)[len(times) // 2], report


def recompute_and_check(root: Path) -> int:
    """The audit's part before the sites: every board recomputed, every run checked."""
    return len(audit_files(read_data_repo(root)).differences)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--boards", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=SHM if SHM.is_dir() else None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-audit-", dir=args.dir) as tmp:
        root = Path(tmp) / "data"
        build_repo(root, args.runs, args.boards)
        complete_repo(root)
        parse = median_seconds(load_and_parse, root, args.repeats)
        checks = median_seconds(recompute_and_check, root, args.repeats)
        audit, report = timed_audit(root, args.repeats)
    agrees = report.get("exit") == 0 and report.get("agrees") is True
    print(f"runs {args.runs}, boards {args.boards}, {os.cpu_count()} CPUs, "
          f"median of {args.repeats}")  # fmt: skip
    print(f"load + parse JSON:           {parse:.3f} s")
    print(f"recompute boards + check runs: {checks:.3f} s ({checks / parse:.2f}x)")
    print(f"hbench audit, a new process: {audit:.3f} s ({audit / parse:.2f}x)")
    print(f"the audit found {len(report.get('differences') or [])} differences "  # type: ignore[arg-type]
          f"(exit {report.get('exit')}) -> {'agrees' if agrees else 'DIFFERS'}")  # fmt: skip
    emit([
        Row("audit", "recompute + check runs", checks, "s", "load + parse JSON", parse),
        Row("audit", "hbench audit (two site builds)", audit, "s", "load + parse JSON", parse),
    ])  # fmt: skip
    return 0 if agrees else 1


if __name__ == "__main__":
    sys.exit(main())
