"""The benchmarks' service with its no-op route (`bench/service.py`, `noop=True`), which
`bench/request_cost.py` and `bench/issue_throughput.py` measure every route against: it
must start as `hbench-app serve` does and answer the no-op."""

from __future__ import annotations

from pathlib import Path

import httpx
from service import NOOP_PATH, running_service


def test_the_service_with_its_no_op_route_starts_and_answers_it(tmp_path: Path) -> None:
    with running_service(tmp_path / "state", noop=True) as service:
        noop = httpx.get(f"{service.url}{NOOP_PATH}", timeout=30)
        health = httpx.get(f"{service.url}/api/health", timeout=30)
    assert noop.status_code == 200 and noop.json() == {"status": "ok"}
    assert health.status_code == 200
