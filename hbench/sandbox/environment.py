"""A Harbor environment that runs each trial in a bubblewrap sandbox of its own.

The sandbox builds its own root: the host's `/usr` and `/etc` read-only, a
fresh `/proc`, `/dev` and `/tmp`, and read-write binds of the trial's sandbox
folder onto the container paths (`/app`, `/logs`, `/tests`, `/solution`,
`/root`), and no network at all. Nothing is written outside that folder and the job folder. See
`../shared/reference/harbor.md`, section 6, for why this works.

The task's `environment/Dockerfile` is not built: the sandbox offers the host's
tools, which is enough for the demo dataset's shell tasks.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities

from hbench.errors import HbenchError

# Top-level container folders the sandbox keeps between commands, as a real container would.
PERSISTENT_DIRS = ("app", "logs", "tests", "solution", "root", "tmp", "installed-agent")
# Host folders visible read-only inside the sandbox; every other path is the sandbox's own.
HOST_READ_ONLY = ("/usr", "/etc", "/opt")
HOST_SYMLINKS = {"/bin": "usr/bin", "/sbin": "usr/sbin", "/lib": "usr/lib", "/lib64": "usr/lib64"}
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
EXIT_TIMEOUT = 124


def bwrap_binary() -> str:
    """The path of `bwrap`, or an error that says what to install."""
    found = shutil.which("bwrap")
    if found is None:
        raise HbenchError(
            "sandbox-unavailable",
            "the sandbox needs bubblewrap; install it (Debian: apt-get install bubblewrap)",
        )
    return found


class BubblewrapEnvironment(BaseEnvironment):
    """Harbor's environment contract over a per-trial bubblewrap sandbox."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._bwrap = bwrap_binary()
        self._made_root: Path | None = None
        super().__init__(*args, **kwargs)

    @property
    def _root(self) -> Path:
        """The sandbox's folder, made when first used: Harbor also makes environments it
        never starts (a regrade made some twenty per three jobs), and a folder made with
        each would stay behind, since only a started one is stopped."""
        if self._made_root is None:
            self._made_root = Path(tempfile.mkdtemp(prefix="hbench-sandbox-"))
        return self._made_root

    @staticmethod
    def type() -> str:
        return "hbench-bubblewrap"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(disable_internet=True)

    def _validate_definition(self) -> None:
        # The Dockerfile is not built here; a task folder is all the sandbox needs.
        return None

    # --- lifecycle -------------------------------------------------------------

    async def start(self, force_build: bool) -> None:
        for name in PERSISTENT_DIRS:
            (self._root / name).mkdir(parents=True, exist_ok=True)
        for name in ("agent", "verifier", "artifacts"):
            (self._root / "logs" / name).mkdir(parents=True, exist_ok=True)

    async def stop(self, delete: bool) -> None:
        if delete and self._made_root is not None:
            shutil.rmtree(self._made_root, ignore_errors=True)

    # --- files -----------------------------------------------------------------

    def host_path(self, container_path: str) -> Path:
        """Where a container path lives on the host, inside this sandbox's folder."""
        parts = PurePosixPath(container_path).parts
        if len(parts) < 2 or parts[0] != "/" or ".." in parts:
            raise ValueError(f"not an absolute container path: {container_path!r}")
        return self._root.joinpath(*parts[1:])

    async def upload_file(self, source_path: Path | str, target_path: str) -> None:
        target = self.host_path(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path, target)

    async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
        shutil.copytree(source_dir, self.host_path(target_dir), dirs_exist_ok=True, symlinks=True)

    async def download_file(self, source_path: str, target_path: Path | str) -> None:
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self.host_path(source_path), target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
        source = self.host_path(source_dir)
        if source.is_dir():
            shutil.copytree(source, target_dir, dirs_exist_ok=True, symlinks=True)

    # --- commands --------------------------------------------------------------

    def bwrap_argv(self, command: str, cwd: str | None) -> list[str]:
        """The full bubblewrap command line for one shell command."""
        # No network, whatever the task asks for: the sandbox runs the demo and the
        # service's regrades of uploaded outputs, and neither needs to reach anything.
        argv = [self._bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net"]
        for host_dir in HOST_READ_ONLY:
            if Path(host_dir).is_dir():
                argv += ["--ro-bind", host_dir, host_dir]
        for link, target in HOST_SYMLINKS.items():
            argv += ["--symlink", target, link]
        argv += ["--proc", "/proc", "--dev", "/dev"]
        for child in sorted(self._root.iterdir()):
            if child.is_dir():
                argv += ["--bind", str(child), f"/{child.name}"]
        workdir = cwd or self.task_env_config.workdir or "/app"
        argv += ["--chdir", workdir, "--clearenv"]
        return [*argv, "bash", "-c", command]

    def _command_env(self, env: dict[str, str] | None) -> dict[str, str]:
        merged = self._merge_env(env) or {}
        return {"PATH": SANDBOX_PATH, "HOME": "/root", "LANG": "C.UTF-8", **merged}

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        argv = self.bwrap_argv(command, cwd)
        for key, value in self._command_env(env).items():
            argv[-3:-3] = ["--setenv", key, value]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=timeout_sec)
        except TimeoutError:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            return ExecResult(stdout=None, stderr="timed out", return_code=EXIT_TIMEOUT)
        return ExecResult(
            stdout=stdout.decode(errors="replace"),
            stderr=stderr.decode(errors="replace"),
            return_code=process.returncode if process.returncode is not None else -1,
        )
