"""What the Docker tools share: their one error, and running a command that must work."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO


class DockerUnavailableError(RuntimeError):
    """Docker can't run here; the message says why and what would make it run."""


def is_root() -> bool:
    return os.geteuid() == 0


def run(
    argv: Sequence[str], *, timeout: float | None = 600, stdin: IO[bytes] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command; a failure is a `DockerUnavailableError` that quotes its output."""
    try:
        result = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, stdin=stdin, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DockerUnavailableError(f"`{' '.join(argv[:3])}` could not run: {exc}") from None
    if result.returncode != 0:
        output = (result.stderr.strip() or result.stdout.strip())[-2000:]
        raise DockerUnavailableError(f"`{' '.join(argv[:3])}` exited {result.returncode}: {output}")
    return result


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
