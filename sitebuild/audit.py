"""Checking a data repository's boards without trusting the service: `hbench audit`.

Everything a board shows is recomputed from the runs a checkout holds, with the functions
the data-repo writer and the site builder use (`registry.datarepo.boards.recompute` for the
rows, sitebuild for the pages, the reproduced panels and the leaderboard), and compared
with what the checkout holds: each board's `rows.json`, and the site the builder makes of
the checkout (and a built site beside it, when there is one). Each run's record is checked
on its own too (`sitebuild.audit_runs`). Every difference is reported, each with its rule
code, never only the first.

`audit_files` is pure over the checkout's files; `audit_data_repo` reads a checkout, builds
the two sites into a temporary folder (the site as the checkout makes it, and the site as
its runs make it, with every `rows.json` recomputed) and compares them.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

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
from sitebuild.build import Builder
from sitebuild.source import DataFiles, read_data_repo

__all__ = ["AuditReport", "SignaturePolicy", "audit_data_repo", "audit_files"]

_RUNS = TypeAdapter(list[PublishedRun])
SITE_FOLDER = "_site"
"""Where the Pages workflow builds the site in its checkout: audited when it is there."""
NOT_DATA = frozenset({".build-state.json", "take-part/index.json", "limits/index.json"})
"""A built site's JSON that is not from the data repository: the service's settings."""
BUILT = "(built from the checkout)"


@dataclass(frozen=True)
class Recomputed:
    """What the checkout's runs give, and what differs in the checkout itself."""

    rows: dict[str, str | None]  # each board's rows.json as the writer writes it (None: none)
    differences: list[Difference]
    boards: int
    runs: int
    entries: int


@dataclass(frozen=True)
class AuditReport:
    """What an audit checked and every difference it found."""

    boards: int
    runs: int
    entries: int
    sites: tuple[str, ...]
    differences: tuple[Difference, ...] = field(default=())

    @property
    def agrees(self) -> bool:
        return not self.differences

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "agrees": self.agrees,
            "boards": self.boards,
            "runs": self.runs,
            "entries": self.entries,
            "sites": list(self.sites),
            "differences": [d.to_json() for d in self.differences],
        }


def audit_data_repo(
    root: Path,
    *,
    site: Path | None = None,
    workers: int = 1,
    scratch: Path | None = None,
    signing: SignaturePolicy = SignaturePolicy(),  # noqa: B008 - a frozen dataclass
) -> AuditReport:
    """Audit the checkout at `root`: its rows, its runs, their signatures (held to
    `signing`) and the sites built from it, and `site` (or the checkout's `_site/`, when
    it holds one) as a built site to hold to them."""
    if site is not None and not (site / "index.json").is_file():
        message = f"{site} is not a built site: it has no index.json"
        raise HbenchError("audit-file-invalid", message, path=str(site))
    files = read_data_repo(root)
    found = audit_files(files, signing)
    differences = list(found.differences)
    held = site if site is not None else root / SITE_FOLDER
    sites = [BUILT]
    # Where every rows.json is the writer's text, the checkout's site is built from the
    # same files as the site its runs give: one build is both.
    same = all(files.get(path) == text for path, text in found.rows.items())
    with tempfile.TemporaryDirectory(prefix="hbench-audit-", dir=scratch) as tmp:
        built, expected = Path(tmp) / "built", Path(tmp) / "expected"
        try:
            Builder(workers=workers, files=recomputed_files(found.rows)).build(
                root, expected, full=True
            )
            if not same:
                Builder(workers=workers).build(root, built, full=True)
        except HbenchError as error:
            differences += [
                Difference(
                    "audit-file-invalid", p.path or str(root), "", None, None, note=p.message
                )
                for p in error.problems
            ]
        else:
            others = [] if same else [(BUILT, built)]
            if site is not None or (held / "index.json").is_file():
                sites.append(str(held))
                others.append((str(held), held))
            recomputed = read_site(expected) if others else {}
            for label, folder in others:
                differences += compare_sites(read_site(folder), recomputed, label)
    return AuditReport(
        found.boards, found.runs, found.entries, tuple(sites), tuple(_unique(differences))
    )


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
        return None, [_invalid(opened_path, slug, str(error).splitlines()[0])]
    issued_path = layout.issued_file(slug)
    try:
        text = files.get(issued_path)
        issued = IssuedRuns.model_validate_json(text) if text is not None else IssuedRuns()
    except ValidationError as error:
        return None, [_invalid(issued_path, slug, str(error).splitlines()[0])]
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
        yield _invalid(path, slug, f"not JSON ({error})")
        return
    if not isinstance(have, dict):
        yield _invalid(path, slug, "not a JSON object")
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


def compare_sites(
    held: Mapping[str, bytes], expected: Mapping[str, bytes], label: str
) -> Iterator[Difference]:
    """Every field of a built site's JSON (its boards, entries, runs, the boards index, the
    benchmarks' and models' reproduced panels, the leaderboard, …) that differs from the
    site its runs give."""
    for path in sorted(set(held) | set(expected)):
        if path in NOT_DATA or held.get(path) == expected.get(path):
            continue
        where = f"{label}/{path}"
        board, item = _site_place(path)
        if path not in held or path not in expected:
            present = path in held
            yield Difference(
                _site_code(path, ""), where, "", "page" if present else ABSENT,
                ABSENT if present else "page", board=board, item=item,
                note="the site has a page its runs don't give" if present
                else "the site lacks a page its runs give",
            )  # fmt: skip
            continue
        try:
            have, want = json.loads(held[path]), json.loads(expected[path])
        except ValueError as error:
            yield _invalid(where, board, f"not JSON ({error})")
            continue
        for steps, a, b in json_differences(have, want):
            named, rest = item, steps
            if board and item is None and len(steps) > 1 and steps[0] == "rows":
                named, rest = steps[1].strip("[]"), steps[2:]
            name = field_name(rest)
            yield Difference(_site_code(path, name), where, name, a, b, board=board, item=named)


def read_site(folder: Path) -> dict[str, bytes]:
    """A built site's JSON files, relative path to bytes."""
    found: dict[str, bytes] = {}
    for here, _dirs, names in os.walk(folder):
        rel = Path(here).relative_to(folder).as_posix()
        for name in names:
            if name.endswith(".json"):
                path = name if rel == "." else f"{rel}/{name}"
                with open(f"{here}/{name}", "rb") as handle:  # noqa: PTH123 - many files
                    found[path] = handle.read()
    return found


def recomputed_files(rows: Mapping[str, str | None]) -> type[DataFiles]:
    """A `DataFiles` whose boards' `rows.json` are the ones `rows` gives (None: no file),
    for the site builder to build the site the runs make."""
    encoded = {path: text.encode() for path, text in rows.items() if text is not None}
    absent = frozenset(path for path, text in rows.items() if text is None)

    class RecomputedFiles(DataFiles):
        replaced: ClassVar[Mapping[str, bytes]] = encoded

        def __init__(self, root: Path, paths: Sequence[str] | Iterator[str]) -> None:
            listed = {p for p in paths if p not in absent} | set(encoded)
            super().__init__(root, sorted(listed))

        def raw(self, path: str) -> bytes:
            data = self.replaced.get(path)
            return data if data is not None else super().raw(path)

    return RecomputedFiles


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
            invalid.append(_invalid(path, layout.board_of_path(path), f"{first['msg']} at {where}"))
    return runs, invalid


def _pushed(files: DataFiles) -> tuple[list[tuple[str, PushedRun]], list[Difference]]:
    """The pushed runs' records; one that can't be read reported and left out."""
    runs, invalid = [], []
    for path in sorted(p for p in files if p.startswith(layout.PUSHED_DIR + "/")):
        try:
            runs.append((path, PushedRun.model_validate_json(files.raw(path))))
        except ValidationError as error:
            invalid.append(_invalid(path, None, str(error.errors()[0]["msg"])))
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
                    invalid.append(_invalid(path, None, message))
    return events, invalid


def _rows(table: JsonValue) -> list[dict[str, JsonValue]]:
    rows = table.get("rows") if isinstance(table, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def _site_place(path: str) -> tuple[str | None, str | None]:
    """The board and the entry, run, benchmark or model a site's file is the page of."""
    parts = path.split("/")
    if parts[0] == "boards" and len(parts) >= 3:
        item = parts[3].removesuffix(".json") if len(parts) == 4 else None
        return parts[1], item
    if parts[0] in {"benchmarks", "models", "runs"} and len(parts) == 3:
        return None, f"{parts[0]} {parts[1]}"
    return None, None


def _site_code(path: str, name: str) -> str:
    if path.split("/", 1)[0] in {"benchmarks", "models", "leaderboard"}:
        return "audit-panel-differs"
    if "/runs/" in path and name == "manifestDigest":
        return "audit-digest-differs"
    return "audit-site-differs"


def _invalid(path: str, board: str | None, detail: str) -> Difference:
    return Difference("audit-file-invalid", path, "", None, None, board=board, note=detail)


def _unique(differences: Sequence[Difference]) -> Iterator[Difference]:
    seen: set[tuple[str, str, str, str | None]] = set()
    for d in differences:
        key = (d.code, d.path, d.field, d.item)
        if key not in seen:
            seen.add(key)
            yield d
