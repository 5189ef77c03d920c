"""A realistic data repository for the site's tests, made with the registry's own state
changes: named and opened boards, several entries, issued counts, withdrawn and
taken-down runs, an Actions-provenance run, and audit lines over two months."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from registry.datarepo.models import Provenance, PublishedRun, RunEntry, RunUsage, TrialTiming
from registry.datarepo.state import (
    Change,
    RepoState,
    count_issued_run,
    open_board,
    publish_run,
    take_down_run,
    withdraw_run,
)
from registry.evidence import RunEvidence
from registry.loader import DEFAULT_DIR, load_registry
from registry.placement import EntrySettings, OpenBoard, entry_name

T0 = datetime(2026, 9, 28, 9, 30, tzinfo=UTC)
DEMO_TASKS = ["count-lines", "hello-file", "prime-factor", "reverse-words", "sum-numbers"]
TB_TASKS = [f"tb-task-{i:02d}" for i in range(12)]
OPEN_TASKS = ["alpha", "beta", "gamma"]
REDACTIONS = {"agent/trajectory.json": 2, "count-lines__a1/agent/command-0/stdout.txt": 1}
REDACTION_RULES = {"generic-credential": 2, "anthropic-api-key": 1}
CONFIG = {"timeout_multiplier": 2.0, "agents": [{"name": "oracle", "kwargs": {"note": "<ci>"}}]}
OPEN_BOARD = "custom-set-1.0-acme-model-x-1a2b3c"
REGRADED = RunEvidence(consistent=True, tasks_pinned=True, regrade="agreed")
REDACTED_NOTE = (
    "the service replaced key-like values in the recorded outputs of 1 trial (count-lines__a1) "
    "before storing them, so grading them again would grade other outputs"
)
FAILED_NOTE = "harbor job regrade stopped (exit 137): <killed> & out of memory"
NO_COPY_NOTE = "the service keeps no copy of custom-set@1.0's tasks to grade with"
OPEN_DIGESTS = {task: f"sha256:{n:064x}" for n, task in enumerate(OPEN_TASKS, start=1)}
ACTIONS = Provenance(
    kind="actions",
    repository="octo-org/bench-runs",
    workflow="octo-org/bench-runs/.github/workflows/bench.yml@refs/heads/main",
    ref="refs/heads/main",
    commit="0123456789abcdef0123456789abcdef01234567",
    runner="github-hosted",
    job_workflow_ref="hbench/hbench/.github/workflows/run.yml@refs/tags/v1",
    run_id=9876543210,
)


def demo_pins() -> dict[str, str]:
    """The digests the registry pins for the demo's task files."""
    return dict(load_registry(DEFAULT_DIR).benchmarks["hbench-demo"].harbor.task_digests or {})


def registry_files() -> dict[str, str]:
    return {
        f"registry/{p.relative_to(DEFAULT_DIR).as_posix()}": p.read_text()
        for p in DEFAULT_DIR.rglob("*.json")
    }


def entry(owner: str, agent: str, **options: Any) -> RunEntry:
    settings = EntrySettings(agent=agent, options=options)
    return RunEntry(owner=owner, name=entry_name(owner, settings), settings=settings)


def make_run(
    run_id: str,
    board: str,
    owner_entry: RunEntry,
    results: Mapping[str, Sequence[float | None]],
    at: datetime,
    **changes: Any,
) -> PublishedRun:
    data: dict[str, Any] = {
        "id": run_id,
        "board": board,
        "entry": owner_entry,
        "job_id": f"job-{run_id}",
        "issued": False,
        "model": None,
        "agent_version": "1.0.0",
        "n_attempts": max(len(t) for t in results.values()),
        "results": {task: list(trials) for task, trials in results.items()},
        "harbor_version": "0.25.0",
        "hbench_version": "0.3.0",
        "provenance": Provenance(kind="local"),
        "published_at": at,
        "manifest_digest": f"{run_id.encode().hex():0<64}",
        "trials": timings(results, at),
        "download": f"/api/bench/jobs/{run_id}/download",
    }
    data.update(changes)
    return PublishedRun(**data)


def timings(results: Mapping[str, Sequence[float | None]], at: datetime) -> list[TrialTiming]:
    """Each trial's times, as the publisher records them: the tasks one after another, a
    minute and a half per attempt, the last finishing an hour before publication."""
    trials, began = [], at - timedelta(hours=1, seconds=90 * sum(map(len, results.values())))
    for task, rewards in sorted(results.items()):
        for attempt in range(1, len(rewards) + 1):
            trials.append(
                TrialTiming(task=task, attempt=attempt, started_at=began,
                            finished_at=began + TRIAL_TIME, input_tokens=1200, output_tokens=80)
            )  # fmt: skip
            began += TRIAL_TIME
    return trials


TRIAL_TIME = timedelta(seconds=90)


def _rewards(tasks: Sequence[str], passed: int, attempts: int = 1) -> dict[str, list[float | None]]:
    return {
        task: [1.0 if i < passed else (None if i == len(tasks) - 1 else 0.0)] * attempts
        for i, task in enumerate(tasks)
    }


class _Repo:
    """Applies changes in order, each with its own change id and time."""

    def __init__(self) -> None:
        self.state = RepoState(registry_files())
        self.n = 0

    def change(self, at: datetime) -> Change:
        self.n += 1
        return Change(f"change-{self.n:03d}", at)

    def publish(self, run: PublishedRun) -> None:
        self.state = publish_run(self.state, run, self.change(run.published_at))


def realistic_state() -> RepoState:
    """The data repository the site's tests build from.

    Its runs hold each combination of evidence: demo-1 regraded, demo-2 regraded and
    issued, demo-5 issued and run on CI but not regradable, demo-4 (withdrawn) a regrade
    that failed,
    open-1 on a board without pins; demo-3, quick-1 and the Terminal-Bench runs are records
    from before evidence was kept, self-reported only.
    """
    repo = _Repo()
    octocat = entry("octocat", "oracle")
    hubot = entry("hubot", "nop")
    mona = entry("mona", "oracle", seed=7)
    actions = entry("octo-org", "oracle", variant="ci")
    pins = demo_pins()
    regraded = {"evidence": REGRADED, "task_digests": pins}
    repo.publish(
        make_run("demo-1", "hbench-demo", octocat, _rewards(DEMO_TASKS, 4), T0, **regraded)
    )
    repo.publish(
        make_run("demo-2", "hbench-demo", octocat, _rewards(DEMO_TASKS, 4, 2),
                 T0 + timedelta(days=3), issued=True, agent_version="1.1.0", **regraded)
    )  # fmt: skip
    repo.state = count_issued_run(
        repo.state, "hbench-demo", octocat.key, "issue-1", repo.change(T0 + timedelta(days=3))
    )
    repo.state = count_issued_run(
        repo.state, "hbench-demo", octocat.key, "issue-2", repo.change(T0 + timedelta(days=4))
    )
    repo.publish(make_run("demo-3", "hbench-demo", hubot, _rewards(DEMO_TASKS, 0), T0))
    failed = RunEvidence(consistent=True, tasks_pinned=True, regrade="failed",
                         regrade_note=FAILED_NOTE)  # fmt: skip
    repo.publish(
        make_run("demo-4", "hbench-demo", mona, _rewards(DEMO_TASKS, 5), T0 + timedelta(days=5),
                 evidence=failed, task_digests=pins)
    )  # fmt: skip
    redacted = RunEvidence(consistent=True, tasks_pinned=True, regrade="not-regradable",
                           regrade_note=REDACTED_NOTE, ci=True)  # fmt: skip
    repo.publish(
        make_run("demo-5", "hbench-demo", actions, _rewards(DEMO_TASKS, 3),
                 T0 + timedelta(days=6), provenance=ACTIONS, issued=True,
                 redactions=REDACTIONS, redaction_rules=REDACTION_RULES, config=CONFIG,
                 evidence=redacted, task_digests=pins)
    )  # fmt: skip
    repo.publish(
        make_run("demo-6", "hbench-demo", mona, _rewards(DEMO_TASKS, 5), T0 + timedelta(days=7))
    )
    repo.state = withdraw_run(
        repo.state, "hbench-demo", "demo-4", repo.change(T0 + timedelta(days=8))
    )
    repo.state = take_down_run(
        repo.state, board="hbench-demo", run_id="demo-6", reason="score-cannot-be-right",
        note="every task passed in under a second", change=repo.change(T0 + timedelta(days=9)),
    )  # fmt: skip
    # A record from before the publisher kept trial times, the manifest and the download.
    repo.publish(
        make_run("quick-1", "hbench-demo-quick", octocat, _rewards(DEMO_TASKS[1::3], 2),
                 T0 + timedelta(days=2), trials=[], manifest_digest=None, download=None)
    )  # fmt: skip
    _terminal_bench(repo)
    repo.state = open_board(
        repo.state,
        OpenBoard(slug=OPEN_BOARD, dataset="custom-set@1.0", benchmark=None, tasks=OPEN_TASKS,
                  model="acme-model-x", settings={"agent_timeout_multiplier": 2.0},
                  opened_by_job="job-open-1"),
        repo.change(T0 + timedelta(days=10)),
    )  # fmt: skip
    unpinned = RunEvidence(consistent=True, tasks_pinned=False, regrade="not-regradable",
                           regrade_note=NO_COPY_NOTE)  # fmt: skip
    repo.publish(
        make_run("open-1", OPEN_BOARD, entry("hubot", "terminus-2"), _rewards(OPEN_TASKS, 2),
                 T0 + timedelta(days=10), model="acme/model-x", evidence=unpinned,
                 task_digests=OPEN_DIGESTS)
    )  # fmt: skip
    return repo.state


def _terminal_bench(repo: _Repo) -> None:
    """A priced model's board: costs from the price table, and a Pareto frontier."""
    board = "terminal-bench-2-claude-sonnet-4-5"
    for n, (owner, agent, passed, tokens) in enumerate([
        ("octocat", "terminus-2", 9, 900_000),
        ("hubot", "claude-code", 8, 300_000),
        ("mona", "openhands", 5, 1_200_000),
        ("lisa", "mini-swe-agent", 4, 100_000),
    ]):  # fmt: skip
        usage = RunUsage(input_tokens=tokens, cached_tokens=tokens // 3, output_tokens=tokens // 10)
        repo.publish(
            make_run(f"tb-{n + 1}", board, entry(owner, agent), _rewards(TB_TASKS, passed),
                     T0 + timedelta(days=20 + n), model="anthropic/claude-sonnet-4-5",
                     usage=usage)
        )  # fmt: skip


def write_repo(state: RepoState, root: Path) -> Path:
    """The state's files on disk, as a checkout of the data repository."""
    for path, text in state.files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root
