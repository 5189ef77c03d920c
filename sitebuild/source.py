"""The data repository as the site reads it: its files as text, parsed into typed records.

`read_data_repo` is the only I/O here: it lists the files, and each text is read the
first time it is asked for. Parsing is pure over the files' text and lazy per board: the
boards' rows are enough for every page but a board's own, so a build reads and parses the
run files of the boards it renders, in the process that renders them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, JsonValue, TypeAdapter, ValidationError

from hbench.errors import HbenchError
from registry.datarepo import layout
from registry.datarepo.boards import BoardHeader, header_of
from registry.datarepo.models import AuditEvent, BoardRows, PublishedRun, PushedRun
from registry.datarepo.state import RepoState, registry_of
from registry.loader import Registry
from registry.placement import OpenBoard
from registry.schema import Board

FOLDERS = (layout.REGISTRY, "boards", "audit", layout.PUSHED_DIR)
"""The data repository's folders the site is built from (`docs/data-repository.md`)."""

SUFFIXES = (".json", ".jsonl")

_REGISTRY = layout.REGISTRY + "/"
_RUNS = TypeAdapter(list[PublishedRun])
_EVENTS = TypeAdapter(list[AuditEvent])
_PUSHED = TypeAdapter(list[PushedRun])


def read_data_repo(root: Path, kind: type[DataFiles] | None = None) -> DataFiles:
    """Every data file of the repository at `root`, as relative POSIX path to text, in a
    `kind` of `DataFiles` (a builder's `files`)."""
    if not (root / layout.REGISTRY).is_dir():
        message = f"{root} is not a data repository: it has no {layout.REGISTRY}/ folder"
        raise HbenchError("site-data-invalid", message, path=str(root))
    paths: list[str] = []
    for folder in FOLDERS:
        # os.walk lists names without a stat per file, which counts at 10,000 runs.
        for here, _dirs, names in os.walk(root / folder):
            rel = Path(here).relative_to(root).as_posix()
            paths.extend(f"{rel}/{name}" for name in names if name.endswith(SUFFIXES))
    return (kind or DataFiles)(root, paths)


class DataFiles(Mapping[str, str]):
    """The data files of a checkout, path to text: listed at once, each read when first
    asked for and kept. A forked process reads what it renders; what the parent read
    before forking, it shares.

    `raw` gives a file's bytes, which is all that validating and digesting a run needs:
    its text is decoded only if a page asks for it.
    """

    def __init__(self, root: Path, paths: Iterable[str]) -> None:
        self.root = str(root)
        self._paths = tuple(paths)
        self._known = frozenset(self._paths)
        self._raw: dict[str, bytes] = {}
        self._texts: dict[str, str] = {}

    def raw(self, path: str) -> bytes:
        data = self._raw.get(path)
        if data is None:
            if path not in self._known:
                raise KeyError(path)
            try:
                # open() rather than Path.read_bytes: 10,000 files, each a Path less.
                with open(f"{self.root}/{path}", "rb") as handle:  # noqa: PTH123
                    data = self._raw[path] = handle.read()
            except OSError as exc:  # gone since it was listed, or not a file
                message = f"{path}: could not be read ({exc.strerror})"
                raise HbenchError("site-data-invalid", message, path=path) from None
        return data

    def __getitem__(self, path: str) -> str:
        text = self._texts.get(path)
        if text is None:
            try:
                text = self._texts[path] = self.raw(path).decode()
            except UnicodeDecodeError as exc:
                message = f"{path}: not UTF-8 ({exc.reason})"
                raise HbenchError("site-data-invalid", message, path=path) from None
        return text

    def stat_digest(self, paths: Iterable[str], settled_before_ns: int) -> str | None:
        """The files' names, sizes, modification times and inode numbers as one digest,
        without reading them: while it stays the same, so do the files, as git's index
        trusts (with `core.trustctime` off: linking a run's file into the site changes its
        change time). None if one was modified at or after `settled_before_ns` (a change
        within the file system's clock tick of it could keep the same time), or is gone.
        """
        parts = []
        for path in paths:
            try:
                st = os.stat(f"{self.root}/{path}")  # noqa: PTH116 - 10,000 files, each a Path less
            except OSError:
                return None
            if st.st_mtime_ns >= settled_before_ns:
                return None
            parts.append(f"{path} {st.st_size} {st.st_mtime_ns} {st.st_ino}")
        return digest(parts)

    def __contains__(self, path: object) -> bool:
        return path in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


@dataclass(frozen=True)
class BoardSource:
    """One board: its definition (named in the registry or opened by a job) and its rows."""

    slug: str
    title: str
    header: BoardHeader
    named: Board | None
    opened: OpenBoard | None
    rows: BoardRows | None  # None until the board has a run
    rows_json: tuple[dict[str, JsonValue], ...]  # the rows as rows.json has them
    run_paths: tuple[str, ...]


@dataclass(frozen=True)
class SiteData:
    """What every page but a board's own is rendered from."""

    registry: Registry
    boards: dict[str, BoardSource]
    audit: tuple[AuditEvent, ...]
    files: DataFiles
    inputs: dict[str, list[str]]  # `input_units`: each unit's files
    pushed: tuple[PushedRun, ...] = ()  # runs pushed to `POST /v1/runs`, oldest first

    def input_digest(self, unit: str) -> str:
        """The digest of a unit's files: what its pages were rendered from."""
        return input_digest(self.files, self.inputs.get(unit, []))

    def runs(self, board: str) -> list[PublishedRun]:
        """The board's published runs, every status, oldest first."""
        paths = self.boards[board].run_paths
        runs = parse_many(_RUNS, paths, [self.files.raw(p) for p in paths])
        return sorted(runs, key=lambda r: (r.published_at, r.id))


def parse_site(files: DataFiles, inputs: dict[str, list[str]]) -> SiteData:
    """The registry, every board and the audit log; run files stay unread until a board's
    pages ask for its runs. `inputs` are the files' units (`input_units(files)`)."""
    registry = registry_of(RepoState({p: files[p] for p in files if p.startswith(_REGISTRY)}))
    run_paths: dict[str, list[str]] = {}
    opened: set[str] = set()
    for path in files:
        board = layout.board_of_path(path)
        if board is None:
            continue
        if path.startswith(layout.runs_dir(board) + "/"):
            run_paths.setdefault(board, []).append(path)
        elif path == layout.open_board_file(board):
            opened.add(board)
    slugs = sorted(set(registry.boards) | opened | set(run_paths))
    boards = {
        slug: _board(files, registry, slug, tuple(sorted(run_paths.get(slug, []))))
        for slug in slugs
    }
    return SiteData(registry, boards, tuple(_audit(files)), files, inputs, _pushed(files))


def _pushed(files: DataFiles) -> tuple[PushedRun, ...]:
    prefix = layout.PUSHED_DIR + "/"
    paths = sorted(p for p in files if p.startswith(prefix) and p.endswith(".json"))
    if not paths:
        return ()
    runs = parse_many(_PUSHED, paths, [files.raw(p) for p in paths])
    return tuple(sorted(runs, key=lambda r: (r.pushed_at, r.id)))


def parse[RecordT: BaseModel](model: type[RecordT], path: str, text: str) -> RecordT:
    """One file as its record, or an error naming the file and the first problem."""
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        first = str(exc).splitlines()[0]
        raise HbenchError("site-data-invalid", f"{path}: {first}", path=path) from None


def parse_value[RecordT: BaseModel](model: type[RecordT], path: str, value: object) -> RecordT:
    """A file's parsed JSON as its record, refused as `parse` refuses."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = str(exc).splitlines()[0]
        raise HbenchError("site-data-invalid", f"{path}: {first}", path=path) from None


def _loads(path: str, text: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise HbenchError("site-data-invalid", f"{path}: not JSON ({exc})", path=path) from None


def parse_many[RecordT: BaseModel](
    adapter: TypeAdapter[list[RecordT]], paths: Sequence[str], documents: Sequence[bytes]
) -> list[RecordT]:
    """Many JSON documents (each the file at the same place in `paths`) as records,
    validated in one call: pydantic's per-call overhead is larger than the validation of
    a small record, and a board holds thousands of them."""
    try:
        return adapter.validate_json(b"[" + b",".join(documents) + b"]")
    except ValidationError:
        pass
    # One is wrong: validated one by one, the first wrong one is named. (An error in the
    # whole array says where a record went wrong, but not which file broke its JSON.)
    for path, document in zip(paths, documents, strict=True):
        try:
            adapter.validate_json(b"[" + document + b"]")
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(map(str, error["loc"][1:]))
            message = f"{path}: {error['msg']}" + (f" at {where}" if where else "")
            raise HbenchError("site-data-invalid", message, path=path) from None
    raise HbenchError("site-data-invalid", f"{paths[0]} and the files after it do not parse")


def digest(parts: Iterable[str | bytes]) -> str:
    """sha256 over strings (as UTF-8) and bytes, each length-prefixed so that no two
    sequences collide."""
    hashed = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hashed.update(len(data).to_bytes(8, "big"))
        hashed.update(data)
    return hashed.hexdigest()


def input_units(paths: Iterable[str]) -> dict[str, list[str]]:
    """The inputs the pages depend on, by unit: `registry`, `audit` and `board:<slug>` for
    each board folder, each with its files' paths in order."""
    units: dict[str, list[str]] = {}
    for path in sorted(paths):
        board = layout.board_of_path(path)
        unit = f"board:{board}" if board is not None else path.split("/", 1)[0]
        units.setdefault(unit, []).append(path)
    return units


def input_digest(files: DataFiles, paths: Iterable[str]) -> str:
    """A unit's digest, over the paths and bytes of its files."""
    return digest(part for path in paths for part in (path, files.raw(path)))


def _board(
    files: Mapping[str, str], registry: Registry, slug: str, run_paths: tuple[str, ...]
) -> BoardSource:
    opened_path = layout.open_board_file(slug)
    opened = parse(OpenBoard, opened_path, files[opened_path]) if opened_path in files else None
    rows_path = layout.rows_file(slug)
    rows, rows_json = None, ()
    if rows_path in files:
        # Parsed once: validated as the record, and kept as written for the pages' JSON
        # rather than dumping 7,000 rows again.
        loaded = _loads(rows_path, files[rows_path])
        rows = parse_value(BoardRows, rows_path, loaded)
        rows_json = tuple(loaded["rows"]) if isinstance(loaded, dict) else ()
    header = header_of(slug, registry, opened)
    named = registry.boards.get(slug) if opened is None else None
    return BoardSource(
        slug=slug,
        title=_title(registry, header, named),
        header=header,
        named=named,
        opened=opened,
        rows=rows,
        rows_json=rows_json,
        run_paths=run_paths,
    )


def _title(registry: Registry, header: BoardHeader, named: Board | None) -> str:
    if named is not None and named.title:
        return named.title
    benchmark = registry.benchmarks.get(header.benchmark or "")
    model = registry.models.get(header.model)
    what = benchmark.name if benchmark else header.dataset
    title = f"{what} on {model.name if model else header.model}"
    return f"{title}, custom settings" if header.settings else title


def _audit(files: Mapping[str, str]) -> list[AuditEvent]:
    lines = {
        f"{path}:{number}": line
        for path in sorted(p for p in files if p.startswith("audit/") and p.endswith(".jsonl"))
        for number, line in enumerate(files[path].splitlines(), start=1)
        if line.strip()
    }
    events = parse_many(_EVENTS, list(lines), [line.encode() for line in lines.values()])
    return sorted(events, key=lambda e: (e.time, e.change))
