"""A real sealed job made large: each trial given a recording of its agent's terminal, of
random bytes (so the archive is as large packed as unpacked, and redaction reads no text
in it), then sealed again. Uploads in parts are tested and measured with it.
"""

from __future__ import annotations

import os
from pathlib import Path

from hbench.jobs.sealing import seal

MIB = 1024 * 1024
WRITE_CHUNK = 8 * MIB
RECORDING = Path("agent") / "terminal-recording.bin"


def trials(job_dir: Path) -> list[Path]:
    return sorted(p for p in job_dir.iterdir() if (p / "result.json").is_file())


def pad_job(job_dir: Path, extra_bytes: int) -> None:
    """Add about `extra_bytes` of recordings over the job's trials, and seal it again
    with the spec digest it was sealed with."""
    folders = trials(job_dir)
    each = -(-extra_bytes // len(folders))
    for trial in folders:
        target = trial / RECORDING
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as out:
            left = each
            while left > 0:
                piece = min(left, WRITE_CHUNK)
                out.write(os.urandom(piece))
                left -= piece
    seal(job_dir)
