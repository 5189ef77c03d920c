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
`Builder.settled_ns` are always read.

The parts: `sitebuild.state` (the state file), `sitebuild.writer` (files that appear
whole, hard links), `sitebuild.pool` (forked processes) and here the `Builder`, whose
fields are its tunables.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
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
from sitebuild.pool import can_fork, fork_map
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
from sitebuild.state import STATE_FILE, BuildState
from sitebuild.writer import File, Writer

__all__ = ["STATE_FILE", "STATIC", "BuildReport", "Builder", "build_site", "builder_digest"]

HERE = Path(__file__).parent
STATIC = HERE / "static"
GLOBAL = "global"


@dataclass(frozen=True)
class BuildReport:
    """What a build did."""

    full: bool
    units_rendered: int
    files_written: int
    files_removed: int


@dataclass(frozen=True)
class Builder:
    """Builds the site of a data repository into a folder; its fields are its tunables.

    `workers`: processes that share the boards to render, where there are at least
    `parallel_min` of them (fewer are not worth starting processes for), `chunk` boards
    per task (small enough to keep every process busy). `link`: each run's JSON is a hard
    link to the data repository's file where both folders are on one file system, only
    for a checkout that is not rewritten in place afterwards, as a link shares the file.
    `settled_ns`: an input file changed less than this long before a build is read by the
    next build whatever its stat says, as a later change could keep the same size and
    time. `pause_collector`: Python's cycle collector is off for the build (see
    `collector_paused`). `writer`: the class that writes the files; `files`: the class
    that reads the data repository's.
    """

    config: SiteConfig = field(default_factory=SiteConfig)
    workers: int = 1
    link: bool = True
    settled_ns: int = 2_000_000_000
    parallel_min: int = 16
    chunk: int = 2
    pause_collector: bool = True
    writer: type[Writer] = Writer
    files: type[DataFiles] = DataFiles

    def build(self, data_repo: Path, out: Path, *, full: bool = False) -> BuildReport:
        """Build the site of the data repository at `data_repo` into `out`: only what
        changed since the last build into `out`, unless `full`."""
        files = read_data_repo(data_repo, self.files)
        with collector_paused() if self.pause_collector else nullcontext():
            return _Build(self, files, out, data_repo if self.link else None).run(full)


def build_site(
    data_repo: Path,
    out: Path,
    config: SiteConfig | None = None,
    *,
    full: bool = False,
    workers: int = 1,
    link: bool = True,
) -> BuildReport:
    """Build the site of the data repository at `data_repo` into `out` with a `Builder` of
    these settings and the others' defaults."""
    builder = Builder(config or SiteConfig(), workers=workers, link=link)
    return builder.build(data_repo, out, full=full)


@contextmanager
def collector_paused() -> Iterator[None]:
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


@dataclass
class _Build:
    """One build: the builder's settings, the data repository's files, where it writes
    and the checkout to link records from (None: no links)."""

    builder: Builder
    files: DataFiles
    out: Path
    data_repo: Path | None

    def run(self, full: bool) -> BuildReport:
        files, out = self.files, self.out
        paths = input_units(files)
        # Taken before any file is read: a file changed after its stat shows as changed.
        stats = self._stat_digests(paths)
        site = parse_site(files, paths)
        builder = builder_digest(self.builder.config)
        names = [*(f"board:{slug}" for slug in site.boards), GLOBAL]
        previous = BuildState.read(out)
        full = full or previous.builder != builder or not previous.units
        digests: dict[str, str] = {}
        if full:
            # Every unit is rendered: no digest decides anything before, and each board's
            # is taken where it is rendered, from the files read for its pages.
            dirty = names
        else:
            digests = _input_digests(site, previous.known_digests(stats))
            wanted = _unit_digests(site, names, digests)
            dirty = [u for u in names if previous.units.get(u) != wanted[u]]
        gone = [u for u in previous.outputs if u not in names]
        # Until this build finishes, its dirty units count as never rendered: a build that
        # stops half-way is redone, not trusted.
        kept = {u: d for u, d in previous.units.items() if u in names and u not in dirty}
        BuildState(previous.builder, kept, previous.outputs, previous.stats).save(out)

        outputs = {u: paths for u, paths in previous.outputs.items() if u in names}
        rendered = self._render_units(site, dirty)
        outputs.update(rendered.outputs)
        digests.update(rendered.digests)
        removed = self.builder.writer(out).remove(
            path
            for unit in [*dirty, *gone]
            for path in sorted(set(previous.outputs.get(unit, [])) - set(outputs.get(unit, [])))
        )
        inputs = _input_digests(site, digests)
        units = _unit_digests(site, names, inputs)
        known = {unit: [stat, inputs[unit]] for unit, stat in stats.items()}
        BuildState(builder, units, outputs, known).save(out)
        return BuildReport(full, len(dirty), rendered.written, removed)

    def _stat_digests(self, inputs: Mapping[str, list[str]]) -> dict[str, str]:
        """Each input's stat digest, where its files are settled (see `Builder`)."""
        settled_before = time.time_ns() - self.builder.settled_ns
        found = {}
        for unit, paths in inputs.items():
            stat = self.files.stat_digest(paths, settled_before)
            if stat is not None:
                found[unit] = stat
        return found

    def _render_units(self, site: SiteData, units: Sequence[str]) -> _Rendered:
        """Render and write the units: the boards in forked processes where there are
        enough of them and it is safe to fork, the global pages here meanwhile."""
        boards = [u for u in units if u != GLOBAL]
        workers, size = self.builder.workers, self.builder.chunk
        if workers < 2 or len(boards) < self.builder.parallel_min or not can_fork():
            return self._render_serial(site, units)
        chunks = [boards[i : i + size] for i in range(0, len(boards), size)]
        here, there = fork_map(
            lambda chunk: self._render_serial(site, chunk),
            chunks,
            workers,
            lambda: self._render_serial(site, [u for u in units if u == GLOBAL]),
        )
        for chunk in there:
            here.add(chunk)
        return here

    def _render_serial(self, site: SiteData, units: Sequence[str]) -> _Rendered:
        writer = self.builder.writer(self.out, self.data_repo)
        rendered = _Rendered()
        config = self.builder.config
        for unit in units:
            rendered.outputs[unit] = writer.write_all(_render_unit(site, unit, config))
            if unit != GLOBAL:
                rendered.digests[unit] = site.input_digest(unit)
        rendered.written = writer.written
        return rendered


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


def _render_unit(site: SiteData, unit: str, config: SiteConfig) -> Iterator[File]:
    if unit == GLOBAL:
        yield from _global_files(site, config)
        return
    for board_page in board_pages(site, unit.removeprefix("board:"), config):
        yield from _page_files(board_page)


def _global_files(site: SiteData, config: SiteConfig) -> Iterator[File]:
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


def _page_files(each: Page) -> Iterator[File]:
    yield each.path, render_html(each), None
    yield each.json_path, render_json(each), each.json_source
