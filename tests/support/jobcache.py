"""Real Harbor jobs made once per machine and kept in a cache, keyed by what makes them.

A job depends on Harbor's version, the demo dataset, the sandbox environment, the test
agents, this module and the recipe (its name and `harbor run` flags); the key is a digest
of all of them, so a change to any one makes a new job. A file lock per key lets pytest-xdist's
workers (and their threads, and other sessions) build each job once; the others wait and
then read it.

Tests never see the cache itself. `checkout` copies a cached job into the session's own
folder and moves the absolute paths Harbor recorded (the dataset's tasks, the registry, the
trials' URIs) to where the copy and the session's dataset are, so the copy reads as if
Harbor had run it there: `harbor job resume` works on it, and a spec naming the session's
registry equals its config.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import os
import re
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import hbench.sandbox
import registry.demo

ROOT = Path(__file__).resolve().parents[2]
CACHE_ENV = "HBENCH_TEST_CACHE"
"""Where the cache lives when set; else `$XDG_CACHE_HOME/hbench-tests`, else
`~/.cache/hbench-tests`. Delete the folder to make every job again."""

META = "meta.json"
PRUNE_AFTER_SECONDS = 14 * 24 * 3600
"""A cached job no session has read for two weeks is removed (`JobCache.prune`)."""
BUILD_ROOT = "root"
BUILD_DATASET = "dataset"
MATERIALIZED = {"tasks", "registry.json"}
"""What `registry.demo.materialize` writes in a dataset's folder."""

Build = Callable[[Path, Path], Path]
"""Makes a job: given an empty root folder and a demo registry.json, runs Harbor below the
root and returns the job's folder (which must lie below the root)."""


def cache_folder() -> Path:
    if explicit := os.environ.get(CACHE_ENV):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hbench-tests"


def tree_digest(*folders: Path, suffixes: tuple[str, ...] = ()) -> str:
    """SHA-256 over the relative paths and contents of every file below the folders."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            if suffixes and path.suffix not in suffixes:
                continue
            digest.update(str(path.relative_to(folder.parent)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def inputs() -> dict[str, str]:
    """Everything, beside a recipe, that changes what a real job holds."""
    return {
        "harbor": version("harbor"),
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "demo_dataset": tree_digest(registry.demo.HERE),
        "sandbox": tree_digest(Path(hbench.sandbox.__file__).parent, suffixes=(".py",)),
        "test_agents": file_digest(ROOT / "tests" / "data" / "agents.py"),
        "job_cache": file_digest(Path(__file__)),
    }


@dataclass(frozen=True)
class Entry:
    """A finished cached job: its folder in the cache and the paths its files name."""

    folder: Path

    @property
    def meta(self) -> dict[str, str]:
        data: dict[str, str] = json.loads((self.folder / META).read_text())
        return data

    @property
    def job(self) -> Path:
        """The cached job itself, to read and never to change."""
        return self.folder / BUILD_ROOT / self.meta["job"]

    def checkout(self, dest_root: Path, dataset: Path) -> Path:
        """Copy the cached root into `dest_root` (merging with what is there) and return the
        copy of the job. Paths into the build's dataset now name `dataset` (the folder of
        a materialised demo registry); paths into the build's root name `dest_root`.

        What the run left beside the dataset's tasks (the test agents' markers of the tasks
        they met, kept per job id) is added to `dataset` too, so a resumed copy remembers."""
        meta = self.meta
        moves = [(meta["dataset"], str(dataset)), (meta["root"], str(dest_root))]
        copy_moved(self.folder / BUILD_ROOT, dest_root, moves)
        for left in (self.folder / BUILD_DATASET).iterdir():
            if left.name in MATERIALIZED:
                continue
            if left.is_dir() and not left.is_symlink():
                copy_moved(left, dataset / left.name, moves)
            else:
                shutil.copy2(left, dataset / left.name, follow_symlinks=False)
        return dest_root / meta["job"]


class JobCache:
    """The machine's cache of real Harbor jobs."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or cache_folder()
        self._inputs = inputs()

    def key(self, recipe: str, flags: tuple[str, ...], build: Build) -> str:
        """The digest of everything that makes the job, the build function's source too."""
        described = {
            **self._inputs,
            "recipe": recipe,
            "flags": list(flags),
            "build": hashlib.sha256(inspect.getsource(build).encode()).hexdigest(),
        }
        return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()

    def get(self, recipe: str, flags: tuple[str, ...], build: Build) -> Entry:
        """The cached job of a recipe, built first (once, under a lock) if missing."""
        key = self.key(recipe, flags, build)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in recipe)[:60]
        entry = Entry(self.folder / f"{safe}-{key[:20]}")
        self.folder.mkdir(parents=True, exist_ok=True)
        with _locked(self._lock(entry.folder)):
            if not (entry.folder / META).is_file():
                self._make(entry, recipe, flags, build)
            os.utime(entry.folder / META)  # read now: `prune` keeps it
        return entry

    def _make(self, entry: Entry, recipe: str, flags: tuple[str, ...], build: Build) -> None:
        """Build the job in a staging folder and move it into place whole (under the lock)."""
        for stale in self.folder.glob(f".build-{entry.folder.name}-*"):
            shutil.rmtree(stale, ignore_errors=True)
        staging = self.folder / f".build-{entry.folder.name}-{secrets.token_hex(4)}"
        try:
            self._build(staging, recipe, flags, build)
            staging.rename(entry.folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def prune(self, unread_for: float = PRUNE_AFTER_SECONDS) -> list[str]:
        """Remove the jobs no session has read for `unread_for` seconds (what made them
        has moved on: another Harbor, dataset or test agent); returns their names."""
        cutoff = time.time() - unread_for
        pruned = []
        for meta in sorted(self.folder.glob(f"*/{META}")):
            if meta.stat().st_mtime >= cutoff:
                continue
            with _locked(self._lock(meta.parent)):
                if meta.is_file() and meta.stat().st_mtime < cutoff:
                    shutil.rmtree(meta.parent)
                    pruned.append(meta.parent.name)
        return pruned

    def _lock(self, entry_folder: Path) -> Path:
        return self.folder / f".{entry_folder.name}.lock"

    def _build(self, staging: Path, recipe: str, flags: tuple[str, ...], build: Build) -> None:
        root = staging / BUILD_ROOT
        root.mkdir(parents=True)
        dataset = registry.demo.materialize(staging / BUILD_DATASET)
        job = build(root, dataset)
        meta = {
            "recipe": recipe,
            "flags": json.dumps(list(flags)),
            "job": str(job.relative_to(root)),
            "root": str(root),
            "dataset": str(dataset.parent),
            **self._inputs,
        }
        (staging / META).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on a file: held by one open file, so threads exclude each other too."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def copy_moved(source: Path, dest: Path, moves: list[tuple[str, str]]) -> None:
    """Copy a folder, replacing each `old` path with its `new` one in file contents and
    symlink targets. The longest old path is replaced first, so a path below another moves
    with its own rule."""
    ordered = sorted(((o.encode(), n.encode()) for o, n in moves), key=lambda m: -len(m[0]))

    def moved(data: bytes) -> bytes:
        for old, new in ordered:
            data = data.replace(old, new)
        return data

    for folder, dirnames, filenames in os.walk(source):
        here = Path(folder)
        there = dest / here.relative_to(source)
        there.mkdir(parents=True, exist_ok=True)
        for name in [*dirnames, *filenames]:
            path = here / name
            target = there / name
            if path.is_symlink():
                link = os.fsencode(path.readlink())
                target.symlink_to(os.fsdecode(moved(link)))
            elif path.is_file():
                data = path.read_bytes()
                changed = moved(data)
                if changed == data:
                    shutil.copy2(path, target)
                else:
                    target.write_bytes(changed)
                    shutil.copystat(path, target)


TRIAL_SUFFIX = re.compile(r"__[A-Za-z0-9]{7}\b")
"""The random part of a trial's name (`hello-file__KaVVE7E`), different in every run."""


def shape(job: Path) -> dict[str, list[str]]:
    """What a job holds apart from its values: each file (trials named by their task), with
    the paths of the fields of a JSON file, recursively; the attempts of a task merge."""
    files: dict[str, set[str]] = {}
    for path in sorted(job.rglob("*")):
        if path.is_file():
            name = TRIAL_SUFFIX.sub("", str(path.relative_to(job)))
            fields = _fields(json.loads(path.read_text())) if path.suffix == ".json" else ()
            files.setdefault(name, set()).update(TRIAL_SUFFIX.sub("", f) for f in fields)
    return {name: sorted(fields) for name, fields in sorted(files.items())}


def _fields(value: object, prefix: str = "") -> Iterator[str]:
    if isinstance(value, Mapping):
        for name, inner in value.items():
            path = f"{prefix}.{name}" if prefix else str(name)
            yield path
            yield from _fields(inner, path)
    elif isinstance(value, list):
        for inner in value:
            yield from _fields(inner, f"{prefix}[]")
