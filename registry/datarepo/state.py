"""The data repository's state changes, as pure functions `state -> state`.

A `RepoState` is the repository's files as path to text. Each change returns a new state;
the data-repo writer commits the difference (`RepoState.diff`) and, on a conflict, pulls
and applies the same change again. Every change is idempotent by its change id: applying
it twice adds no second run, audit line or count.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from types import MappingProxyType

from hbench.errors import HbenchError
from registry.datarepo import layout
from registry.datarepo.boards import BoardHeader, header_of, price_for, recompute
from registry.datarepo.models import (
    AuditEvent,
    IssuedRuns,
    PublishedRun,
    PushedRun,
    RunStatus,
    TakeDownReason,
)
from registry.jsonfile import canonical, dumps, dumps_table
from registry.loader import Registry, parse_registry
from registry.placement import OpenBoard


@dataclass(frozen=True)
class RepoState:
    """The data repository's files: relative POSIX path to text."""

    files: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", MappingProxyType(dict(self.files)))

    def get(self, path: str) -> str | None:
        return self.files.get(path)

    def put(self, changes: Mapping[str, str | None]) -> RepoState:
        """A new state with files written (text) or removed (None)."""
        files = dict(self.files)
        for path, text in changes.items():
            if text is None:
                files.pop(path, None)
            else:
                files[path] = text
        return RepoState(files)

    def under(self, prefix: str) -> list[str]:
        prefix = prefix.rstrip("/") + "/"
        return sorted(p for p in self.files if p.startswith(prefix))

    def diff(self, before: RepoState) -> dict[str, str | None]:
        """What changed since `before`: path to new text, or None when removed."""
        changed: dict[str, str | None] = {
            p: t for p, t in self.files.items() if before.files.get(p) != t
        }
        changed.update({p: None for p in before.files if p not in self.files})
        return changed


@dataclass(frozen=True)
class Change:
    """A change's identity and time, fixed by the writer's outbox so retries agree."""

    id: str
    at: datetime


def registry_of(state: RepoState) -> Registry:
    """The registry held in the data repository's `registry/` folder (shared between
    states with the same registry files: treat it as read-only)."""
    prefix = layout.REGISTRY + "/"
    files = frozenset((p[len(prefix) :], t) for p, t in state.files.items() if p.startswith(prefix))
    return _parsed_registry(files)


# Every change reads the registry, and a batch of changes (the data-repo writer's) holds
# the same registry files throughout: parse them once, not once per change.
@lru_cache(maxsize=4)
def _parsed_registry(files: frozenset[tuple[str, str]]) -> Registry:
    registry, problems = parse_registry(dict(files))
    if problems:
        raise HbenchError.from_problems(problems)
    return registry


def open_board(
    state: RepoState, board: OpenBoard, change: Change, *, recompute: bool = True
) -> RepoState:
    """Open a board for a cell nobody has run yet."""
    path = layout.open_board_file(board.slug)
    existing = state.get(path)
    if existing is not None and OpenBoard.model_validate_json(existing) != board:
        message = f"board {board.slug} is already open with another cell"
        raise HbenchError("datarepo-conflict", message, path=path)
    if existing is None and state.get(layout.named_board_file(board.slug)) is not None:
        raise HbenchError("datarepo-conflict", f"{board.slug} is a named board", path=path)
    state = state.put({path: dumps(board.to_json_dict())})
    event = AuditEvent(change=change.id, time=change.at, action="open_board", board=board.slug)
    return _recomputed(record_audit_event(state, event), board.slug, recompute)


def publish_run(
    state: RepoState,
    run: PublishedRun,
    change: Change,
    *,
    bundle: str | None = None,
    recompute: bool = True,
) -> RepoState:
    """Add a published run to its board, with its signature's `bundle` beside it when it
    has one, and recompute the board."""
    path = layout.run_file(run.board, run.id)
    existing = state.get(path)
    if existing is not None and PublishedRun.model_validate_json(existing) != run:
        message = f"run {run.id} is already on {run.board}; a job is published once"
        raise HbenchError("datarepo-conflict", message, path=path)
    if (bundle is None) != (run.signature is None):
        message = f"run {run.id}'s signature and its bundle come together, or neither does"
        raise HbenchError("datarepo-conflict", message, path=path)
    _board_header(state, run.board)
    files = {path: dumps(run.to_json_dict())}
    if run.signature is not None and bundle is not None:
        files[run.signature.bundle] = bundle if bundle.endswith("\n") else bundle + "\n"
    state = state.put(files)
    event = AuditEvent(
        change=change.id, time=change.at, action="publish", board=run.board, run=run.id
    )
    return _recomputed(record_audit_event(state, event), run.board, recompute)


def withdraw_run(
    state: RepoState, board: str, run_id: str, change: Change, *, recompute: bool = True
) -> RepoState:
    """Take a run off its board for good, at its owner's request."""
    return _set_status(
        state, board=board, run_id=run_id, status="withdrawn", reason=None, note=None,
        change=change, recompute=recompute,
    )  # fmt: skip


def take_down_run(
    state: RepoState,
    *,
    board: str,
    run_id: str,
    reason: TakeDownReason,
    note: str | None,
    change: Change,
    recompute: bool = True,
) -> RepoState:
    """Take a run down for one of the take-down reasons; the audit log says which."""
    return _set_status(
        state, board=board, run_id=run_id, status="taken_down", reason=reason, note=note,
        change=change, recompute=recompute,
    )  # fmt: skip


def delete_run_files(state: RepoState, board: str, run_id: str, change: Change) -> RepoState:
    """Mark that the run's owner deleted its job, and its files with it: the score stays on
    its board as it was (the board's rows don't move), the run's page offers no download."""
    path = layout.run_file(board, run_id)
    text = state.get(path)
    if text is None:
        raise HbenchError("datarepo-run-not-found", f"no run {run_id} on {board}", path=path)
    run = PublishedRun.model_validate_json(text)
    if run.files_deleted_at is None:
        changed = run.model_copy(update={"files_deleted_at": change.at, "download": None})
        state = state.put({path: dumps(changed.to_json_dict())})
    event = AuditEvent(
        change=change.id, time=change.at, action="delete_files", board=board, run=run_id
    )
    return record_audit_event(state, event)


def count_issued_run(
    state: RepoState,
    board: str,
    entry_key: str,
    issue_id: str,
    change: Change,
    *,
    recompute: bool = True,
) -> RepoState:
    """Count an issued run (uploaded or expired) toward its entry's `runs_issued`."""
    path = layout.issued_file(board)
    text = state.get(path)
    issued = IssuedRuns.model_validate_json(text) if text else IssuedRuns()
    ids = issued.entries.get(entry_key, [])
    if issue_id not in ids:
        entries = {**issued.entries, entry_key: sorted([*ids, issue_id])}
        state = state.put({path: dumps(IssuedRuns(entries=entries).to_json_dict())})
    event = AuditEvent(change=change.id, time=change.at, action="count_issued", board=board)
    return _recomputed(record_audit_event(state, event), board, recompute)


def record_pushed_run(state: RepoState, run: PushedRun) -> RepoState:
    """Add a run summary pushed to the runs API. It belongs to no board, so no rows move;
    its file is its whole public record. Pushing the same record again changes nothing."""
    path = layout.pushed_run_file(run.id)
    existing = state.get(path)
    if existing is not None and PushedRun.model_validate_json(existing) != run:
        message = f"pushed run {run.id} is already recorded, with other values"
        raise HbenchError("datarepo-conflict", message, path=path)
    return state.put({path: dumps(run.to_json_dict())})


def take_down_pushed_run(
    state: RepoState, run_id: str, *, reason: TakeDownReason, note: str | None, change: Change
) -> RepoState:
    """Take a pushed run down: its file keeps the record, marked with the reason and note,
    the audit log says so (on no board), and the site lists it no more. Taking it down
    again changes nothing."""
    path = layout.pushed_run_file(run_id)
    text = state.get(path)
    if text is None:
        raise HbenchError("datarepo-conflict", f"no pushed run {run_id} to take down", path=path)
    run = PushedRun.model_validate_json(text)
    if run.status == "taken_down":
        return state
    down = run.model_copy(
        update={"status": "taken_down", "status_changed_at": change.at,
                "take_down_reason": reason, "take_down_note": note}
    )  # fmt: skip
    event = AuditEvent(
        change=change.id, time=change.at, action="take_down", run=run_id, reason=reason,
        note=note,
    )  # fmt: skip
    return record_audit_event(state.put({path: dumps(down.to_json_dict())}), event)


def record_audit_event(state: RepoState, event: AuditEvent) -> RepoState:
    """Append one line to the month's audit log, unless its change is there already."""
    path = layout.audit_file(event.time)
    text = state.get(path) or ""
    # Only lines holding the id's text are parsed: a month's log grows with every change,
    # and parsing all of it for each new line would make a month quadratic.
    lines = (line for line in text.splitlines() if event.change in line)
    if any(json.loads(line).get("change") == event.change for line in lines):
        return state
    return state.put({path: text + canonical(event.to_json_dict()) + "\n"})


def recompute_board(state: RepoState, board: str, registry: Registry | None = None) -> RepoState:
    """Rewrite `boards/<board>/rows.json` from the board's runs."""
    rows = _rows_text(state, board, _run_paths(state, board), registry or registry_of(state))
    return state.put({layout.rows_file(board): rows})


def recompute_all(state: RepoState, registry: Registry | None = None) -> RepoState:
    """Recompute every board that has runs.

    Paths are grouped by board in one pass, and each board's runs are parsed, scored and
    dropped before the next board's, so memory holds one board's runs at a time.
    """
    registry = registry or registry_of(state)
    by_board: dict[str, list[str]] = {}
    for path in state.files:
        board = layout.board_of_path(path)
        if board is not None and path.startswith(layout.runs_dir(board) + "/"):
            by_board.setdefault(board, []).append(path)
    rows = {
        layout.rows_file(board): _rows_text(state, board, sorted(paths), registry)
        for board, paths in sorted(by_board.items())
    }
    return state.put(rows)


def _rows_text(state: RepoState, board: str, run_paths: Iterable[str], registry: Registry) -> str:
    header = _board_header(state, board, registry)
    runs = [PublishedRun.model_validate_json(state.files[path]) for path in run_paths]
    text = state.get(layout.issued_file(board))
    issued = IssuedRuns.model_validate_json(text) if text else IssuedRuns()
    rows = recompute(header, runs, issued, price_for(registry, header.model))
    return dumps_table(rows.to_json_dict(), "rows")


def _recomputed(state: RepoState, board: str, recompute: bool) -> RepoState:
    # A caller applying many changes at once (the data-repo writer's batch) passes
    # `recompute=False` and recomputes each touched board once at the end: the rows are a
    # function of the board's final files, and one recompute per change would make a batch
    # quadratic in the board's runs.
    return recompute_board(state, board) if recompute else state


def _board_header(state: RepoState, board: str, registry: Registry | None = None) -> BoardHeader:
    text = state.get(layout.open_board_file(board))
    opened = OpenBoard.model_validate_json(text) if text else None
    return header_of(board, registry or registry_of(state), opened)


def _run_paths(state: RepoState, board: str) -> list[str]:
    return [p for p in state.under(layout.runs_dir(board)) if p.endswith(".json")]


def _set_status(
    state: RepoState,
    *,
    board: str,
    run_id: str,
    status: RunStatus,
    reason: TakeDownReason | None,
    note: str | None,
    change: Change,
    recompute: bool,
) -> RepoState:
    path = layout.run_file(board, run_id)
    text = state.get(path)
    if text is None:
        raise HbenchError("datarepo-run-not-found", f"no run {run_id} on {board}", path=path)
    run = PublishedRun.model_validate_json(text)
    if run.status == "public":
        changed = replace_run(run, status, reason, change.at)
        state = state.put({path: dumps(changed.to_json_dict())})
    action = "withdraw" if status == "withdrawn" else "take_down"
    event = AuditEvent(
        change=change.id, time=change.at, action=action, board=board, run=run_id,
        reason=reason, note=note,
    )  # fmt: skip
    return _recomputed(record_audit_event(state, event), board, recompute)


def replace_run(
    run: PublishedRun, status: RunStatus, reason: TakeDownReason | None, at: datetime
) -> PublishedRun:
    """The run with a new status: with `files_deleted_at`, the only fields a published run
    ever changes."""
    return run.model_copy(
        update={"status": status, "take_down_reason": reason, "status_changed_at": at}
    )
