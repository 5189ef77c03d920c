"""Running the real `hbench` command in a subprocess, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HBENCH = str(Path(sys.executable).with_name("hbench"))


def hbench(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `hbench` and return its result; the caller checks the exit status."""
    return subprocess.run(
        [HBENCH, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "HARBOR_TELEMETRY": "0", "COLUMNS": "200", **(env or {})},
    )


def write_spec(folder: Path, spec: dict[str, object]) -> Path:
    path = folder / "spec.json"
    path.write_text(json.dumps(spec, indent=2))
    return path
