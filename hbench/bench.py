"""The client side of Your bench: list, show, publish, withdraw and delete jobs over the
service's `/api/bench/jobs` endpoints.

Refusals come back as the service's envelope; each problem keeps the service's own rule
code (`hbench.service`), so the CLI prints the service's detail and its code.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from hbench.errors import HbenchError
from hbench.service import ServiceClient

JOBS_PATH = "/api/bench/jobs"
REGRADE_PENDING = "regrade-pending"
DEFAULT_REGRADE_WAIT = 600.0
"""How long `hbench bench publish` waits for the service's regrade of a job by default."""
FIRST_PAUSE, MAX_PAUSE = 1.0, 15.0


@dataclass(frozen=True)
class Bench(ServiceClient):
    """Your bench on one service, with the API token to send, if any (a local service
    signs in its local user for requests from this machine)."""

    unreachable_code = "bench-unreachable"
    refused_code = "bench-refused"

    def jobs(self, limit: int = 100) -> list[dict[str, Any]]:
        jobs: list[dict[str, Any]] = self.call("GET", f"{JOBS_PATH}?limit={limit}")["jobs"]
        return jobs

    def job(self, job_id: str) -> dict[str, Any]:
        return self._dict(self.call("GET", job_path(job_id)))

    def publish(self, job_id: str, board: str | None = None) -> dict[str, Any]:
        body = {"board": board} if board is not None else None
        return self._dict(self.call("POST", f"{job_path(job_id)}/publish", body))

    def publish_when_regraded(
        self,
        job_id: str,
        board: str | None = None,
        *,
        wait: float = DEFAULT_REGRADE_WAIT,
        waiting: Callable[[], None] = lambda: None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> dict[str, Any]:
        """Publish, waiting up to `wait` seconds while the service regrades the job
        (`regrade-pending`); `waiting` is called once, when the first wait begins."""
        deadline = time.monotonic() + wait
        pause = FIRST_PAUSE
        while True:
            try:
                return self.publish(job_id, board)
            except HbenchError as error:
                if error.code != REGRADE_PENDING or time.monotonic() + pause > deadline:
                    raise
            if pause == FIRST_PAUSE:
                waiting()
            sleep(pause)
            pause = min(pause * 2, MAX_PAUSE)

    def withdraw(self, job_id: str) -> dict[str, Any]:
        return self._dict(self.call("POST", f"{job_path(job_id)}/withdraw"))

    def delete(self, job_id: str, confirm: str) -> dict[str, Any]:
        return self._dict(self.call("DELETE", job_path(job_id), {"confirm": confirm}))

    @staticmethod
    def _dict(value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}


def job_path(job_id: str) -> str:
    return f"{JOBS_PATH}/{quote(job_id, safe='')}"
