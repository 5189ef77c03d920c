"""Creating a data repository: git history that starts with the registry's files.

Local mode keeps a bare repository in the state directory as the "remote" the writer
pushes to, the stand-in for the GitHub repository; the writer's checkout is cloned from
it. `create_data_repository` also makes a plain (non-bare) one, for the site and tests.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from app.datarepo.git import Git
from hbench.errors import HbenchError
from registry.datarepo import layout
from registry.loader import DEFAULT_DIR, read_folder

INITIAL_MESSAGE = "Start the data repository with the registry\n"


def initial_files(registry_dir: Path = DEFAULT_DIR) -> dict[str, str]:
    """A new data repository's files: the registry, under `registry/` (the layout's)."""
    return {f"{layout.REGISTRY}/{path}": text for path, text in read_folder(registry_dir).items()}


def create_data_repository(
    path: Path, *, bare: bool, files: Mapping[str, str] | None = None
) -> None:
    """Create a git repository at `path` whose first commit on `main` holds `files` (by
    default the default registry's). Refused when `path` exists and is not empty.

    The repository is built in a temporary folder beside `path` and renamed into place,
    so a crash leaves no half-made repository, and of two processes creating it at once
    one wins and the other's attempt is refused.
    """
    if path.exists() and any(path.iterdir()):
        raise HbenchError("datarepo-exists", f"{path} already holds files", path=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    content = dict(files) if files is not None else initial_files()
    with tempfile.TemporaryDirectory(prefix=f".{path.name}.", dir=path.parent) as scratch:
        building = Path(scratch) / "repo"
        building.mkdir()
        if bare:
            _commit_bare(building, Path(scratch) / "tree", content)
        else:
            _commit_plain(building, content)
        try:
            building.rename(path)
        except OSError:
            raise HbenchError(
                "datarepo-exists", f"{path} was created meanwhile", path=str(path)
            ) from None


def ensure_local_data_repository(remote_dir: Path) -> bool:
    """On first start in local mode, create the bare repository the writer pushes to.
    Returns whether it was created now."""
    if (remote_dir / "HEAD").is_file():
        return False
    try:
        create_data_repository(remote_dir, bare=True)
    except HbenchError:
        if (remote_dir / "HEAD").is_file():  # another process made it first
            return False
        raise
    return True


def _commit_bare(repo: Path, tree: Path, files: Mapping[str, str]) -> None:
    bare = Git(repo)
    bare.run("init", "-q", "--bare")
    # History only moves forward: no force push can drop a published run, no ref deletion.
    bare.run("config", "receive.denyNonFastForwards", "true")
    bare.run("config", "receive.denyDeletes", "true")
    _write(tree, files)
    git = Git(repo, tree)
    # The bare repository gets no index: the commit is staged in the scratch folder's.
    env = {"GIT_INDEX_FILE": str(tree.parent / "index")}
    git.run("add", "-A", env=env)
    git.run("commit", "-q", "--no-verify", "-m", INITIAL_MESSAGE, env=env)
    shutil.rmtree(tree)
    (repo / "COMMIT_EDITMSG").unlink(missing_ok=True)


def _commit_plain(repo: Path, files: Mapping[str, str]) -> None:
    git = Git(repo / ".git", repo)
    git.run("init", "-q")
    _write(repo, files)
    git.run("add", "-A")
    git.run("commit", "-q", "--no-verify", "-m", INITIAL_MESSAGE)


def _write(root: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="")
