"""`hbench bench publish` waits while the service regrades the job, and no longer."""

from __future__ import annotations

import httpx
import pytest

from hbench.bench import Bench
from hbench.errors import HbenchError

PENDING = {
    "detail": "the service is still grading this job's recorded outputs again (regrade-pending)",
    "code": "regrade-pending",
    "errors": [{"code": "regrade-pending", "message": "still grading", "path": None}],
}
DONE = {"id": "j1", "board": "hbench-demo", "owner": "alice", "entry": "oracle-a1b2c3"}


def _service(pending_answers: int) -> tuple[Bench, list[str]]:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        if len(seen) <= pending_answers:
            return httpx.Response(409, json=PENDING)
        return httpx.Response(200, json=DONE)

    return Bench("http://hbench.test", transport=httpx.MockTransport(answer)), seen


def test_publish_waits_out_the_regrade_then_publishes() -> None:
    bench, seen = _service(pending_answers=3)
    pauses: list[float] = []
    told: list[bool] = []
    done = bench.publish_when_regraded(
        "j1", wait=60, waiting=lambda: told.append(True), sleep=pauses.append
    )
    assert done == DONE
    assert seen == ["/api/bench/jobs/j1/publish"] * 4
    assert pauses == [1.0, 2.0, 4.0]
    assert told == [True], "the person is told once that it waits"


def test_publish_gives_up_at_its_deadline_with_the_services_refusal() -> None:
    bench, seen = _service(pending_answers=100)
    with pytest.raises(HbenchError) as refused:
        bench.publish_when_regraded("j1", wait=0, sleep=lambda _: None)
    assert refused.value.code == "regrade-pending"
    assert len(seen) == 1
