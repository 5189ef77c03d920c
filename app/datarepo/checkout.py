"""The writer's working checkout of the data repository, and the remote it pushes to.

The checkout is disposable: every batch starts by fetching the remote and resetting to
its head, so whatever a crash left behind (files half written, a commit never pushed) is
thrown away. Only the remote's history counts, and its commits' trailers say which
changes it holds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from app.datarepo.changes import TRAILER, Needs
from app.datarepo.git import Git, Remote, clone, git_failed
from app.datarepo.repo_init import ensure_local_data_repository
from hbench.errors import HbenchError
from registry.datarepo.state import RepoState

BRANCH = "main"
STALE_LOCK_SECONDS = 2.0
TRACKING = f"refs/remotes/origin/{BRANCH}"


class Checkout:
    """A working checkout at `path` of the data repository at `remote`."""

    def __init__(self, path: Path, remote: Remote) -> None:
        self.path = path
        self.remote = remote
        self.git = Git(path / ".git", path)
        # Whether the working tree is known to equal HEAD (it is after a push of ours);
        # until then `sync` resets and cleans it.
        self._pristine = False
        self.last_refusal = ""  # git's words for the last push the remote refused

    def ensure(self) -> None:
        """Clone on first use; later, point `origin` at the configured remote and clear
        the lock files a killed git left. Call it holding the writer lock (`lock.py`):
        no other git may be running in this checkout then."""
        if self.create():
            return
        self._clear_stale_locks()
        self._clear_stale_remote_locks()
        # The URL alone goes in .git/config: a token never does (git.py).
        self.git.run("config", "remote.origin.url", self.remote.url)

    def create(self) -> bool:
        """Make the checkout (and, in local mode, the repository) unless it exists.
        Returns whether it was made now; safe without the writer lock."""
        if self.remote.local_dir is not None:
            ensure_local_data_repository(self.remote.local_dir)
        if self.path.exists() and any(self.path.iterdir()):
            if not (self.path / ".git").is_dir():
                message = (
                    f"{self.path} holds files but is not a git checkout; move it away and "
                    "the writer will clone the data repository there"
                )
                raise HbenchError("datarepo-checkout-invalid", message, path=str(self.path))
            return False
        # Cloned beside it and renamed into place, so a crash never leaves half a clone
        # where the checkout belongs (a later `ensure` removes the leftover).
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.clone-", dir=self.path.parent))
        try:
            clone(self.remote, scratch / "checkout")
            (scratch / "checkout").rename(self.path)
        except OSError:
            if not (self.path / ".git").is_dir():
                raise
            return False  # another process made it first
        finally:
            shutil.rmtree(scratch)
        self._pristine = True
        return True

    def sync(self) -> str:
        """Fetch the remote's branch and make the checkout exactly its head; returns it."""
        self._fetch()
        heads = self.git.run("rev-parse", "HEAD", TRACKING, check=False)
        head, _, remote_head = heads.stdout.strip().partition("\n")
        if heads.code != 0 or head != remote_head or not self._pristine:
            self._reset()
            remote_head = self.head()
        return remote_head

    def _fetch(self) -> None:
        self.git.run(
            "fetch", "-q", "--no-tags", "origin", f"+refs/heads/{BRANCH}:{TRACKING}",
            remote=self.remote,
        )  # fmt: skip

    def _reset(self) -> None:
        self.git.run("checkout", "-q", "-f", "-B", BRANCH, TRACKING)
        self.git.run("clean", "-q", "-f", "-d")
        self._pristine = True

    def head(self) -> str:
        return self.git.run("rev-parse", "HEAD").stdout.strip()

    def landed(self, *, since: datetime | None = None, after: str | None = None) -> set[str]:
        """The change ids named by the trailers of the remote's commits: those made since
        a time, or those after a commit (`after..origin/main`)."""
        revisions = [f"{after}..{TRACKING}" if after else TRACKING]
        if since is not None:
            revisions.insert(0, f"--since={since.isoformat()}")
        out = self.git.run(
            "log", f"--format=%(trailers:key={TRAILER},valueonly)", *revisions
        ).stdout
        return {line.strip() for line in out.splitlines() if line.strip()}

    def read(self, needs: Needs) -> RepoState:
        """The files a batch needs, from the working tree (which `sync` made the remote's)."""
        files: dict[str, str] = {}
        for folder in needs.folders:
            # os.walk lists names without a stat per file, which counts at 10,000 runs.
            for here, _dirs, names in os.walk(self.path / folder):
                rel = Path(here).relative_to(self.path).as_posix()
                for name in names:
                    files[f"{rel}/{name}"] = Path(here, name).read_text(encoding="utf-8")
        for path in needs.files:
            target = self.path / path
            if target.is_file():
                files[path] = target.read_text(encoding="utf-8")
        return RepoState(files)

    def write(self, changes: Mapping[str, str | None]) -> None:
        """Write a state's diff to the working tree: new text, or None to remove a file."""
        self._pristine = False
        root = self.path.resolve()
        for path, text in changes.items():
            target = (root / path).resolve()
            if not target.is_relative_to(root) or target == root or ".git" in Path(path).parts:
                message = f"a change tried to write {path!r}, outside the repository's files"
                raise HbenchError("datarepo-change-invalid", message, path=path)
            if text is None:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8", newline="")

    def commit(self, paths: Iterable[str], message: str) -> str:
        """Commit exactly these paths (written or removed) with `message`; returns the sha."""
        self.git.run(
            "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
            stdin="\0".join(paths), env={"GIT_LITERAL_PATHSPECS": "1"},
        )  # fmt: skip
        self.git.run("commit", "-q", "--no-verify", "-F", "-", stdin=message)
        return self.head()

    def push(self) -> bool:
        """Push the checkout's head to the remote's branch. False when the remote refused
        it because it moved (someone else pushed); any other failure raises."""
        result = self.git.run(
            "push", "--porcelain", "--no-verify", "origin", f"HEAD:refs/heads/{BRANCH}",
            remote=self.remote, check=False,
        )  # fmt: skip
        if result.code == 0:
            self._pristine = True
            return True
        said = result.stdout + result.stderr
        if "[rejected]" in said or "[remote rejected]" in said:
            # The porcelain line says why: `[rejected] (fetch first)` when the branch moved.
            refused = [line for line in said.splitlines() if "rejected]" in line]
            self.last_refusal = " ".join(refused[-1].split()) if refused else said.strip()
            self._clear_stale_remote_locks()
            return False
        raise git_failed("push", self.path, result)

    def _clear_stale_remote_locks(self) -> None:
        # Local mode's bare repository is the service's own, pushed to by its writer alone.
        # A crash of the machine kills the receiving end of a push too, and a ref lock it
        # held would refuse every later push; a live push holds one for milliseconds, so
        # one older than that is a leftover.
        bare = self.remote.local_dir
        if bare is None:
            return
        now = time.time()
        for lock in [*bare.glob("*.lock"), *(bare / "refs").rglob("*.lock")]:
            with contextlib.suppress(FileNotFoundError):
                if now - lock.stat().st_mtime > STALE_LOCK_SECONDS:
                    lock.unlink()

    def _clear_stale_locks(self) -> None:
        # A killed git leaves `index.lock` and ref locks behind, and every later command
        # would stop at them. Under the writer lock, no git of ours runs here any more.
        for leftover in self.path.parent.glob(f".{self.path.name}.clone-*"):
            shutil.rmtree(leftover)  # a clone a crash interrupted
        git_dir = self.path / ".git"
        for lock in [*git_dir.glob("*.lock"), *(git_dir / "refs").rglob("*.lock")]:
            lock.unlink(missing_ok=True)
