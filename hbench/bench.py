"""The client side of Your bench: list, show, publish, withdraw and delete jobs over the
service's `/api/bench/jobs` endpoints.

Refusals come back as the service's envelope; each problem keeps the service's own rule
code (`hbench.issue.refusal`), so the CLI prints the service's detail and its code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from hbench import __version__
from hbench.errors import HbenchError
from hbench.issue import TIMEOUT, refusal

JOBS_PATH = "/api/bench/jobs"


@dataclass(frozen=True)
class Bench:
    """Your bench on one service, with the API token to send, if any (a local service
    signs in its local user for requests from this machine)."""

    url: str
    token: str | None = None
    transport: httpx.BaseTransport | None = None

    @property
    def base(self) -> str:
        return self.url.rstrip("/")

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

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """Send one request; return the JSON answer, or raise the service's refusal."""
        headers = {"user-agent": f"hbench/{__version__}", "accept": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        try:
            with httpx.Client(timeout=TIMEOUT, transport=self.transport) as client:
                answer = client.request(method, self.base + path, json=body, headers=headers)
        except httpx.HTTPError as exc:
            message = f"could not reach {self.base}: {exc.__class__.__name__}: {exc}"
            raise HbenchError("bench-unreachable", message) from None
        try:
            data = answer.json()
        except ValueError:
            data = None
        if answer.is_success and data is not None:
            return data
        error = refusal(self.base + path, answer.status_code, data)
        raise _as_bench(error)

    @staticmethod
    def _dict(value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}


def job_path(job_id: str) -> str:
    return f"{JOBS_PATH}/{quote(job_id, safe='')}"


def _as_bench(error: HbenchError) -> HbenchError:
    # `refusal` names the runs client's codes for what is not the service's own refusal.
    renamed = {"runs-unreachable": "bench-unreachable", "runs-refused": "bench-refused"}
    if not any(p.code in renamed for p in error.problems):
        return error
    return HbenchError.from_problems(
        [
            type(p)(renamed.get(p.code, p.code), p.message, p.path)  # same Problem, our code
            for p in error.problems
        ]
    )
