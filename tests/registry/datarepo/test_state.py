"""The data repository's state changes: pure, idempotent by change id, honest counts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from hbench.errors import HbenchError
from registry.datarepo import layout
from registry.datarepo.models import (
    AuditEvent,
    BoardRows,
    Provenance,
    PublishedRun,
    RunEntry,
    RunUsage,
)
from registry.datarepo.state import (
    Change,
    RepoState,
    count_issued_run,
    delete_run_files,
    open_board,
    publish_run,
    recompute_all,
    take_down_run,
    withdraw_run,
)
from registry.loader import DEFAULT_DIR, load_registry
from registry.placement import EntrySettings, entry_name, place

from ..helpers import demo_facts

T0 = datetime(2026, 10, 1, 12, 0, tzinfo=UTC)


def initial_state() -> RepoState:
    files = {
        f"registry/{p.relative_to(DEFAULT_DIR).as_posix()}": p.read_text()
        for p in DEFAULT_DIR.rglob("*.json")
    }
    return RepoState(files)


def make_run(
    run_id: str, rewards: Mapping[str, Sequence[float | None]], **changes: Any
) -> PublishedRun:
    owner = changes.pop("owner", "octocat")
    settings = EntrySettings(agent="oracle")
    data: dict[str, Any] = {
        "id": run_id,
        "board": "hbench-demo",
        "entry": RunEntry(owner=owner, name=entry_name(owner, settings), settings=settings),
        "job_id": f"job-{run_id}",
        "issued": False,
        "model": None,
        "agent_version": "1.0.0",
        "n_attempts": 1,
        "results": {task: list(trials) for task, trials in rewards.items()},
        "provenance": Provenance(kind="local"),
        "published_at": T0,
    }
    data.update(changes)
    return PublishedRun(**data)


DEMO = {"count-lines": [1.0], "hello-file": [1.0], "prime-factor": [0.0],
        "reverse-words": [1.0], "sum-numbers": [1.0]}  # fmt: skip


def rows(state: RepoState, board: str = "hbench-demo") -> BoardRows:
    return BoardRows.model_validate_json(state.files[layout.rows_file(board)])


def audit_lines(state: RepoState) -> list[dict[str, Any]]:
    text = state.files.get(layout.audit_file(T0), "")
    return [json.loads(line) for line in text.splitlines()]


def test_publishing_writes_one_file_per_run_an_audit_line_and_the_rows() -> None:
    before = initial_state()
    after = publish_run(before, make_run("r1", DEMO), Change("c1", T0))
    assert before.get(layout.run_file("hbench-demo", "r1")) is None  # the input is untouched
    changed = after.diff(before)
    assert sorted(changed) == [
        "audit/2026-10.jsonl",
        "boards/hbench-demo/rows.json",
        "boards/hbench-demo/runs/r1.json",
    ]
    run_text = changed["boards/hbench-demo/runs/r1.json"]
    assert run_text is not None and run_text.endswith("}\n")
    assert json.loads(run_text)["entry"]["owner"] == "octocat"
    assert run_text == json.dumps(json.loads(run_text), indent=2, sort_keys=True) + "\n"
    board = rows(after)
    assert [(r.entry, r.score, r.rank_group, r.runs_public) for r in board.rows] == [
        (make_run("r1", DEMO).entry.name, 0.8, 1, 1)
    ]
    rows_text = changed["boards/hbench-demo/rows.json"]
    assert rows_text is not None and json.loads(rows_text)["board"] == "hbench-demo"
    row_lines = [line for line in rows_text.splitlines() if line.startswith("    {")]
    assert len(row_lines) == 1  # one compact line per row, so diffs show which rows moved
    assert audit_lines(after) == [
        {"action": "publish", "board": "hbench-demo", "change": "c1", "note": None,
         "reason": None, "run": "r1", "time": "2026-10-01T12:00:00Z"}
    ]  # fmt: skip


def test_every_change_is_idempotent_by_its_id() -> None:
    change = Change("c1", T0)
    once = publish_run(initial_state(), make_run("r1", DEMO), change)
    assert publish_run(once, make_run("r1", DEMO), change) == once
    withdrawn = withdraw_run(once, "hbench-demo", "r1", Change("c2", T0))
    assert withdraw_run(withdrawn, "hbench-demo", "r1", Change("c2", T0)) == withdrawn
    counted = count_issued_run(once, "hbench-demo", "octocat/x", "issue-1", Change("c3", T0))
    assert (
        count_issued_run(counted, "hbench-demo", "octocat/x", "issue-1", Change("c3", T0))
        == counted
    )


def test_a_run_is_published_once() -> None:
    state = publish_run(initial_state(), make_run("r1", DEMO), Change("c1", T0))
    with pytest.raises(HbenchError) as caught:
        publish_run(state, make_run("r1", DEMO, job_id="other"), Change("c9", T0))
    assert caught.value.code == "datarepo-conflict"


def test_an_unknown_board_or_run_is_refused() -> None:
    with pytest.raises(HbenchError) as caught:
        publish_run(initial_state(), make_run("r1", DEMO, board="nowhere"), Change("c1", T0))
    assert caught.value.code == "datarepo-board-unknown"
    with pytest.raises(HbenchError) as missing:
        withdraw_run(initial_state(), "hbench-demo", "r404", Change("c1", T0))
    assert missing.value.code == "datarepo-run-not-found"


def test_withdrawn_and_taken_down_runs_leave_the_score_but_stay_counted() -> None:
    state = initial_state()
    state = publish_run(state, make_run("r1", DEMO, issued=True), Change("c1", T0))
    state = publish_run(state, make_run("r2", DEMO, issued=True), Change("c2", T0))
    state = publish_run(state, make_run("r3", DEMO, owner="hubot"), Change("c3", T0))
    for n, run in enumerate(["r1", "r2", "r9"]):
        entry = make_run("r1", DEMO).entry.key
        state = count_issued_run(state, "hbench-demo", entry, f"issue-{run}", Change(f"i{n}", T0))
    row = next(r for r in rows(state).rows if r.owner == "octocat")
    assert (row.runs_public, row.runs_issued, row.runs_issued_public) == (2, 3, 2)
    state = withdraw_run(state, "hbench-demo", "r1", Change("c4", T0))
    state = take_down_run(
        state, board="hbench-demo", run_id="r3", reason="breaks-terms",
        note="copied from another job", change=Change("c5", T0),
    )  # fmt: skip
    board = rows(state)
    assert [r.owner for r in board.rows] == ["octocat"]
    assert (board.rows[0].runs_public, board.rows[0].runs_issued) == (1, 3)
    assert (board.runs_withdrawn, board.runs_taken_down) == (1, 1)
    taken = PublishedRun.model_validate_json(state.files[layout.run_file("hbench-demo", "r3")])
    assert taken.status == "taken_down" and taken.take_down_reason == "breaks-terms"
    last = audit_lines(state)[-1]
    assert last["action"] == "take_down" and last["reason"] == "breaks-terms"
    # A taken-down run cannot be withdrawn back to another status.
    again = withdraw_run(state, "hbench-demo", "r3", Change("c6", T0))
    assert (
        PublishedRun.model_validate_json(again.files[layout.run_file("hbench-demo", "r3")]).status
        == "taken_down"
    )


def test_a_runs_deleted_files_leave_its_score_and_are_marked_once() -> None:
    state = publish_run(
        initial_state(), make_run("r1", DEMO, download="/api/bench/jobs/r1/download"),
        Change("c1", T0),
    )  # fmt: skip
    before = rows(state)
    later = datetime(2026, 10, 2, 9, 0, tzinfo=UTC)

    deleted = delete_run_files(state, "hbench-demo", "r1", Change("c2", later))

    record = PublishedRun.model_validate_json(deleted.files[layout.run_file("hbench-demo", "r1")])
    assert (record.status, record.files_deleted_at, record.download) == ("public", later, None)
    assert rows(deleted) == before  # the score stays as it was
    assert [e["action"] for e in audit_lines(deleted)] == ["publish", "delete_files"]
    assert delete_run_files(deleted, "hbench-demo", "r1", Change("c2", later)) == deleted
    # A record written before the field keeps its bytes: the field is left out while unset.
    assert "filesDeletedAt" not in state.files[layout.run_file("hbench-demo", "r1")]
    with pytest.raises(HbenchError) as missing:
        delete_run_files(initial_state(), "hbench-demo", "r404", Change("c3", later))
    assert missing.value.code == "datarepo-run-not-found"


def test_the_audit_log_cannot_name_a_reporter() -> None:
    with pytest.raises(ValueError, match="reporter"):
        AuditEvent.model_validate(
            {"change": "c", "time": T0, "action": "take_down", "board": "b", "reporter": "x"}
        )


def test_rows_rank_entries_and_show_usage_and_provenance() -> None:
    state = initial_state()
    weak = {t: [0.0] for t in DEMO}
    usage = RunUsage(input_tokens=1000, cached_tokens=0, output_tokens=100, cost_usd=0.05)
    state = publish_run(state, make_run("r1", DEMO, usage=usage), Change("c1", T0))
    actions = Provenance(kind="actions", repository="octo/bench", runner="github-hosted")
    state = publish_run(
        state, make_run("r2", weak, owner="hubot", provenance=actions), Change("c2", T0)
    )
    board = rows(state)
    assert [(r.owner, r.rank_group) for r in board.rows] == [("octocat", 1), ("hubot", 2)]
    best = board.rows[0]
    assert best.tokens_per_task.input == 200 and best.cost_per_task_usd == 0.01
    assert best.pass_at_k == {}
    assert board.rows[1].runs[0].provenance.repository == "octo/bench"


def test_a_job_can_open_a_board_and_publish_to_it() -> None:
    facts = demo_facts(settings={"agent_timeout_multiplier": 2})
    opened = place(facts, load_registry()).opens
    assert opened is not None
    state = open_board(initial_state(), opened, Change("o1", T0))
    assert open_board(state, opened, Change("o1", T0)) == state
    state = publish_run(state, make_run("r1", DEMO, board=opened.slug), Change("c1", T0))
    board = rows(state, opened.slug)
    assert board.settings == {"agent_timeout_multiplier": 2}
    assert board.metric == "accuracy" and board.task_count == 5
    changed = opened.model_copy(update={"tasks": ["count-lines"]})
    with pytest.raises(HbenchError):
        open_board(state, changed, Change("o2", T0))


def test_recompute_all_rebuilds_every_board_the_same_way() -> None:
    state = publish_run(initial_state(), make_run("r1", DEMO), Change("c1", T0))
    quick: dict[str, list[float | None]] = {"hello-file": [1.0], "sum-numbers": [None]}
    state = publish_run(state, make_run("r2", quick, board="hbench-demo-quick"), Change("c2", T0))
    stripped = state.put({layout.rows_file("hbench-demo"): None,
                          layout.rows_file("hbench-demo-quick"): None})  # fmt: skip
    assert recompute_all(stripped) == state
    assert rows(state, "hbench-demo-quick").rows[0].score == 0.5
