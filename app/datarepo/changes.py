"""The public changes the outbox carries, and how a batch of them turns into new files.

Pure: an outbox entry's kind and payload parse into one of the change records below, each
naming one of the registry's state changes (`registry.datarepo.state`); `apply_batch` runs
a batch of them over a `RepoState` and says which applied and which failed. The writer
(`app.datarepo.writer`) does the I/O around it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError

from hbench.errors import HbenchError
from hbench.limits import BUNDLE_MAX_BYTES
from registry.datarepo import layout
from registry.datarepo.models import (
    AuditAction,
    AuditEvent,
    PublishedRun,
    PushedRun,
    RunId,
    TakeDownReason,
)
from registry.datarepo.state import (
    Change,
    RepoState,
    count_issued_run,
    delete_run_files,
    open_board,
    publish_run,
    recompute_board,
    record_audit_event,
    record_pushed_run,
    registry_of,
    take_down_pushed_run,
    take_down_run,
    withdraw_run,
)
from registry.placement import OpenBoard
from registry.schema import Record, Slug

TRAILER = "Hbench-Change"
"""The commit trailer naming each change a commit carries, one line per change."""


class OpenBoardChange(Record):
    """`open_board`: a job opened a board for a cell nobody has run yet."""

    kind: Literal["open_board"] = "open_board"
    board: OpenBoard


class PublishRunChange(Record):
    """`publish_run`: a job's score goes on its board."""

    kind: Literal["publish_run"] = "publish_run"
    run: PublishedRun
    bundle: str | None = Field(
        default=None,
        max_length=BUNDLE_MAX_BYTES,
        exclude_if=lambda value: value is None,
        description="The Sigstore bundle its `run.signature` names, written beside the run.",
    )


class WithdrawRunChange(Record):
    """`withdraw_run`: the owner takes a run off its board for good."""

    kind: Literal["withdraw_run"] = "withdraw_run"
    board: Slug
    run_id: RunId


class TakeDownRunChange(Record):
    """`take_down_run`: a maintainer takes a run down for one of the documented reasons."""

    kind: Literal["take_down_run"] = "take_down_run"
    board: Slug
    run_id: RunId
    reason: TakeDownReason
    note: str | None = Field(default=None, max_length=500)


class CountIssuedRunChange(Record):
    """`count_issued_run`: an issued run (uploaded or expired) counts toward its entry."""

    kind: Literal["count_issued_run"] = "count_issued_run"
    board: Slug
    entry_key: str = Field(min_length=3, max_length=200)
    issue_id: str = Field(min_length=1, max_length=100)


class DeleteRunFilesChange(Record):
    """`delete_run_files`: the owner deleted a published job, and its files with it; its
    run's record says so and loses its download, its score stays (an audit line too)."""

    kind: Literal["delete_run_files"] = "delete_run_files"
    board: Slug
    run_id: RunId


class AuditEventChange(Record):
    """`record_audit_event`: an audit line with no other change (a published job's files
    deleted, say). Its change id and time come from the outbox, like every other change's."""

    kind: Literal["record_audit_event"] = "record_audit_event"
    action: AuditAction
    board: Slug
    run: RunId | None = None
    reason: TakeDownReason | None = None
    note: str | None = Field(default=None, max_length=500)


class PushedRunChange(Record):
    """`record_pushed_run`: a run summary pushed to `POST /v1/runs` goes public, on no
    board (the run's file is its record; the site lists it with what it proves)."""

    kind: Literal["record_pushed_run"] = "record_pushed_run"
    run: PushedRun


class TakeDownPushedRunChange(Record):
    """`take_down_pushed_run`: a maintainer takes a pushed run off the site."""

    kind: Literal["take_down_pushed_run"] = "take_down_pushed_run"
    run_id: RunId
    reason: TakeDownReason
    note: str | None = Field(default=None, max_length=500)


PublicChange = Annotated[
    OpenBoardChange
    | PublishRunChange
    | WithdrawRunChange
    | TakeDownRunChange
    | CountIssuedRunChange
    | DeleteRunFilesChange
    | AuditEventChange
    | PushedRunChange
    | TakeDownPushedRunChange,
    Field(discriminator="kind"),
]
_CHANGE: TypeAdapter[PublicChange] = TypeAdapter(PublicChange)


def to_outbox(change: PublicChange) -> tuple[str, dict[str, Any]]:
    """The outbox row's `kind` and `payload` (the record as JSON, its kind left out)."""
    payload = change.to_json_dict()
    payload.pop("kind")
    return change.kind, payload


def from_outbox(kind: str, payload: dict[str, Any]) -> PublicChange:
    """The change an outbox row holds; refused when its kind or payload doesn't parse."""
    try:
        return _CHANGE.validate_python({**payload, "kind": kind})
    except ValidationError as error:
        where = "; ".join(
            f"{'.'.join(str(p) for p in item['loc'])}: {item['msg']}" for item in error.errors()
        )
        raise HbenchError("datarepo-change-invalid", f"{kind} change: {where}") from None


def change_id(entry_id: int, created_at: datetime) -> str:
    """The id a change carries into the repository: the outbox row's id and its creation
    time. The time keeps ids unique if a database is ever started afresh against a data
    repository that already holds changes 1, 2, 3…, which would otherwise read as landed."""
    return f"{entry_id}@{created_at.astimezone(UTC):%Y%m%dT%H%M%S.%fZ}"


def entry_id_of(change: str) -> int | None:
    """The outbox id inside a change id, or None for a value not written by `change_id`."""
    head, sep, _ = change.partition("@")
    return int(head) if sep and head.isdigit() else None


@dataclass(frozen=True)
class Pending:
    """One change to apply: its identity, fixed by the outbox, and what it does."""

    change: Change
    op: PublicChange


def board_of(op: PublicChange) -> str | None:
    """The board a change touches; None for a pushed run, which has none."""
    if isinstance(op, PushedRunChange | TakeDownPushedRunChange):
        return None
    if isinstance(op, OpenBoardChange):
        return op.board.slug
    if isinstance(op, PublishRunChange):
        return op.run.board
    return op.board


def pushed_run_of(op: PublicChange) -> str | None:
    """The pushed run a change writes, if it writes one."""
    if isinstance(op, PushedRunChange):
        return op.run.id
    if isinstance(op, TakeDownPushedRunChange):
        return op.run_id
    return None


def recomputes(op: PublicChange) -> bool:
    """Whether the change moves its board's rows (an audit line alone does not, nor a
    pushed run, which has no board)."""
    return not isinstance(op, AuditEventChange | PushedRunChange | TakeDownPushedRunChange)


@dataclass(frozen=True)
class Needs:
    """The files a batch reads: whole folders, and single files."""

    folders: tuple[str, ...]
    files: tuple[str, ...]


def needs(batch: Iterable[Pending]) -> Needs:
    """The registry, the touched boards' folders, the audit months the batch writes to and
    the pushed runs' own files.

    A batch never needs the rest of the repository, which is what keeps a batch's cost
    flat as the repository grows to thousands of runs."""
    batch = list(batch)
    boards = sorted({b for p in batch if (b := board_of(p.op)) is not None})
    months = {layout.audit_file(p.change.at) for p in batch if board_of(p.op) is not None}
    pushed = {layout.pushed_run_file(run) for p in batch if (run := pushed_run_of(p.op))}
    files = tuple(sorted(months | pushed))
    return Needs((layout.REGISTRY, *(layout.board_dir(b) for b in boards)), files)


def apply_one(  # noqa: PLR0911 - a case for each kind of change
    state: RepoState, op: PublicChange, change: Change
) -> RepoState:
    """Apply one change without recomputing its board (`apply_batch` does that once)."""
    match op:
        case OpenBoardChange():
            return open_board(state, op.board, change, recompute=False)
        case PublishRunChange():
            return publish_run(state, op.run, change, bundle=op.bundle, recompute=False)
        case WithdrawRunChange():
            return withdraw_run(state, op.board, op.run_id, change, recompute=False)
        case TakeDownRunChange():
            return take_down_run(
                state, board=op.board, run_id=op.run_id, reason=op.reason, note=op.note,
                change=change, recompute=False,
            )  # fmt: skip
        case CountIssuedRunChange():
            return count_issued_run(
                state, op.board, op.entry_key, op.issue_id, change, recompute=False
            )
        case PushedRunChange():
            return record_pushed_run(state, op.run)
        case TakeDownPushedRunChange():
            return take_down_pushed_run(
                state, op.run_id, reason=op.reason, note=op.note, change=change
            )
        case DeleteRunFilesChange():
            return delete_run_files(state, op.board, op.run_id, change)
        case AuditEventChange():
            event = AuditEvent(
                change=change.id, time=change.at, action=op.action, board=op.board,
                run=op.run, reason=op.reason, note=op.note,
            )  # fmt: skip
            return record_audit_event(state, event)


@dataclass(frozen=True)
class BatchResult:
    """A batch applied: the new state, the changes it carries, and those that failed."""

    state: RepoState
    applied: tuple[Pending, ...]
    failed: dict[str, str] = field(default_factory=dict)  # change id -> error, with its code


def apply_batch(state: RepoState, batch: Sequence[Pending]) -> BatchResult:
    """Apply changes in order, then recompute each touched board once.

    A change that fails leaves the state as it was and the rest go on. When a board's
    recompute fails, every change to that board fails with it and the batch is applied
    again without them, so what is committed never holds rows that don't match the runs.
    """
    failed: dict[str, str] = {}
    while True:
        current, applied = state, []
        for pending in batch:
            if pending.change.id in failed:
                continue
            try:
                current = apply_one(current, pending.op, pending.change)
            except Exception as error:
                # Any error, not only a refusal: one bad change (even a bug) must not block
                # the outbox behind it; it is recorded, retried, and given up on in the end.
                failed[pending.change.id] = describe(error)
            else:
                applied.append(pending)
        current, broken = _recompute(current, applied)
        if not broken:
            return BatchResult(current, tuple(applied), failed)
        for pending in applied:
            board = board_of(pending.op)
            if recomputes(pending.op) and board in broken:
                failed[pending.change.id] = broken[board]


def _recompute(state: RepoState, applied: Sequence[Pending]) -> tuple[RepoState, dict[str, str]]:
    boards = sorted({b for p in applied if recomputes(p.op) and (b := board_of(p.op)) is not None})
    if not boards:
        return state, {}
    try:
        registry = registry_of(state)
    except HbenchError as error:
        return state, dict.fromkeys(boards, describe(error))
    broken: dict[str, str] = {}
    for board in boards:
        try:
            state = recompute_board(state, board, registry)
        except Exception as error:  # the board's changes fail, not the whole batch
            broken[board] = describe(error)
    return state, broken


def describe(error: Exception) -> str:
    """An error as the outbox records it: an HbenchError's detail ends with its code."""
    if isinstance(error, HbenchError):
        return error.detail
    return f"{type(error).__name__}: {error}"


def commit_message(applied: Sequence[Pending]) -> str:
    """A commit's message: what it does in a line, then one trailer per change it carries,
    so a writer that lost track (a crash, a timeout) can read what already landed."""
    counts: dict[str, int] = {}
    for pending in applied:
        counts[pending.op.kind] = counts.get(pending.op.kind, 0) + 1
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    noun = "change" if len(applied) == 1 else "changes"
    trailers = "\n".join(f"{TRAILER}: {p.change.id}" for p in applied)
    return f"Apply {len(applied)} public {noun}: {summary}\n\n{trailers}\n"
