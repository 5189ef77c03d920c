"""Running git for the data repository: argument lists, a fixed identity, a clean
environment, and credentials passed per command, never stored.

Each command gets an environment built from nothing: the shell's `GIT_DIR`, the user's
`~/.gitconfig`, hooks and credential helpers can't reach it, and the repository is named
with `--git-dir`, so a missing checkout fails instead of git searching parent folders
for another repository. In GitHub mode the installation token goes in an
`http.extraHeader`, set for one command through `GIT_CONFIG_*` variables (what `git -c`
does, minus the process table, which every local user can read); it is never in a URL,
never in `.git/config`, never logged, and removed from git's output before any error
carries it.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from hbench.errors import HbenchError

AUTHOR_NAME = "hbench"
AUTHOR_EMAIL = "hbench@localhost"
REDACTED = "[REDACTED]"
TIMEOUT_SECONDS = 300.0

# Settings every command runs with, whatever the repository's own config says.
BASE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),  # no hook of a checkout runs in the service
    ("credential.helper", ""),  # no helper stores or offers a token
    ("commit.gpgSign", "false"),
    ("core.autocrlf", "false"),
    ("core.quotePath", "false"),
    ("init.defaultBranch", "main"),
    # Housekeeping runs inside the command that triggers it, not detached in the
    # background where a crash or a shutdown would leave it half done.
    ("gc.autoDetach", "false"),
)


class TokenProvider(Protocol):
    """Where GitHub mode gets the token it pushes with (the GitHub App implements it)."""

    def installation_token(self) -> str:
        """An installation token that may write the data repository's contents, fresh
        enough for one git command. Raises `HbenchError("datarepo-token-unavailable")`
        when none can be had."""
        ...


@dataclass(frozen=True)
class Remote:
    """The data repository the writer pushes to: a local path, or an HTTPS URL whose
    requests carry an installation token."""

    url: str
    tokens: TokenProvider | None = None
    local_dir: Path | None = None  # local mode: the bare repository, made on first use


@dataclass(frozen=True)
class GitResult:
    code: int
    stdout: str
    stderr: str


class Git:
    """git in one repository: a bare one (`work_tree` None) or a checkout."""

    def __init__(self, git_dir: Path, work_tree: Path | None = None) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree

    def run(
        self,
        *args: str,
        remote: Remote | None = None,
        stdin: str | None = None,
        check: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> GitResult:
        """Run `git <args>`; with `remote`, the command may talk to it (a token is fetched).

        Raises `datarepo-git-failed` with git's own message, secrets removed, when the
        command fails and `check` is set.
        """
        location = ["--git-dir", str(self.git_dir)]
        if self.work_tree is not None:
            location += ["--work-tree", str(self.work_tree)]
        cwd = self.work_tree or self.git_dir
        return _run(location, args, cwd, remote=remote, stdin=stdin, check=check, env=env)


def clone(remote: Remote, dest: Path) -> None:
    """Clone the remote's `main` into `dest` (new or empty), with `origin` set to its URL.

    The one command not pointed at a repository with `--git-dir`: `clone` makes its own.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    args = ["clone", "-q", "--no-tags", "--single-branch", "--branch", "main", remote.url]
    _run([], [*args, str(dest)], dest.parent, remote=remote)


def _run(
    location: Sequence[str],
    args: Sequence[str],
    cwd: Path,
    *,
    remote: Remote | None = None,
    stdin: str | None = None,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> GitResult:
    secrets = _Secrets()
    config = list(BASE_CONFIG)
    if remote is not None and remote.tokens is not None:
        header = secrets.header_for(remote.tokens.installation_token())
        config.append(("http.extraHeader", header))
    try:
        completed = subprocess.run(
            [git_executable(), *location, *args],
            cwd=cwd,
            env={**clean_environment(cwd), **_config_env(config), **(env or {})},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        message = f"git {args[0]} in {cwd} took longer than {TIMEOUT_SECONDS:.0f} s"
        raise HbenchError("datarepo-git-failed", message) from None
    result = GitResult(
        completed.returncode, secrets.redact(completed.stdout), secrets.redact(completed.stderr)
    )
    if check and result.code != 0:
        raise git_failed(args[0], cwd, result)
    return result


def git_failed(subcommand: str, cwd: Path, result: GitResult) -> HbenchError:
    """The error for a failed command: its subcommand (never its arguments, which may hold
    a URL) and the end of git's own message, already redacted."""
    said = " ".join(line.strip() for line in result.stderr.strip().splitlines()[-6:])
    message = f"git {subcommand} failed in {cwd} (exit {result.code}): {said or 'no message'}"
    return HbenchError("datarepo-git-failed", message)


def git_executable() -> str:
    found = shutil.which("git")
    if found is None:
        raise HbenchError("datarepo-git-failed", "git is not installed (apt-get install git)")
    return found


def clean_environment(cwd: Path) -> dict[str, str]:
    """An environment holding only what git needs: nothing inherited from the shell."""
    return {
        "PATH": os.pathsep.join([str(Path(git_executable()).parent), os.defpath]),
        "LC_ALL": "C",
        "HOME": str(cwd),  # never read: global config is /dev/null; git only wants it set
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CEILING_DIRECTORIES": str(cwd.resolve().parent),
        "GIT_AUTHOR_NAME": AUTHOR_NAME,
        "GIT_AUTHOR_EMAIL": AUTHOR_EMAIL,
        "GIT_COMMITTER_NAME": AUTHOR_NAME,
        "GIT_COMMITTER_EMAIL": AUTHOR_EMAIL,
    }


def _config_env(config: Sequence[tuple[str, str]]) -> dict[str, str]:
    env = {"GIT_CONFIG_COUNT": str(len(config))}
    for n, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return env


def basic_auth_header(token: str) -> str:
    """The header git sends for an installation token, as actions/checkout does."""
    credentials = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return f"Authorization: Basic {credentials}"


class _Secrets:
    """The secrets one command was given, to scrub from whatever it prints."""

    def __init__(self) -> None:
        self._values: list[str] = []

    def header_for(self, token: str) -> str:
        if not token.strip():
            raise HbenchError("datarepo-token-unavailable", "the installation token is empty")
        header = basic_auth_header(token)
        # The token itself, and its base64 form as it travels in the header.
        self._values += [token, header.removeprefix("Authorization: Basic ")]
        return header

    def redact(self, text: str) -> str:
        for value in self._values:
            text = text.replace(value, REDACTED)
        return text
