"""The client side of Your bench: list, show, publish, withdraw and delete jobs over the
service's `/api/bench/jobs` endpoints.

Refusals come back as the service's envelope; each problem keeps the service's own rule
code (`hbench.service`), so the CLI prints the service's detail and its code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from hbench.service import ServiceClient

JOBS_PATH = "/api/bench/jobs"


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

    def withdraw(self, job_id: str) -> dict[str, Any]:
        return self._dict(self.call("POST", f"{job_path(job_id)}/withdraw"))

    def delete(self, job_id: str, confirm: str) -> dict[str, Any]:
        return self._dict(self.call("DELETE", job_path(job_id), {"confirm": confirm}))

    @staticmethod
    def _dict(value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}


def job_path(job_id: str) -> str:
    return f"{JOBS_PATH}/{quote(job_id, safe='')}"
