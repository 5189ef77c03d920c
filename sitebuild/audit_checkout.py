"""A checkout's files audited on their own, before any site is built from them.

Every board's rows are recomputed from its runs with the data-repo writer's function
(`registry.datarepo.boards.recompute`) and compared with its `rows.json`, field by field;
each run's record is checked on its own, against its board's issued counts, the audit log
and its signature's bundle (`sitebuild.audit_runs`, `sitebuild.audit_signatures`).
`audit_files` is pure over the checkout's files; `sitebuild.audit` builds the sites.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from pydantic import JsonValue, TypeAdapter, ValidationError

from hbench.errors import HbenchError
from registry.datarepo import layout
from registry.datarepo.boards import header_of, price_for, recompute
from registry.datarepo.models import AuditEvent, IssuedRuns, PublishedRun, PushedRun
from registry.datarepo.state import RepoState, registry_of
from registry.jsonfile import dumps_table
from registry.loader import Registry
from registry.placement import OpenBoard
from sitebuild.audit_diff import ABSENT, Difference, field_name, json_differences
from sitebuild.audit_runs import (
    issued_differences,
    log_differences,
    pushed_log_differences,
    run_differences,
)
from sitebuild.audit_signatures import SignaturePolicy, signature_differences
from sitebuild.source import DataFiles

_RUNS = TypeAdapter(list[PublishedRun])


@dataclass(frozen=True)
class Recomputed:
    """What the checkout's runs give, and what differs in the checkout itself."""

    rows: dict[str, str | None]  # each board's rows.json as the writer writes it (None: none)
    differences: list[Difference]
    boards: int
    runs: int
    entries: int


def audit_files(
    files: DataFiles,
    signing: SignaturePolicy = SignaturePolicy(),  # noqa: B008 - a frozen dataclass
) -> Recomputed:
    """Every board's rows recomputed from its runs and compared with its `rows.json`; each
    run's record checked on its own, against its board's issued counts, the audit log and
    its signature's bundle."""
    registry = registry_of(RepoState({p: files[p] for p in files if p.startswith("registry/")}))
    runs_of, boards = _boards(files)
    differences: list[Difference] = []
    events, bad_lines = _events(files)
    differences += bad_lines
    rows: dict[str, str | None] = {}
    all_runs: list[tuple[str, PublishedRun]] = []
    entries = 0
    for slug in boards:
        paths = runs_of.get(slug, [])
        runs, invalid = _runs(files, paths)
        differences += invalid
        all_runs += runs
        board_rows, found = _board(files, registry, slug, runs)
        differences += found
        rows[layout.rows_file(slug)] = board_rows
        # dumps_table writes one row per line, four spaces in.
        entries += board_rows.count("\n    {") if board_rows is not None else 0
    differences += log_differences(all_runs, events)
    pushed, bad_pushed = _pushed(files)
    differences += bad_pushed
    differences += pushed_log_differences(pushed, events)
    differences += signature_differences(all_runs, files, signing)
    return Recomputed(rows, differences, len(boards), len(all_runs), entries)


def _board(
    files: DataFiles, registry: Registry, slug: str, held_runs: list[tuple[str, PublishedRun]]
) -> tuple[str | None, list[Difference]]:
    """The board's rows as its runs give them (None when it has none), and what differs."""
    opened_path = layout.open_board_file(slug)
    rows_path = layout.rows_file(slug)
    try:
        opened = OpenBoard.model_validate_json(files[opened_path]) if opened_path in files else None
        header = header_of(slug, registry, opened)
    except (HbenchError, ValidationError) as error:
        return None, [file_invalid(opened_path, slug, str(error).splitlines()[0])]
    issued_path = layout.issued_file(slug)
    try:
        text = files.get(issued_path)
        issued = IssuedRuns.model_validate_json(text) if text is not None else IssuedRuns()
    except ValidationError as error:
        return None, [file_invalid(issued_path, slug, str(error).splitlines()[0])]
    benchmark = registry.benchmarks.get(header.benchmark or "")
    runs = [run for _, run in held_runs]
    found = [d for path, run in held_runs for d in run_differences(path, run, benchmark)]
    found += issued_differences(slug, runs, issued)
    expected = None
    if runs:
        table = recompute(header, runs, issued, price_for(registry, header.model))
        expected = dumps_table(table.to_json_dict(), "rows")
    held = files.get(rows_path)
    if held == expected:  # the writer's text, byte for byte (or neither has a file)
        return expected, found
    return expected, found + list(rows_differences(slug, held, expected))


def rows_differences(slug: str, held: str | None, expected: str | None) -> Iterator[Difference]:
    """Each field of `rows.json` that differs from the rows its board's runs give."""
    path = layout.rows_file(slug)
    want: dict[str, JsonValue] = json.loads(expected) if expected else {"rows": []}
    if held is None:
        for row in _rows(want):
            yield Difference("audit-row-missing", path, "row", ABSENT, row.get("entry"),
                             board=slug, item=str(row.get("entry")),
                             note="the board has no rows.json")  # fmt: skip
        return
    try:
        have = json.loads(held)
    except ValueError as error:
        yield file_invalid(path, slug, f"not JSON ({error})")
        return
    if not isinstance(have, dict):
        yield file_invalid(path, slug, "not a JSON object")
        return
    if expected:
        for key in sorted((set(have) | set(want)) - {"rows"}):
            for where, a, b in json_differences(have.get(key, ABSENT), want.get(key, ABSENT)):
                yield Difference("audit-board-differs", path, field_name([key, *where]), a, b,
                                 board=slug)  # fmt: skip
    yield from _row_differences(slug, path, _rows(have), _rows(want))


def _row_differences(
    slug: str, path: str, have: list[dict[str, JsonValue]], want: list[dict[str, JsonValue]]
) -> Iterator[Difference]:
    held = {str(row.get("entry")): (n, row) for n, row in enumerate(have)}
    given = {str(row.get("entry")): (n, row) for n, row in enumerate(want)}
    for name in sorted(set(held) | set(given)):
        if name not in held:
            yield Difference("audit-row-missing", path, "row", ABSENT, name, board=slug,
                             item=name, note="rows.json has no row for the entry, whose "
                             "public runs give one")  # fmt: skip
            continue
        if name not in given:
            yield Difference("audit-row-extra", path, "row", name, ABSENT, board=slug,
                             item=name, note="rows.json has a row no public run of the "
                             "entry gives")  # fmt: skip
            continue
        (n, row), (m, other) = held[name], given[name]
        for where, a, b in json_differences(row, other):
            yield Difference("audit-row-differs", path, field_name(where), a, b, board=slug,
                             item=name)  # fmt: skip
        if n != m:
            yield Difference("audit-row-differs", path, "position", n + 1, m + 1, board=slug,
                             item=name)  # fmt: skip


def _boards(files: DataFiles) -> tuple[dict[str, list[str]], list[str]]:
    runs: dict[str, list[str]] = {}
    others: set[str] = set()
    for path in files:
        board = layout.board_of_path(path)
        if board is None:
            continue
        if path.startswith(layout.runs_dir(board) + "/") and path.endswith(".json"):
            runs.setdefault(board, []).append(path)
        else:
            others.add(board)
    return {b: sorted(p) for b, p in runs.items()}, sorted(set(runs) | others)


def _runs(
    files: DataFiles, paths: Sequence[str]
) -> tuple[list[tuple[str, PublishedRun]], list[Difference]]:
    """The board's runs, validated in one call; when one is wrong, one by one, each wrong
    one reported and left out."""
    documents = [files.raw(p) for p in paths]
    try:
        every = _RUNS.validate_json(b"[" + b",".join(documents) + b"]")
        return list(zip(paths, every, strict=True)), []
    except ValidationError:
        pass
    runs: list[tuple[str, PublishedRun]] = []
    invalid: list[Difference] = []
    for path, document in zip(paths, documents, strict=True):
        try:
            runs.append((path, PublishedRun.model_validate_json(document)))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(map(str, first["loc"]))
            invalid.append(
                file_invalid(path, layout.board_of_path(path), f"{first['msg']} at {where}")
            )
    return runs, invalid


def _pushed(files: DataFiles) -> tuple[list[tuple[str, PushedRun]], list[Difference]]:
    """The pushed runs' records; one that can't be read reported and left out."""
    runs, invalid = [], []
    for path in sorted(p for p in files if p.startswith(layout.PUSHED_DIR + "/")):
        try:
            runs.append((path, PushedRun.model_validate_json(files.raw(path))))
        except ValidationError as error:
            invalid.append(file_invalid(path, None, str(error.errors()[0]["msg"])))
    return runs, invalid


def _events(files: DataFiles) -> tuple[list[AuditEvent], list[Difference]]:
    events, invalid = [], []
    for path in sorted(p for p in files if p.startswith("audit/") and p.endswith(".jsonl")):
        for number, line in enumerate(files[path].splitlines(), start=1):
            if line.strip():
                try:
                    events.append(AuditEvent.model_validate_json(line))
                except ValidationError as error:
                    message = f"line {number}: {str(error).splitlines()[0]}"
                    invalid.append(file_invalid(path, None, message))
    return events, invalid


def _rows(table: JsonValue) -> list[dict[str, JsonValue]]:
    rows = table.get("rows") if isinstance(table, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def file_invalid(path: str, board: str | None, detail: str) -> Difference:
    """A file of the checkout (or of a built site) that can't be read as it should."""
    return Difference("audit-file-invalid", path, "", None, None, board=board, note=detail)
