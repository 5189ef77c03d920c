"""Building the site: read the data repository, render what changed, write the files.

The pages fall into units, each rendered from known inputs:

- `board:<slug>`: the board's page, its entries' and its runs' pages, from that board's
  folder in the data repository;
- `global`: the boards index, the registry's pages, the leaderboard, the audit log, the
  limits, how to take part, the static registry export and the stylesheet and script,
  from the registry, every board's rows and the audit log.

`.build-state.json` in the output folder records each unit's input digest and the files it
wrote. A build re-renders the units whose inputs changed, writes their files and removes
the files they no longer make; a change to the registry, the templates, the code or the
configuration re-renders everything. After one new run that is one board's pages and the
global ones, whatever the size of the site.

To know which inputs changed without reading every file, the state also keeps each input
folder's file sizes, times and inode numbers beside its digest, as git's index does: a
folder whose files all look the same is not read again. Files changed in the last
`SETTLED_NS` are always read.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hbench import __version__
from registry.export import export_registry
from sitebuild import page
from sitebuild.boards import board_pages
from sitebuild.catalog import catalog_pages
from sitebuild.config import SiteConfig
from sitebuild.page import Page
from sitebuild.pages import other_pages, registry_page
from sitebuild.render import TEMPLATES, render_html, render_json
from sitebuild.runs import runs_pages
from sitebuild.source import (
    DataFiles,
    SiteData,
    digest,
    input_units,
    parse_site,
    read_data_repo,
)

STATE_FILE = ".build-state.json"
STATE_VERSION = 2
HERE = Path(__file__).parent
STATIC = HERE / "static"
GLOBAL = "global"
SETTLED_NS = 2_000_000_000
"""An input file changed less than this long before a build is read by the next build,
whatever its stat says: a later change could keep the same size and time."""


@dataclass(frozen=True)
class BuildReport:
    """What a build did."""

    full: bool
    units_rendered: int
    files_written: int
    files_removed: int


@dataclass
class _State:
    """`.build-state.json`: what each unit was rendered from and the files it wrote, and
    each input's stat digest with its input digest (`DataFiles.stat_digest`)."""

    builder: str = ""
    units: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, list[str]] = field(default_factory=dict)
    stats: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(
            {"version": STATE_VERSION, "builder": self.builder, "units": self.units,
             "outputs": self.outputs, "stats": self.stats},
            sort_keys=True, separators=(",", ":"),
        )  # fmt: skip

    def known_digests(self, stats: Mapping[str, str]) -> dict[str, str]:
        """The input digests of the inputs whose stat digest is still the one recorded."""
        return {unit: kept for unit, (stat, kept) in self.stats.items() if stats.get(unit) == stat}


def build_site(
    data_repo: Path,
    out: Path,
    config: SiteConfig | None = None,
    *,
    full: bool = False,
    workers: int = 1,
    link: bool = True,
) -> BuildReport:
    """Build the site of the data repository at `data_repo` into `out`.

    Only what changed since the last build into `out` is rendered, unless `full`. With
    `workers` above 1, many boards to render are shared among that many processes. With
    `link`, each run's JSON is a hard link to the data repository's file (its bytes as
    they are) where both folders are on one file system: only for a checkout that is not
    rewritten in place afterwards, as a link shares the file.
    """
    files = read_data_repo(data_repo)
    source = data_repo if link else None
    with _collector_paused():
        return _write_site(
            files, out, config or SiteConfig(), full=full, workers=workers, data_repo=source
        )


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for the build, as it was again afterwards.

    A build makes millions of objects (records, rows, page pieces) and keeps many of them
    to the end: every collection walks them again, about a tenth of a full build, while
    the build makes almost no reference cycles to collect. Forked workers inherit the
    pause, which also keeps them from touching (and so copying) the parent's pages.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _write_site(
    files: DataFiles,
    out: Path,
    config: SiteConfig,
    *,
    full: bool,
    workers: int,
    data_repo: Path | None,
) -> BuildReport:
    paths = input_units(files)
    # Taken before any file is read: a file changed after its stat shows as changed.
    stats = _stat_digests(files, paths)
    site = parse_site(files, paths)
    builder = builder_digest(config)
    names = [*(f"board:{slug}" for slug in site.boards), GLOBAL]
    previous = _read_state(out)
    full = full or previous.builder != builder or not previous.units
    digests: dict[str, str] = {}
    if full:
        # Every unit is rendered: no digest decides anything before, and each board's is
        # taken where it is rendered, from the files read for its pages.
        dirty = names
    else:
        digests = _input_digests(site, previous.known_digests(stats))
        wanted = _unit_digests(site, names, digests)
        dirty = [u for u in names if previous.units.get(u) != wanted[u]]
    gone = [u for u in previous.outputs if u not in names]
    # Until this build finishes, its dirty units count as never rendered: a build that
    # stops half-way is redone, not trusted.
    kept = {u: d for u, d in previous.units.items() if u in names and u not in dirty}
    _save_state(out, _State(previous.builder, kept, previous.outputs, previous.stats))

    writer = _Writer(out)
    outputs = {u: paths for u, paths in previous.outputs.items() if u in names}
    rendered = _render_units(site, dirty, _Target(out, data_repo), config, workers)
    outputs.update(rendered.outputs)
    digests.update(rendered.digests)
    removed = writer.remove(
        path
        for unit in [*dirty, *gone]
        for path in sorted(set(previous.outputs.get(unit, [])) - set(outputs.get(unit, [])))
    )
    inputs = _input_digests(site, digests)
    units = _unit_digests(site, names, inputs)
    known = {unit: [stat, inputs[unit]] for unit, stat in stats.items()}
    _save_state(out, _State(builder, units, outputs, known))
    return BuildReport(full, len(dirty), rendered.written, removed)


def _stat_digests(files: DataFiles, inputs: Mapping[str, list[str]]) -> dict[str, str]:
    """Each input's stat digest, where its files are settled (see `SETTLED_NS`)."""
    settled_before = time.time_ns() - SETTLED_NS
    found = {}
    for unit, paths in inputs.items():
        stat = files.stat_digest(paths, settled_before)
        if stat is not None:
            found[unit] = stat
    return found


def _input_digests(site: SiteData, known: Mapping[str, str]) -> dict[str, str]:
    """Every input's digest: `known`, or taken now from its files."""
    return {unit: known.get(unit) or site.input_digest(unit) for unit in site.inputs}


def _unit_digests(
    site: SiteData, names: Sequence[str], inputs: Mapping[str, str]
) -> dict[str, str]:
    """Each unit's digest from every input's; the global unit's is over them all, as its
    pages show every board."""
    units = {u: inputs.get(u) or site.input_digest(u) for u in names if u != GLOBAL}
    units[GLOBAL] = digest(f"{unit}={value}" for unit, value in sorted(inputs.items()))
    return units


def builder_digest(config: SiteConfig) -> str:
    """What every page depends on besides the data: the code, templates, static files,
    hbench's version and the configuration."""
    sources = sorted(
        p for folder in (HERE, TEMPLATES, STATIC) for p in folder.iterdir() if p.is_file()
    )
    parts = [__version__, repr(config)]
    for path in sources:
        parts.extend((path.name, path.read_text(encoding="utf-8")))
    return digest(parts)


PARALLEL_MIN = 16
"""Fewer boards than this to render are not worth starting processes for."""

CHUNK = 2
"""Boards per task handed to a process: small enough to keep every process busy."""

_shared: tuple[SiteData, SiteConfig, _Target] | None = None
"""What forked workers render from: set before the pool forks, so each child inherits the
parsed data instead of receiving it pickled."""


@dataclass
class _Rendered:
    """What rendering some units did: the files each wrote, how many in all, and each
    board's input digest, taken from the files its pages were rendered from."""

    outputs: dict[str, list[str]] = field(default_factory=dict)
    written: int = 0
    digests: dict[str, str] = field(default_factory=dict)

    def add(self, other: _Rendered) -> None:
        self.outputs.update(other.outputs)
        self.written += other.written
        self.digests.update(other.digests)


def _render_units(
    site: SiteData, units: Sequence[str], out: _Target, config: SiteConfig, workers: int
) -> _Rendered:
    """Render and write the units."""
    boards = [u for u in units if u != GLOBAL]
    # Forking is safe only in a process without other threads (the CLI, not the service).
    if workers < 2 or len(boards) < PARALLEL_MIN or threading.active_count() > 1:
        return _render_serial(site, units, out, config)
    global _shared  # noqa: PLW0603 - read by the forked children, see `_shared`
    _shared = (site, config, out)
    try:
        chunks = [boards[i : i + CHUNK] for i in range(0, len(boards), CHUNK)]
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            pending = pool.map(_render_chunk, chunks)
            rendered = _render_serial(site, [u for u in units if u == GLOBAL], out, config)
            for chunk in pending:
                rendered.add(chunk)
    finally:
        _shared = None
    return rendered


def _render_chunk(units: list[str]) -> _Rendered:
    if _shared is None:
        raise RuntimeError("the pool's workers read what the parent set before forking")
    site, config, target = _shared
    return _render_serial(site, units, target, config)


def _render_serial(
    site: SiteData, units: Sequence[str], out: _Target, config: SiteConfig
) -> _Rendered:
    writer = _Writer(out.folder, out.data_repo)
    rendered = _Rendered()
    for unit in units:
        rendered.outputs[unit] = writer.write_all(_render_unit(site, unit, config))
        if unit != GLOBAL:
            rendered.digests[unit] = site.input_digest(unit)
    rendered.written = writer.written
    return rendered


def _render_unit(site: SiteData, unit: str, config: SiteConfig) -> Iterator[_File]:
    if unit == GLOBAL:
        yield from _global_files(site, config)
        return
    for board_page in board_pages(site, unit.removeprefix("board:"), config):
        yield from _page_files(board_page)


def _global_files(site: SiteData, config: SiteConfig) -> Iterator[_File]:
    exported = export_registry(site.registry)
    for name, text in exported.items():
        yield f"{page.REGISTRY_DIR}/{name}", text, None
    # Its JSON is the export's own index.json, written above: the page alone here.
    index = registry_page(site)
    yield index.path, render_html(index), None
    for each in (*other_pages(site, config), *catalog_pages(site, exported), *runs_pages(site)):
        yield from _page_files(each)
    for static in sorted(STATIC.iterdir()):
        yield f"{page.STATIC_DIR}/{static.name}", static.read_text(encoding="utf-8"), None


def _page_files(each: Page) -> Iterator[_File]:
    yield each.path, render_html(each), None
    yield each.json_path, render_json(each), each.json_source


_File = tuple[str, str | bytes, str | None]
"""A file to write: its path in the site, its text (or bytes), and the data repository's
file that holds the same bytes, if one does."""


@dataclass(frozen=True)
class _Target:
    """Where a build writes, and the data repository to link unchanged files from."""

    folder: Path
    data_repo: Path | None


_EXCLUSIVE = os.O_WRONLY | os.O_CREAT | os.O_EXCL
SPARE_SUFFIX = ".next"
"""Added to a file's name for the name its successor is written under."""


class _Writer:
    """Writes files under the output folder, creating each folder once.

    Every file appears whole: it is made under a spare name beside where it goes and
    renamed there, over the file it replaces if there is one (a hard link is whole from the
    start, and made the same way over an older file). A reader of the served site gets no
    page, the old page or the new one, never a page half written or a mix, and a hard link
    (a run's JSON linked from the data repository) is never written through, so the data
    repository's file can never change from the site's side.
    """

    def __init__(self, out: Path, data_repo: Path | None = None) -> None:
        self.out = str(out)
        self.data_repo = str(data_repo) if data_repo is not None else None
        self.made: set[str] = set()
        self.written = 0

    def write_all(self, files: Iterable[_File]) -> list[str]:
        paths = []
        for path, text, source in files:
            if source is None or not self.link(path, source):
                self.write(path, text)
            paths.append(path)
        return paths

    def write(self, path: str, text: str | bytes) -> None:
        # Plain strings and a set of made folders: this runs 25,000 times in a full build.
        target = self._target(path)
        data = text.encode() if isinstance(text, str) else text
        spare = f"{target}{SPARE_SUFFIX}"
        try:
            _put(spare, data)
        except FileExistsError:
            _put(_spare(target), data)
        os.rename(spare, target)  # noqa: PTH104 - plain strings, 25,000 times a build
        self.written += 1

    def link(self, path: str, source: str) -> bool:
        """Link the data repository's `source` as `path`; False where links don't work
        (another file system, or none asked for): the caller writes the text instead."""
        if self.data_repo is None:
            return False
        target = self._target(path)
        origin = f"{self.data_repo}/{source}"
        try:
            try:
                os.link(origin, target)
            except FileExistsError:
                # Already that file (renaming a link over another link to the same file
                # would do nothing, and leave the spare name behind).
                if not Path(origin).samefile(target):
                    spare = _spare(target)
                    os.link(origin, spare)
                    Path(spare).replace(target)
        except OSError:
            # A new inode per file costs far more than a link, but it always works.
            self.data_repo = None
            return False
        self.written += 1
        return True

    def _target(self, path: str) -> str:
        target = f"{self.out}/{path}"
        folder = target.rpartition("/")[0]
        if folder not in self.made:
            Path(folder).mkdir(parents=True, exist_ok=True)
            self.made.add(folder)
        return target

    def remove(self, paths: Iterable[str]) -> int:
        """Remove the files, and any successor a build that stopped left beside one."""
        removed = 0
        for path in paths:
            target = Path(self.out) / path
            if target.is_file():
                target.unlink()
                removed += 1
            Path(f"{target}{SPARE_SUFFIX}").unlink(missing_ok=True)
        return removed


def _put(target: str, data: bytes) -> None:
    """A new file at `target` holding `data`; FileExistsError if something is there."""
    # os.open and bytes: a third cheaper per file than a buffered text file.
    handle = os.open(target, _EXCLUSIVE, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view) :]
    finally:
        os.close(handle)


def _spare(target: str) -> str:
    """The name beside `target` its successor is made under, cleared of what a build that
    stopped half-way may have left there."""
    spare = f"{target}{SPARE_SUFFIX}"
    Path(spare).unlink(missing_ok=True)
    return spare


def _read_state(out: Path) -> _State:
    path = out / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return _State()
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return _State()
    return _State(data["builder"], data["units"], data["outputs"], data["stats"])


def _save_state(out: Path, state: _State) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f"{STATE_FILE}.tmp"
    tmp.write_text(state.to_json(), encoding="utf-8")
    tmp.replace(out / STATE_FILE)
