"""The outbox's changes: their JSON, their ids, and a batch applied as one."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.datarepo.changes import (
    AuditEventChange,
    CountIssuedRunChange,
    Pending,
    PublicChange,
    TakeDownRunChange,
    WithdrawRunChange,
    apply_batch,
    change_id,
    commit_message,
    entry_id_of,
    from_outbox,
    needs,
    to_outbox,
)
from hbench.errors import HbenchError
from registry.datarepo import layout
from registry.datarepo.state import (
    Change,
    RepoState,
    open_board,
    publish_run,
    recompute_all,
    withdraw_run,
)
from registry.loader import DEFAULT_DIR

from .conftest import T0, make_run, open_change, opened_board, publish


def registry_state() -> RepoState:
    return RepoState(
        {f"registry/{p.relative_to(DEFAULT_DIR).as_posix()}": p.read_text()
         for p in DEFAULT_DIR.rglob("*.json")}
    )  # fmt: skip


def pending(n: int, op: object, at: datetime = T0) -> Pending:
    return Pending(Change(change_id(n, at), at), op)  # type: ignore[arg-type]


def test_a_change_goes_to_the_outbox_as_its_record_and_comes_back_equal() -> None:
    changes: list[PublicChange] = [
        publish(1),
        open_change(),
        WithdrawRunChange(board="hbench-demo", run_id="run-0001"),
        TakeDownRunChange(board="hbench-demo", run_id="run-0001", reason="breaks-terms", note="x"),
        CountIssuedRunChange(board="hbench-demo", entry_key="octocat/oracle-a3f9c1", issue_id="i1"),
        AuditEventChange(action="withdraw", board="hbench-demo", run="run-0001"),
    ]
    for change in changes:
        kind, payload = to_outbox(change)
        assert kind == change.kind and "kind" not in payload
        stored = json.loads(json.dumps(payload))  # what the JSON column gives back
        assert from_outbox(kind, stored) == change
    _, payload = to_outbox(publish(1))
    assert payload["run"]["jobId"] == make_run(1).job_id  # the record's own camelCase JSON


def test_an_unreadable_change_is_refused_with_its_code() -> None:
    with pytest.raises(HbenchError) as unknown:
        from_outbox("rename_board", {"board": "x"})
    assert unknown.value.code == "datarepo-change-invalid"
    with pytest.raises(HbenchError) as broken:
        from_outbox("publish_run", {"run": {"id": "r1"}})
    assert broken.value.code == "datarepo-change-invalid"
    assert "run.board" in broken.value.detail


def test_change_ids_carry_the_row_and_its_time() -> None:
    at = datetime(2026, 10, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert change_id(17, at) == "17@20261001T120000.123456Z"
    assert entry_id_of("17@20261001T120000.123456Z") == 17
    assert entry_id_of("c1") is None and entry_id_of("x@y") is None


def test_a_batch_equals_its_changes_applied_one_by_one() -> None:
    ops = [open_change(), publish(1), publish(2, opened_board().slug), publish(3), publish(4)]
    ops += [WithdrawRunChange(board="hbench-demo", run_id="run-0003")]
    batch = [pending(n, op) for n, op in enumerate(ops, start=1)]
    result = apply_batch(registry_state(), batch)
    assert [p.change.id for p in result.applied] == [p.change.id for p in batch]
    assert result.failed == {}
    one_by_one = registry_state()
    for p in batch:  # each change recomputing its board, as the registry's tests apply them
        one_by_one = _apply_alone(one_by_one, p)
    assert result.state == one_by_one
    assert recompute_all(result.state) == result.state


def _apply_alone(state: RepoState, p: Pending) -> RepoState:
    op = p.op
    if op.kind == "open_board":
        return open_board(state, op.board, p.change)
    if op.kind == "publish_run":
        return publish_run(state, op.run, p.change)
    assert isinstance(op, WithdrawRunChange)
    return withdraw_run(state, op.board, op.run_id, p.change)


def test_a_failing_change_is_left_out_and_the_rest_apply() -> None:
    conflict = publish(1, job_id="another-job")  # same run id, another job
    batch = [pending(1, publish(1)), pending(2, conflict), pending(3, publish(2))]
    batch.append(pending(4, WithdrawRunChange(board="hbench-demo", run_id="run-0404")))
    result = apply_batch(registry_state(), batch)
    assert [p.change.id for p in result.applied] == [batch[0].change.id, batch[2].change.id]
    assert result.failed[batch[1].change.id].endswith("(datarepo-conflict)")
    assert result.failed[batch[3].change.id].endswith("(datarepo-run-not-found)")
    assert layout.run_file("hbench-demo", "run-0002") in result.state.files


def test_a_board_that_cannot_be_recomputed_fails_only_its_own_changes() -> None:
    # Counting an issued run checks no board itself; its recompute finds the board unknown.
    nowhere = CountIssuedRunChange(board="nowhere", entry_key="octocat/x-a3f9c1", issue_id="i1")
    batch = [pending(1, publish(1)), pending(2, nowhere), pending(3, publish(2))]
    result = apply_batch(registry_state(), batch)
    assert [p.change.id for p in result.applied] == [batch[0].change.id, batch[2].change.id]
    assert result.failed == {batch[1].change.id: result.failed[batch[1].change.id]}
    assert result.failed[batch[1].change.id].endswith("(datarepo-board-unknown)")
    assert not any(path.startswith("boards/nowhere/") for path in result.state.files)


def test_a_batch_needs_its_boards_and_audit_months_only() -> None:
    later = datetime(2026, 11, 2, tzinfo=UTC)
    batch = [pending(1, publish(1)), pending(2, open_change(), at=later)]
    assert needs(batch).folders == (
        "registry",
        "boards/hbench-demo",
        f"boards/{opened_board().slug}",
    )
    assert needs(batch).files == ("audit/2026-10.jsonl", "audit/2026-11.jsonl")


def test_the_commit_message_names_every_change_in_trailers() -> None:
    batch = [pending(1, publish(1)), pending(2, publish(2)), pending(3, open_change())]
    message = commit_message(batch)
    subject, _, trailers = message.partition("\n\n")
    assert subject == "Apply 3 public changes: 1 open_board, 2 publish_run"
    assert trailers.splitlines() == [f"Hbench-Change: {p.change.id}" for p in batch]
