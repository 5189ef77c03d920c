"""An S3-compatible server on this machine, for tests and benchmarks: moto's standalone
server (`moto[server]`, a dev dependency) as its own process on a free loopback port.

    with moto_s3() as endpoint:    # http://127.0.0.1:PORT, stopped on leaving
        ...

moto keeps its objects in memory and takes any credentials; `test_credentials` are the
ones the tests and benchmarks hand boto3.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

START_SECONDS = 30.0
LISTENING = re.compile(r"Running on (http://127\.0\.0\.1:\d+)")
TEST_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "hbench-test-key",
    "AWS_SECRET_ACCESS_KEY": "hbench-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@contextlib.contextmanager
def moto_s3() -> Iterator[str]:
    """Start moto's server on 127.0.0.1 and a port the system picks; yield its address."""
    with tempfile.TemporaryDirectory(prefix="moto-") as scratch:
        # Its log goes to a file, never a pipe nobody reads: a full pipe would stall it.
        log_path = Path(scratch) / "moto.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            yield wait_until_listening(process, log_path)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_until_listening(process: subprocess.Popen[bytes], log_path: Path) -> str:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        found = LISTENING.search(log_path.read_text(errors="replace"))
        if found:
            return found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError(
        f"moto's S3 server did not start within {START_SECONDS:.0f} s "
        f"(exit {process.poll()}): {log_path.read_text(errors='replace')[-2000:]}"
    )
